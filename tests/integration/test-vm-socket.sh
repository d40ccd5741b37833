#!/bin/bash
# SPDX-License-Identifier: MIT
# libvirt's own vhost-user GPU path without libvirt (test-libvirt-vms runs it
# with libvirt): tests/integration/vm-handoff.py plays libvirt, starting the
# back-end gpu-mediator-vm-gpu with one end of a socket pair as --fd=N and
# writing its pid into a pid file named as libvirt names it; mediatord's
# vm_socket takes the VM's connection and serves it in the domain whose
# `vms` lists the VM, found from that pid file, not from the back-end's
# word.
#  - a listed VM (and one whose name is longer than libvirt's files keep)
#    is served: vhost-user-frontend's whole scenario passes through the
#    handed-over connection, show-budgets counts the VM in its domain;
#  - refused, each with the reason on the back-end's stderr and in the log,
#    mediatord and the served VM unharmed: a VM in no vms list; a process
#    with no pid file of its own (another VM's QEMU, say); a pid file of
#    the cluster VM holding another pid (a process passing for it); a
#    second VM for a domain that serves one;
#  - bad requests on vm_socket: bytes that are no request, a request
#    without a descriptor, one with a descriptor that is no socket, a wrong
#    version, connections that send nothing (closed after 2 s), more of
#    them than may wait: each answered or closed, and a VM is served after;
#  - a restart (SIGKILL): the successor takes vm_socket and the VM over.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
[ -x "$VHOST_USER_FRONTEND" ] || fail "not built: $VHOST_USER_FRONTEND"
LAUNCHER=$VM_GPU
[ -x "$LAUNCHER" ] || fail "not built: $LAUNCHER"
PYTHON=/usr/bin/python3
require_cmd jq jq

LIBVIRT=$TMP/libvirt-qemu
VMS_SOCK=$TMP/vms.sock
mkdir -p "$LIBVIRT"
CLUSTER_VM=gm-cluster-vm
IVI_VM=gm-infotainment-vm-with-a-long-name
write_config budget 1
sed -i "s|^\[mediator\]\$|&\nvm_socket = $VMS_SOCK\nvm_socket_owner = $(id -un)\nlibvirt_state_dir = $LIBVIRT|" "$CONFIG"
sed -i "s|^vtest_socket = $SOCK_A\$|&\nvms = $CLUSTER_VM|; s|^vtest_socket = $SOCK_B\$|&\nvms = other-vm $IVI_VM|" "$CONFIG"
start_mediatord
[ "$(stat -c %a "$VMS_SOCK")" = 600 ] || fail "vm_socket mode $(stat -c %a "$VMS_SOCK"), not 600"

# handoff PIDFILE PID_IN_FILE MODE: one hand-off (vm-handoff.py), its report.
handoff() {
  timeout -k 5 180 "$PYTHON" "$SRCROOT/tests/integration/vm-handoff.py" "$LAUNCHER" "$VMS_SOCK" \
    "$@" <"${HANDOFF_STDIN:-/dev/null}"
}
# libvirt's pid file name of VM NAME with id ID: its short name keeps 20 characters.
pidfile() { echo "$LIBVIRT/$1-${2:0:20}-video0-vhost-user-gpu.pid"; }

# A listed VM is served: the whole virtio-gpu scenario through the hand-off.
out=$(handoff "$(pidfile 1 $CLUSTER_VM)" self "$VHOST_USER_FRONTEND" scenario 2>"$TMP/h1.err") ||
  fail "vm-handoff.py failed: $(cat "$TMP/h1.err")"
grep -qx "launcher: ok $DOMAIN_A" <<<"$out" || fail "the cluster VM was not served by $DOMAIN_A: $out"
grep -qx "frontend: exit 0" <<<"$out" || fail "the scenario failed through the hand-off: $out $(tail -5 "$TMP/h1.err")"
grep -qx "launcher: stopped 0" <<<"$out" || fail "the launcher did not stop cleanly at SIGTERM: $out"
grep -q "domain $DOMAIN_A: VM $CLUSTER_VM is client" "$MEDIATORD_LOG" ||
  fail "mediatord did not log the cluster VM by name"
log "listed VM: served by $DOMAIN_A, scenario passed ($(grep -c ': ok: ' "$TMP/h1.err" || true) checks)"
wait_field "$DOMAIN_A" clients 0 15

# The cluster VM stays connected while the refusals below are tried.
mkfifo "$TMP/hold"
HANDOFF_STDIN=$TMP/hold handoff "$(pidfile 2 $CLUSTER_VM)" self "$VHOST_USER_FRONTEND" hold \
  >"$TMP/held.out" 2>&1 &
held=$!
gm_track "$held"
exec 9>"$TMP/hold"
wait_field "$DOMAIN_A" clients 1 20

