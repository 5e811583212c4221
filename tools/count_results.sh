#!/usr/bin/env bash
# Counts the test cases in a Bazel test-log tree: prints "PASSED FAILED
# SKIPPED". Each test target leaves a JUnit XML file (GoogleTest's own, or
# Bazel's for a shell test or a target that crashed); the <testsuite>
# elements' counts are summed. A case that was skipped (GTEST_SKIP) or
# disabled is counted neither passed nor failed.
#   tools/count_results.sh "$(bazel info bazel-testlogs)"
set -uo pipefail
logs="${1:-}"
if [ -z "$logs" ] || [ ! -d "$logs" ]; then
  echo "0 0 0"
  exit 0
fi
find -L "$logs" -name test.xml -print0 | xargs -0 -r cat |
  grep -o '<testsuite [^>]*>' |
  awk '
    function attr(s, name) {
      if (match(s, " " name "=[\"\x27][0-9]+")) return substr(s, RSTART + length(name) + 3, RLENGTH - length(name) - 3) + 0
      return 0
    }
    {
      t += attr($0, "tests"); f += attr($0, "failures") + attr($0, "errors")
      s += attr($0, "skipped") + attr($0, "disabled")
    }
    END { printf "%d %d %d\n", t - f - s, f, s }'
