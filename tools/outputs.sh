#!/usr/bin/env bash
# Writes what viosim prints for every scenario and fio example into DIR,
# one file per command, so that a change meant to keep behaviour can be
# checked byte for byte:
#
#   bash tools/outputs.sh /tmp/before      # at the base commit
#   ... change, rebuild ...
#   bash tools/outputs.sh /tmp/after
#   diff -r /tmp/before /tmp/after         # no output: byte-identical
#
# It runs the built binary (bazel-bin/cli/viosim, or $VIOSIM): reproduce of
# every table in text, JSON and CSV; run of every scenario's variants in
# text and JSON; list --params of every scenario; and viosim fio on every
# job file under scenarios/fio and tests/fio/testdata (accepted ones in
# normal and JSON output, refused ones with their message), each file with
# its exit status appended.
set -u
out=${1:?usage: tools/outputs.sh DIR}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${VIOSIM:-$here/bazel-bin/cli/viosim}
[ -x "$bin" ] || { echo "no viosim binary at $bin: bazel build //cli:viosim" >&2; exit 2; }
mkdir -p "$out"
cd "$here"

# Runs viosim with the rest of the arguments, stdout and stderr and the exit
# status into $out/$1.
capture() {
  local name=$1
  shift
  "$bin" "$@" >"$out/$name" 2>&1
  echo "exit $?" >>"$out/$name"
}

for fmt in text json csv; do capture "reproduce.$fmt" reproduce --jobs 2 --format "$fmt"; done
for s in scenarios/*.textproto; do
  b=$(basename "$s" .textproto)
  capture "run.$b.text" run "$s" --jobs 2
  capture "run.$b.json" run "$s" --jobs 2 --format json
  capture "list.$b" list --params "$s"
done
# The jobs' log files (write_bw_log and the like) go into $out/logs, not
# into the checkout.
mkdir -p "$out/logs"
for f in scenarios/fio/*.fio tests/fio/testdata/*.fio; do
  b=$(basename "$f" .fio)
  case "$b" in include_*) continue ;; esac
  capture "fio.$b.normal" fio "$f" --log-dir "$out/logs"
  case "$b" in reject_*) continue ;; esac
  capture "fio.$b.json" fio "$f" --output-format json --log-dir "$out/logs"
done
echo "$(ls "$out" | wc -l) outputs in $out"
