#!/usr/bin/env bash
# Installs the Debian 12 packages viosim's build needs. Idempotent: packages
# already installed are left alone, and nothing is fetched but Debian's own
# packages. Run as root, or as a user who may use sudo.
set -euo pipefail

packages=(
  g++                # C++20 compiler (GCC 12)
  bazel-bootstrap    # Bazel 4.2.3, used offline through third_party/ shims
  default-jdk-headless
  protobuf-compiler libprotobuf-dev
  libabsl-dev
  libgtest-dev libgmock-dev
  libbenchmark-dev
  libcli11-dev
  python3-matplotlib # charts of `viosim reproduce|sweep|explain --report DIR`
  fio                # fio's own log tools read viosim's logs in tests (tests/fio)
  gnuplot-nox        # draws for fio2gnuplot and fio_generate_plots (tests/fio:logs_test)
  python3-pandas     # fiologparser_hist.py needs it, and numpy (tests/fio:logs_test)
  python3-six        # fio2gnuplot imports it (tests/fio:logs_test)
  chromium           # headless browser the teaching page's test loads it in
)
# The batch systems the sharding tests start (tests/tools/), installed without
# their recommends (Slurm would bring 42 packages instead of 8).
batch_packages=(slurmctld slurmd slurm-client munge parallel)

missing=()
for p in "${packages[@]}" "${batch_packages[@]}"; do
  if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    echo "setup: $p is installed"
  else
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: nothing to install"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null; then
    sudo="sudo"
  else
    echo "setup: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi

echo "setup: apt-get update"
$sudo apt-get update -q
batch_missing=()
for p in "${batch_packages[@]}"; do
  if [[ " ${missing[*]} " == *" $p "* ]]; then batch_missing+=("$p"); fi
done
if [ ${#batch_missing[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${batch_missing[@]}"
fi
echo "setup: apt-get install ${missing[*]}"
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"
echo "setup: done"