# refused NAME PIDFILE PID_IN_FILE TEXT: the hand-off is refused with TEXT.
refused() {
  local name=$1 out
  shift
  out=$(handoff "$1" "$2" "$VHOST_USER_FRONTEND" none 2>&1) || fail "$name: vm-handoff.py failed: $out"
  grep -q "^launcher: exit 1: .*$3" <<<"$out" || fail "$name: not refused with '$3': $out"
  log "$name: refused ($3)"
}
refused "a VM in no vms list" "$(pidfile 3 not-listed-vm)" self "is in no domain's vms list"
refused "no pid file" - self "is no GPU back-end libvirt started"
sleep 300 9>&- &
other=$!
gm_track "$other"
refused "the cluster's pid file holding another pid" "$(pidfile 4 $CLUSTER_VM)" "$other" \
  "is no GPU back-end libvirt started"
refused "a second VM for the cluster" "$(pidfile 5 $CLUSTER_VM)" self "serves another VM now"
rm -f "$LIBVIRT"/*

# Bad requests straight on vm_socket, each answered or closed.
"$PYTHON" - "$VMS_SOCK" <<'PY' || fail "bad requests on vm_socket"
import os, socket, struct, sys, time
path = sys.argv[1]
MAGIC = struct.unpack("<Q", b"GMVMGPU1")[0]
def ask(payload, fds=(), expect="error: "):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    if fds:
        s.sendmsg([payload], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("%di" % len(fds), *fds))])
    else:
        s.sendall(payload)
    answer = s.recv(256).decode()
    assert answer.startswith(expect), "%r answered %r" % (payload[:16], answer)
    s.close()
    print("  %s -> %s" % (payload[:12], answer.strip()))
a, b = socket.socketpair()
ask(b"hello, mediatord" * 4)
ask(struct.pack("<QII", MAGIC, 1, 0))  # no descriptor
with open("/dev/null") as f:
    ask(struct.pack("<QII", MAGIC, 1, 0), [f.fileno()])  # not a socket
ask(struct.pack("<QII", MAGIC, 2, 0), [a.fileno()])
ask(struct.pack("<QII", MAGIC, 1, 0x80), [a.fileno()])
ask(struct.pack("<QII", MAGIC, 1, 0), [a.fileno()], "error: process")  # no pid file
# Connections that send nothing: more than may wait; all are closed within a few seconds.
idle = []
for _ in range(20):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    idle.append(s)
t0 = time.monotonic()
for s in idle:
    s.settimeout(10)
    assert s.recv(16) == b"", "an idle connection got an answer"
print("  20 idle connections closed within %.1f s" % (time.monotonic() - t0))
PY
grep -q "sent no request within 2000 ms" "$MEDIATORD_LOG" || fail "no idle connection was timed out"

# After all that: the held cluster VM is still served, and a listed VM whose
# name is longer than libvirt's files keep is served in the other domain.
kill -0 "$held" 2>/dev/null || fail "the held cluster VM's hand-off ended: $(cat "$TMP/held.out")"
[ "$(domain_field "$DOMAIN_A" clients)" = 1 ] || fail "the cluster VM was dropped"
out=$(handoff "$(pidfile 6 $IVI_VM)" self "$VHOST_USER_FRONTEND" scenario 2>"$TMP/h6.err") ||
  fail "vm-handoff.py failed: $(cat "$TMP/h6.err")"
grep -qx "launcher: ok $DOMAIN_B" <<<"$out" || fail "$IVI_VM was not served by $DOMAIN_B: $out"
grep -qx "frontend: exit 0" <<<"$out" || fail "the scenario failed in $DOMAIN_B: $out"
log "a long-named VM: served by $DOMAIN_B, scenario passed"
# A restart (SIGKILL; the keeper holds vm_socket and the held VM's
# worker): the successor takes both over, and serves a new VM at once.
kill -KILL "$MEDIATORD_PID"
wait "$MEDIATORD_PID" 2>/dev/null || :
MEDIATORD_PID=
MEDIATORD_LOG=$TMP/mediatord-2.log
start_mediatord 9>&- # the hold's writer stays this shell's only
grep -q "vm_socket on $VMS_SOCK .*, taken over" "$MEDIATORD_LOG" ||
  fail "the successor did not take vm_socket over: $(grep vm_socket "$MEDIATORD_LOG")"
wait_field "$DOMAIN_A" clients 1 10
out=$(handoff "$(pidfile 7 $IVI_VM)" self "$VHOST_USER_FRONTEND" scenario 2>"$TMP/h7.err") ||
  fail "vm-handoff.py failed: $(cat "$TMP/h7.err")"
grep -qx "frontend: exit 0" <<<"$out" || fail "no VM served after the restart: $out"
log "restart: vm_socket and the held cluster VM taken over; a new VM served"
exec 9>&-
st=0
wait "$held" || st=$?
[ $st = 0 ] || fail "the held hand-off ended with status $st: $(cat "$TMP/held.out")"
grep -qx "launcher: stopped 0" "$TMP/held.out" || fail "the held launcher: $(cat "$TMP/held.out")"
gm_assert_mediatord_alive
log "ok"
