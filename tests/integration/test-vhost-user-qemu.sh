#!/bin/bash
# The real QEMU against mediatord's vhost-user-gpu socket: QEMU 7.2's
# vhost-user-gpu-pci device negotiates with the worker (features,
# protocol features, queues) and is realized (a virtio-gpu PCI function
# 1af4:1050 in the VM); the VM is killed (a crash) and mediatord frees its
# worker; the VM is started again and connects again; a clean quit.
#
# The guest CPU never runs (-S): on the machines this project is built on
# /dev/kvm cannot boot a Linux guest (README, "Status"), and QEMU 7.2's
# vhost-user devices need KVM. Skips (77) only without qemu-system-x86_64
# or a usable /dev/kvm.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_cmd qemu-system-x86_64 qemu-system-x86
[ -w /dev/kvm ] || skip "/dev/kvm is missing or not writable (QEMU's vhost-user devices need KVM)"
require_cmd jq jq

VHOST_A=$TMP/cluster.vhost
write_config budget 1
sed -i "s|^vtest_socket = $SOCK_A\$|&\nvhost_user_socket = $VHOST_A|" "$CONFIG"
start_mediatord

# start_vm N: QEMU, paused, with its monitor on $TMP/monitor-N.sock.
start_vm() {
  qemu-system-x86_64 -enable-kvm -S -m 256 -display none -serial none -nodefaults \
    -monitor "unix:$TMP/monitor-$1.sock,server=on,wait=off" \
    -object memory-backend-memfd,id=mem,size=256M,share=on -machine memory-backend=mem \
    -chardev "socket,id=gpu0,path=$VHOST_A" -device vhost-user-gpu-pci,chardev=gpu0 \
    >"$TMP/qemu-$1.log" 2>&1 &
  VM_PID=$!
  STARTED_PIDS+=("$VM_PID")
  local deadline=$((SECONDS + 30))
  until [ -S "$TMP/monitor-$1.sock" ]; do
    kill -0 "$VM_PID" 2>/dev/null || { cat "$TMP/qemu-$1.log" >&2; fail "QEMU exited"; }
    [ $SECONDS -lt $deadline ] || fail "QEMU did not start within 30 s"
    sleep 0.2
  done
}

# monitor N COMMAND: one human-monitor command, its output.
monitor() {
  python3 - "$TMP/monitor-$1.sock" "$2" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(5)
def read_prompt():
    buf = b""
    while not buf.endswith(b"(qemu) "):
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf.decode(errors="replace")
read_prompt()
s.sendall(sys.argv[2].encode() + b"\n")
print(read_prompt())
PY
}

start_vm 1
wait_field "$DOMAIN_A" clients 1 30
monitor 1 "info pci" >"$TMP/pci-1.txt" || fail "QEMU's monitor did not answer"
grep -q "1af4:1050" "$TMP/pci-1.txt" ||
  { cat "$TMP/pci-1.txt" >&2; fail "no virtio-gpu PCI function in the VM"; }
grep -q "domain $DOMAIN_A vm [0-9]*: VM connected: qemu-system-x86" "$MEDIATORD_LOG" ||
  fail "mediatord's worker did not log the VM"
log "QEMU's vhost-user-gpu-pci realized against mediatord ($(grep -c 1af4:1050 "$TMP/pci-1.txt") virtio-gpu function)"

# A crash: the worker goes, the domain is free.
kill -KILL "$VM_PID"
wait "$VM_PID" 2>/dev/null || true
wait_field "$DOMAIN_A" clients 0 15
grep -q "QEMU disconnected" "$MEDIATORD_LOG" || fail "the worker did not notice QEMU's end"
assert_mediatord_alive

# Started again: connects again; a clean quit.
start_vm 2
wait_field "$DOMAIN_A" clients 1 30
monitor 2 "info pci" | grep -q "1af4:1050" || fail "the restarted VM has no virtio-gpu"
monitor 2 "quit" >/dev/null || true
wait "$VM_PID" 2>/dev/null || true
wait_field "$DOMAIN_A" clients 0 15
stop_mediatord || fail "mediatord exited with an error"
log "ok"
