#!/bin/sh
# Submits a viosim command as a Slurm job array of N shards and a merge job
# that starts once every shard has succeeded; prints the merge job's id.
#
#   tools/slurm/submit.sh N PARTS_DIR OUTPUT -- sweep scenarios/x.textproto --over FIELD=V1,V2,...
#
# PARTS_DIR and OUTPUT must be on a filesystem every node sees; the jobs run
# in the current folder. VIOSIM names the binary (default: viosim on PATH);
# VIOSIM_FORMAT the merged output's format (default text). Extra sbatch
# options (partition, account, time) go in SBATCH_* environment variables.
set -eu
if [ $# -lt 5 ] || [ "$4" != "--" ]; then
  echo "usage: $0 N PARTS_DIR OUTPUT -- VIOSIM_COMMAND ARGS..." >&2
  exit 2
fi
n=$1 parts=$2 output=$3
shift 4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$parts"
rm -f "$parts"/part-*.jsonl
export VIOSIM_PARTS="$parts" VIOSIM_OUTPUT="$output"
array=$(sbatch --parsable --array="0-$((n - 1))" --output="$parts/shard-%a.log" "$here/shard.sbatch" "$@")
array=${array%%;*}  # "ID;CLUSTER" on a federation
merge=$(sbatch --parsable --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  --output="$parts/merge.log" "$here/merge.sbatch")
echo "${merge%%;*}"
