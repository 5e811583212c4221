#!/usr/bin/env bash
# tools/slurm on a real Slurm: starts a single-node cluster (munged,
# slurmctld, slurmd in the foreground, on free loopback ports, everything
# under a fresh temporary folder), submits a sweep as a job array of three
# shards plus the dependent merge job, waits by polling squeue, and expects
# the merged output byte for byte equal to the unsharded sweep. Stops every
# daemon it started, by PID.
#
# Skipped, saying why, only where Slurm cannot start here (not installed,
# not root, a daemon dies at start-up); VIOSIM_REQUIRE_SLURM=1 turns the skip
# into a failure.
set -uo pipefail
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
here=$PWD
viosim=$here/cli/viosim
scenario=$here/scenarios/lockbench.textproto
sweep=(sweep "$scenario" --over workload.lockbench.threads=2,3,4,6 --set run.duration=20ms --set run.warmup=1ms)

skip() {
  echo "SKIPPED: Slurm cannot start here: $*"
  if [ "${VIOSIM_REQUIRE_SLURM:-0}" = 1 ]; then exit 1; fi
  exit 0
}
fail() {
  echo "FAIL: $*"
  for f in "$work"/log/*.log "$work"/parts/*.log "$work"/munge/munged.log; do
    [ -f "$f" ] && { echo "--- $f"; tail -n 20 "$f"; }
  done
  exit 1
}

for tool in munged slurmctld slurmd sbatch squeue sinfo; do
  command -v "$tool" >/dev/null || skip "'$tool' is not installed (tools/setup.sh installs slurmctld slurmd slurm-client munge)"
done
[ "$(id -u)" = 0 ] || skip "the daemons run as root here and this test runs as uid $(id -u)"

# Short paths: the munge socket path must fit a Unix socket's 108 bytes.
work=$(mktemp -d /tmp/viosim-slurm.XXXXXX) || skip "no temporary folder"
pids=()
cleanup() {
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill "${pids[i]}" 2>/dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

# Two free loopback ports (the cluster must not meet another test's).
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
base=$((20000 + $$ % 20000))
while ! port_free "$base" || ! port_free $((base + 1)); do base=$((base + 2)); done
ctld_port=$base slurmd_port=$((base + 1))

mkdir -p "$work"/{munge,state,spool,log,parts}
chmod 0711 "$work" "$work/munge"  # munged refuses a socket path others cannot traverse
head -c 1024 /dev/urandom > "$work/munge/munge.key"
chmod 0400 "$work/munge/munge.key"
cat > "$work/slurm.conf" <<CONF
ClusterName=viosimtest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$work/munge/munge.sock
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
NodeName=localhost CPUs=2 State=UNKNOWN
PartitionName=viosimtest Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$work/slurm.conf

munged -F --socket="$work/munge/munge.sock" --key-file="$work/munge/munge.key" \
  --log-file="$work/munge/munged.log" --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/munged.seed" \
  >"$work/log/munged.out" 2>&1 &
pids+=($!)
slurmctld -D -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/log/slurmd.out" 2>&1 &
pids+=($!)

started=$SECONDS
until [ "$(sinfo -h -n localhost -o %t 2>/dev/null)" = idle ]; do
  for pid in "${pids[@]}"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      cat "$work"/log/*.out "$work"/log/*.log "$work/munge/munged.log" 2>/dev/null | tail -n 20
      skip "a daemon (PID $pid) stopped at start-up; its log is above"
    fi
  done
  [ $((SECONDS - started)) -lt 30 ] || skip "the node did not become idle within 30 s"
  sleep 0.2
done
echo "slurm: node idle after $((SECONDS - started)) s (ports $ctld_port, $slurmd_port)"

"$viosim" "${sweep[@]}" > "$work/whole.txt" || fail "the unsharded sweep failed"

export VIOSIM=$viosim
submitted=$SECONDS
merge_job=$("$here/tools/slurm/submit.sh" 3 "$work/parts" "$work/merged.txt" -- "${sweep[@]}") ||
  fail "submit.sh failed"
# Poll (sbatch --wait backs off to seconds between checks).
while [ -n "$(squeue -h -o %i 2>/dev/null)" ]; do
  [ $((SECONDS - submitted)) -lt 120 ] || fail "jobs still queued after 120 s: $(squeue -h)"
  sleep 0.25
done
echo "slurm: 3 shards and the merge (job $merge_job) done after $((SECONDS - submitted)) s"
[ -f "$work/merged.txt" ] || fail "the merge job wrote no output"
cmp "$work/whole.txt" "$work/merged.txt" || fail "merged output differs from the unsharded sweep"
for k in 0 1 2; do [ -s "$work/parts/part-$k.jsonl" ] || fail "part $k missing"; done
echo "PASS: merged Slurm shards equal the unsharded sweep byte for byte"
