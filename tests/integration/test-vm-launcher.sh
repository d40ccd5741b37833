#!/bin/bash
# SPDX-License-Identifier: MIT
# gpu-mediator-vm-gpu, the back-end libvirt starts per VM (mediator/launcher/),
# on its own: without mediatord, against vm-handoff-peer.py, which plays
# libvirt (a socket pair, one end as --fd), QEMU (the other end) and a
# fake mediatord (the hand-off of common/vm_handoff.h). It tells libvirt
# its capabilities as JSON; refuses bad command lines and descriptors that
# are no VM's socket, saying why; hands the VM's socket over and stays until
# SIGTERM when mediatord takes the VM; and exits 1, saying why, when
# mediatord refuses it, closes without an answer, does not answer in time,
# or does not listen.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_cmd python3 python3
[ -x "$VM_GPU" ] || fail "not built: $VM_GPU"
PEER=$TESTS_SRCDIR/integration/vm-handoff-peer.py
VMS_SOCK=$TMP/vms.sock

# It tells libvirt it is a GPU back-end with virgl and nothing else (not
# render-node, for which libvirt would insist on a host render node).
"$VM_GPU" --print-capabilities >"$TMP/caps.json" || fail "--print-capabilities failed"
python3 -c '
import json, sys
caps = json.load(open(sys.argv[1]))
assert caps["type"] == "gpu", caps
assert caps["features"] == ["virgl"], caps
' "$TMP/caps.json" 2>"$TMP/caps.log" ||
  fail "--print-capabilities: not {type gpu, features [virgl]}: $(cat "$TMP/caps.json" "$TMP/caps.log")"
log "--print-capabilities: $(cat "$TMP/caps.json")"

# refuses STATUS TEXT ARG...: the launcher run with ARG... exits with STATUS
# and says TEXT on stderr.
refuses() {
  local status=$1 text=$2 rc
  shift 2
  "$VM_GPU" "$@" >"$TMP/refused.log" 2>&1 </dev/null && rc=0 || rc=$?
  [ "$rc" = "$status" ] || fail "$*: exit status $rc, not $status: $(cat "$TMP/refused.log")"
  grep -qF -- "$text" "$TMP/refused.log" ||
    fail "$*: no '$text' in: $(cat "$TMP/refused.log")"
}
refuses 2 "--fd=N is required"
refuses 2 "--fd=abc: not a descriptor number" --fd=abc
refuses 2 "unknown option --bogus" --fd=0 --bogus
refuses 2 "option --fd needs a value" --fd
refuses 2 "--timeout-s=0: not a number of seconds" --fd=0 --timeout-s=0
refuses 1 "fd 999 (--fd) is not open" --fd=999 999>&-
refuses 1 "fd 3 (--fd) is not a socket" --fd=3 3<"$PEER"
log "bad command lines and descriptors that are no VM's socket: refused, saying why"

# peer ARG...: vm-handoff-peer.py, the launcher's output in $TMP/launcher.log.
peer() {
  rm -f "$VMS_SOCK"
  python3 "$PEER" --log "$TMP/launcher.log" "$@" 2>"$TMP/peer.log" ||
    fail "$(cat "$TMP/peer.log"); the launcher said: $(cat "$TMP/launcher.log")"
}
# said TEXT: the launcher's last run said TEXT.
said() {
  grep -qF -- "$1" "$TMP/launcher.log" || fail "the launcher did not say '$1': $(cat "$TMP/launcher.log")"
}

# mediatord takes the VM: the launcher hands over the VM's socket with the
# virgl flag, ignores the render node, holds nothing more, and stays until
# libvirt stops it with SIGTERM.
peer --serve "$VMS_SOCK" --answer "ok cluster" --expect-flags 1 --stays -- \
  "$VM_GPU" --socket="$VMS_SOCK" --virgl --render-node=/dev/dri/renderD128
said "serving this VM's GPU through mediatord domain cluster"
said "--render-node=/dev/dri/renderD128 ignored"
log "taken: handed over (virgl), stayed, exited 0 on SIGTERM"

# mediatord refuses the VM ("--fd N" form, no virgl): exit 1 with mediatord's text.
peer --serve "$VMS_SOCK" --answer "error: VM x is in no domain's vms" --expect-flags 0 --exit 1 -- \
  "$VM_GPU" --socket "$VMS_SOCK" --fd "{fd}"
said "mediatord refused this VM: VM x is in no domain's vms"
log "refused: exit 1 with mediatord's reason, QEMU's end closed"

peer --serve "$VMS_SOCK" --close --exit 1 -- "$VM_GPU" --socket="$VMS_SOCK"
said "mediatord closed the connection without an answer"

t0=$SECONDS
peer --serve "$VMS_SOCK" --silent --exit 1 -- "$VM_GPU" --socket="$VMS_SOCK" --timeout-s=1
said "no answer from mediatord within 1 s"
[ $((SECONDS - t0)) -le 5 ] || fail "the launcher took $((SECONDS - t0)) s to give up after 1 s"

peer --exit 1 -- "$VM_GPU" --socket="$VMS_SOCK"
said "cannot connect to mediatord's socket $VMS_SOCK"
log "no answer, none in time, nobody listening: exit 1, saying which"
log "PASS"
