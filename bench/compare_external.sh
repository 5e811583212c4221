#!/usr/bin/env bash
# Optional, outside the tests and CI (nothing calls it): the lock benchmark's
# speed in two general-purpose discrete-event simulators, beside viosim's
# engine and its hand-written reference loop. The same model everywhere
# (N threads, think Exp(10us), one FIFO lock, hold Exp(2us), zero hand-off),
# in acquisitions per wall-clock second of simulation, for N=4 and N=64.
#
# Needs:
#   - Debian's python3-simpy (SimPy 2.3, `apt-get install python3-simpy`),
#     run by Debian's /usr/bin/python3: bench/lockbench_simpy.py. Without
#     it the script says so and exits 0.
#   - Optionally Debian's libsystemc-dev (SystemC 2.3) and g++:
#     bench/lockbench_systemc.cc, compiled here. Without it the SystemC
#     column is left out.
#   - Bazel, for `bazel run //bench:lockbench_benchmark` (engine and
#     reference).
#
#   bench/compare_external.sh [SIMPY_ACQUISITIONS]   # default 200000
#
# SystemC runs to 2,000,000 acquisitions, like the engine; SimPy, about a
# hundred times slower, to 200,000 unless told otherwise. Each external run
# also prints its simulated throughput and mean wait, to show it is the same
# queue (exact: 0.3008/us and 1.297us for N=4, 0.5/us and 116us for N=64).
set -euo pipefail
cd "$(dirname "$0")/.."

simpy_acq="${1:-200000}"
systemc_acq=2000000

if ! /usr/bin/python3 -c 'import SimPy.Simulation' 2>/dev/null; then
  echo "compare_external: needs Debian's python3-simpy (apt-get install python3-simpy)," \
    "which is not installed; nothing compared."
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

systemc=""
if [ -f /usr/include/systemc.h ] && command -v g++ >/dev/null; then
  # Debian's libsystemc is built for C++17, and its headers check that.
  g++ -O3 -std=c++17 bench/lockbench_systemc.cc -lsystemc -o "$tmp/lockbench_systemc"
  systemc="$tmp/lockbench_systemc"
else
  echo "compare_external: no SystemC (apt-get install libsystemc-dev); its column is left out."
fi

echo "compare_external: engine and reference (bazel run //bench:lockbench_benchmark)..."
bazel run //bench:lockbench_benchmark 2>/dev/null >"$tmp/bench.txt"
# The program's closing table: N, engine, reference (millions per second).
awk '/^Acquisitions per wall-clock second/ { t = 1; next }
     t && $1 ~ /^[0-9]+$/ { sub(/M$/, "", $2); sub(/M$/, "", $3); print $1, $2, $3 }' \
  "$tmp/bench.txt" >"$tmp/viosim.txt"

# One line per run: N acquisitions wall_s acquisitions_per_us wait_us.
for n in 4 64; do
  echo "compare_external: SimPy, N=$n, $simpy_acq acquisitions..."
  /usr/bin/python3 bench/lockbench_simpy.py "$n" "$simpy_acq" >>"$tmp/simpy.txt"
  if [ -n "$systemc" ]; then
    echo "compare_external: SystemC, N=$n, $systemc_acq acquisitions..."
    SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1 "$systemc" "$n" "$systemc_acq" >>"$tmp/systemc.txt"
  fi
done
[ -n "$systemc" ] || : >"$tmp/systemc.txt"

echo
echo "Simulated, per run: throughput per us and mean wait per acquisition in us"
awk '{ printf "  SimPy   N=%-3s %s acquisitions  %s/us  wait %sus\n", $1, $2, $4, $5 }' "$tmp/simpy.txt"
awk '{ printf "  SystemC N=%-3s %s acquisitions  %s/us  wait %sus\n", $1, $2, $4, $5 }' "$tmp/systemc.txt"
echo
echo "Acquisitions per wall-clock second, millions:"
awk -v have_systemc="${systemc:+1}" '
  FILENAME ~ /viosim/ { engine[$1] = $2; reference[$1] = $3; next }
  FILENAME ~ /simpy/ { simpy[$1] = $2 / $3 / 1e6; next }
  FILENAME ~ /systemc/ { systemc[$1] = $2 / $3 / 1e6; next }
  END {
    printf "%4s %10s %10s %10s", "N", "engine", "reference", "SimPy"
    if (have_systemc) printf " %10s", "SystemC"
    printf " %14s", "engine/SimPy"
    if (have_systemc) printf " %16s", "engine/SystemC"
    printf "\n"
    for (n = 4; n <= 64; n *= 16) {
      printf "%4d %10.2f %10.2f %10.4f", n, engine[n], reference[n], simpy[n]
      if (have_systemc) printf " %10.3f", systemc[n]
      printf " %14.0f", engine[n] / simpy[n]
      if (have_systemc) printf " %16.1f", engine[n] / systemc[n]
      printf "\n"
    }
  }' "$tmp/viosim.txt" "$tmp/simpy.txt" "$tmp/systemc.txt"
