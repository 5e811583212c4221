#!/usr/bin/env bash
# The structure rules of the source tree, each a list of offenders that
# must be empty:
#   - no source file in sim/, models/, scenarios/, analysis/ or cli/ is over
#     900 lines;
#   - the guest's virtio drivers reach the device only through the virtio
#     transport: nothing under models/virtio/guest includes models/qemu/;
#   - no bare abort() outside sim/check.h (an invariant says what it is
#     with VIOSIM_CHECK; bad input gets a Status).
set -u
readme=$(find -L "${TEST_SRCDIR:-.}" -name README.md -path '*_main/README.md' | head -1)
[ -n "$readme" ] || readme=$(find -L "${TEST_SRCDIR:-.}" -name README.md | head -1)
root=$(dirname "$(readlink -f "$readme")")
cd "$root" || { echo "cannot find the checkout"; exit 1; }
fail=0

long=$(find sim models scenarios analysis cli \( -name '*.cc' -o -name '*.h' \) -print0 |
  xargs -0 wc -l | awk '$2 != "total" && $1 > 900 { print $2 " (" $1 " lines)" }')
if [ -n "$long" ]; then
  echo "source files over 900 lines:"; echo "$long"; fail=1
fi

layered=$(grep -rln '#include "models/qemu/' models/virtio/guest 2>/dev/null)
if [ -n "$layered" ]; then
  echo "the guest driver includes the device (use the transport, models/virtio/transport.h):"; echo "$layered"; fail=1
fi

aborts=$(grep -rn 'abort()' --include='*.cc' --include='*.h' sim models scenarios analysis cli |
  grep -v '^sim/check.h:' | grep -v '//.*abort()')
if [ -n "$aborts" ]; then
  echo "bare abort() (use VIOSIM_CHECK with the invariant, or a Status for input):"; echo "$aborts"; fail=1
fi

[ $fail -eq 0 ] && echo "structure rules hold"
exit $fail
