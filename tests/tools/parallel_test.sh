#!/usr/bin/env bash
# The GNU parallel one-liner of docs/cli.md: four shards of a sweep run by
# `parallel`, joined by `viosim merge`, equal the unsharded sweep byte for
# byte. Skipped, saying why, only where GNU parallel is not installed.
set -uo pipefail
export PATH=/usr/bin:/bin
command -v parallel >/dev/null || {
  echo "SKIPPED: GNU parallel is not installed (tools/setup.sh installs it)"
  exit 0
}
viosim=$PWD/cli/viosim
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/parallel.XXXXXX")
trap 'rm -rf "$work"' EXIT
export PARALLEL_HOME=$work/.parallel  # else parallel writes ~/.parallel
mkdir -p "$work/parts"
args=(sweep scenarios/lockbench.textproto --over workload.lockbench.threads=2,3,4,6 --set run.duration=20ms
  --set run.warmup=1ms)
"$viosim" "${args[@]}" > "$work/whole.txt" || { echo "FAIL: unsharded sweep"; exit 1; }

# The one-liner, as documented (with the binary's path and the parts' folder).
seq 0 3 | parallel --will-cite --halt now,fail=1 -q "$viosim" "${args[@]}" --shard {}/4 --format jsonl \
  -o "$work/parts/part-{}.jsonl" && "$viosim" merge "$work"/parts/part-*.jsonl > "$work/merged.txt" ||
  { echo "FAIL: parallel or merge failed"; exit 1; }

cmp "$work/whole.txt" "$work/merged.txt" || { echo "FAIL: merged output differs"; exit 1; }
echo "PASS: merged parallel shards equal the unsharded sweep byte for byte"
