#!/usr/bin/env bash
# tools/count_results.sh, the count behind .ci/run's "N passed, N failed"
# line, on a test-log tree of each kind of result: GoogleTest's XML with a
# failure and a skip, Bazel's own XML for a shell test, an empty tree.
set -euo pipefail
count="$TEST_SRCDIR/$TEST_WORKSPACE/tools/count_results.sh"
logs="$TEST_TMPDIR/testlogs"
mkdir -p "$logs/a/a_test" "$logs/b/b_test" "$logs/c/c_test"
cat > "$logs/a/a_test/test.xml" <<'XML'
<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="5" failures="1" disabled="0" errors="0" time="0" name="AllTests">
  <testsuite name="A" tests="3" failures="1" disabled="0" skipped="1" errors="0" time="0">
  </testsuite>
  <testsuite name="B" tests="2" failures="0" disabled="1" skipped="0" errors="0" time="0">
  </testsuite>
</testsuites>
XML
cat > "$logs/b/b_test/test.xml" <<'XML'
<?xml version='1.0' encoding='UTF-8'?>
<testsuites>
<testsuite name='b/b_test' tests='1' failures='0' errors='1'>
<testcase name='b/b_test' status='run' duration='1' time='1'><error message='exited with error code 1'></error></testcase>
</testsuite>
</testsuites>
XML
cat > "$logs/c/c_test/test.xml" <<'XML'
<?xml version='1.0' encoding='UTF-8'?>
<testsuites>
<testsuite name='c/c_test' tests='1' failures='0' errors='0'>
<testcase name='c/c_test' status='run' duration='1' time='1'></testcase>
</testsuite>
</testsuites>
XML
got="$(bash "$count" "$logs")"
# A: 3 cases, 1 failed, 1 skipped -> 1 passed; B: 2, 1 disabled -> 1 passed;
# b: Bazel's error -> 1 failed; c: 1 passed.
if [ "$got" != "3 2 2" ]; then
  echo "counted '$got', expected '3 2 2'" >&2
  exit 1
fi
got="$(bash "$count" "$TEST_TMPDIR/none")"
[ "$got" = "0 0 0" ] || { echo "missing tree counted '$got'" >&2; exit 1; }
got="$(bash "$count" "")"
[ "$got" = "0 0 0" ] || { echo "no tree counted '$got'" >&2; exit 1; }
echo "ok"
