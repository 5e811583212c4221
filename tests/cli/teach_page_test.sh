#!/bin/bash
# `viosim teach` in a real browser: headless Chromium loads each page from
# disk (file://, nothing else to fetch), its screenshot at 1280 px must be
# drawn (tests/cli/teach_page_check.py) and its DOM must hold one timeline
# per variant with one lane per CPU shown. The same inputs give the same
# bytes, and bad input exits 2 leaving no page behind.
set -u
viosim=$1
check=$2
cd "${TEST_SRCDIR}/${TEST_WORKSPACE}" || exit 1
export HOME="${TEST_TMPDIR}"
out="${TEST_TMPDIR}"
fail=0

chromium_bin=$(command -v chromium || command -v chromium-browser || true)
if [ -z "${chromium_bin}" ]; then
  echo "SKIPPED: chromium is not installed (tools/setup.sh installs Debian's chromium); the page was not checked in a browser"
  exit 0
fi

browse() {  # browse PAGE WHAT OUT
  local profile
  profile=$(mktemp -d "${TEST_TMPDIR}/profile.XXXXXX")
  timeout 120 "${chromium_bin}" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="${profile}" "$2" --window-size=1280,1600 "file://$1" > "$3" 2> "${profile}.stderr"
  local rc=$?
  rm -rf "${profile}"
  return $rc
}

page_case() {  # page_case NAME SCENARIO VARIANTS CPUS_TOTAL ARGS...
  local name=$1 scenario=$2 variants=$3 cpus=$4
  shift 4
  local page="${out}/${name}.html"
  local args=()
  for v in ${variants//,/ }; do args+=(--variant "$v"); done
  if ! "${viosim}" teach "scenarios/${scenario}.textproto" "${args[@]}" "$@" -o "${page}"; then
    echo "FAIL ${name}: viosim teach exited $?"; fail=1; return
  fi
  "${viosim}" teach "scenarios/${scenario}.textproto" "${args[@]}" "$@" --jobs 2 -o "${page}.again"
  if ! cmp -s "${page}" "${page}.again"; then echo "FAIL ${name}: two runs gave different pages"; fail=1; fi
  if grep -Eq '(src|href)="(https?:)?//|@import|url\(' "${page}"; then
    echo "FAIL ${name}: the page refers to something outside itself"; fail=1
  fi
  local size
  size=$(wc -c < "${page}")
  if [ "${size}" -gt 1000000 ]; then echo "FAIL ${name}: ${size} bytes, over 1 MB"; fail=1; fi
  if ! browse "${page}" "--screenshot=${out}/${name}.png" /dev/null; then
    echo "FAIL ${name}: chromium could not take a screenshot"; fail=1; return
  fi
  if ! browse "${page}" --dump-dom "${out}/${name}.dom"; then
    echo "FAIL ${name}: chromium could not dump the DOM"; fail=1; return
  fi
  if ! python3 "${check}" "${out}/${name}.png" "${out}/${name}.dom" "${variants}" "${cpus}"; then
    echo "FAIL ${name}"; fail=1; return
  fi
  echo "ok ${name} (${size} bytes)"
}

page_case kick-lock virtio_blk_kick_lock before,after 10
# Who waits for what: QEMU's BQL drawn (its holds and its waiters in both
# variants), the host lanes named by the thread pinned there, idle drawn
# apart from every state, and vq_lock taken in the drawn window of each.
kl="${out}/kick-lock.dom"
if [ "$(grep -o 'class="queue" data-lock="qemu_global_mutex"' "${kl}" | wc -l)" -ne 2 ]; then
  echo "FAIL kick-lock: no BQL waiters strip in each variant"; fail=1
fi
for label in qemu/main qemu/vcpu0 'class="idle"'; do
  if ! grep -q "${label}" "${kl}"; then echo "FAIL kick-lock: the page lacks ${label}"; fail=1; fi
done
page_case blk-poll virtio_blk_poll randread-4k-hipri0,randread-4k-hipri1 4
page_case vhost-wake vhost_work_queue streams64-original,streams64-modified 8
page_case raid10 raid10_unplug before,after 128 --set run.warmup=8ms --set run.duration=2ms --set run.batches=2

# Bad input: exit 2, a message naming what is wrong, and no page.
bad() {  # bad WHAT-THE-MESSAGE-NAMES ARGS...
  local expect=$1
  shift
  local page="${out}/bad.html"
  rm -f "${page}"
  "${viosim}" teach "$@" -o "${page}" 2> "${out}/bad.stderr"
  local rc=$?
  if [ $rc -ne 2 ]; then echo "FAIL bad input '$*': exit ${rc}, expected 2"; fail=1; fi
  if [ -e "${page}" ]; then echo "FAIL bad input '$*': a page was written"; fail=1; fi
  if ! grep -q -- "${expect}" "${out}/bad.stderr"; then
    echo "FAIL bad input '$*': the message does not name ${expect}: $(cat "${out}/bad.stderr")"; fail=1
  fi
  if ls "${out}" | grep -q '\.tmp\.'; then echo "FAIL bad input '$*': a temporary file was left"; fail=1; fi
}
bad "no-such-variant" scenarios/virtio_blk_kick_lock.textproto --variant before --variant no-such-variant
bad "two variants" scenarios/virtio_blk_kick_lock.textproto --variant before
bad "--window" scenarios/virtio_blk_kick_lock.textproto --window 0us
bad "--window" scenarios/virtio_blk_kick_lock.textproto --window 10 
bad "--window" scenarios/virtio_blk_kick_lock.textproto --window 1s
bad "missing.textproto" scenarios/missing.textproto
rm -f "${out}/x.html"
"${viosim}" teach scenarios/virtio_blk_kick_lock.textproto -o "${out}/no/such/dir/x.html" 2> "${out}/bad.stderr"
if [ $? -ne 2 ]; then echo "FAIL: a page into a missing directory did not exit 2"; fail=1; fi

exit ${fail}
