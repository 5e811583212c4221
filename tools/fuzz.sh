#!/usr/bin/env bash
# Builds one libFuzzer target with clang (--config=fuzz) and runs it on a
# scratch copy of its seed corpus, so the project's corpus only changes by
# hand. A crash leaves its input in fuzz/crashes/TARGET/, where
# tests/fuzz's replay test runs it from then on.
#
#   tools/fuzz.sh scenario|run|set|fio|merge [libFuzzer flags]
#   tools/fuzz.sh fio -runs=10000000
#
# The fuzz build has its own Bazel output base, so switching compilers does
# not throw away the main build (VIOSIM_FUZZ_OUTPUT_BASE overrides where).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:?usage: tools/fuzz.sh scenario|run|set|fio|merge [libFuzzer flags]}"
shift
case "$target" in scenario | run | set | fio | merge) ;; *) echo "fuzz: unknown target '$target'" >&2; exit 2 ;; esac
# `run` takes scenario files too: it starts from the scenario corpus.
seeds="$target"
[[ "$target" == run ]] && seeds=scenario
base="${VIOSIM_FUZZ_OUTPUT_BASE:-$HOME/.cache/viosim-fuzz}"
bazel --output_base="$base" build --config=fuzz --symlink_prefix=/ "//fuzz:${target}_fuzzer" >&2
bin="$(bazel --output_base="$base" info --config=fuzz bazel-bin 2>/dev/null)/fuzz/${target}_fuzzer"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp "fuzz/corpus/$seeds/"* "$work/"
mkdir -p "fuzz/crashes/$target"
# -rss_limit_mb: an input that makes viosim hold more than this is a bug too.
"$bin" -artifact_prefix="fuzz/crashes/$target/" -rss_limit_mb=2048 -timeout=10 -max_len=65536 \
  -print_final_stats=1 "$@" "$work"
