#!/bin/bash
# SPDX-License-Identifier: MIT
# The real QEMU (>= 8) against mediatord's vhost-user-gpu socket, with a
# guest that boots and renders:
#  - QEMU's vhost-user-gpu-pci negotiates with the worker (no warning
#    about EDID: the worker offers it), the guest (vm-configs/guest, built
#    or reused by its build.sh) boots under TCG, its unmodified kmscube
#    renders its frames through mediatord (serial console), show-budgets
#    counts the VM's groups and the worker names the guest's context;
#  - the guest powers off: QEMU disconnects and the worker exits;
#  - a second VM renders without end: QEMU's screendump (what `virsh
#    screenshot` asks for) shows the rendered frame, not a blank screen;
#    the VM is killed (a crash) and mediatord frees its worker.
#
# TCG, not KVM: on the machines this project is built on /dev/kvm cannot
# boot Debian's kernel (doc/status.md), and QEMU >= 8 runs
# vhost-user-gpu-pci under TCG (7.2 refused: "requires kvm"). Skips (77)
# only without QEMU >= 8.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_cmd qemu-system-x86_64 qemu-system-x86
qemu_version=$(gm_qemu_major)
[ "${qemu_version:-0}" -ge 8 ] ||
  skip "QEMU >= 8 is needed (vhost-user-gpu-pci under TCG); found $(qemu-system-x86_64 --version | head -1)"
require_cmd jq jq

# Frames of the first guest's kmscube: a few seconds under TCG.
FRAMES=${GM_QEMU_FRAMES:-300}

GUEST=$TMP/guest
"$SRCROOT/vm-configs/guest/build.sh" "$GUEST" >"$TMP/guest-build.log" 2>&1 ||
  { cat "$TMP/guest-build.log" >&2; fail "the guest image could not be built (vm-configs/guest/build.sh)"; }
log "guest: $(tail -1 "$TMP/guest-build.log")"

VHOST_A=$TMP/cluster.vhost
write_config budget 1
sed -i "s|^vtest_socket = $SOCK_A\$|&\nvhost_user_socket = $VHOST_A|" "$CONFIG"
start_mediatord

# start_vm N APPEND: QEMU booting the guest with kernel arguments APPEND,
# its serial console in $TMP/serial-N.log, its monitor on $TMP/monitor-N.sock.
start_vm() {
  qemu-system-x86_64 -accel tcg -m 1024 -smp 1 -display none -no-reboot -nodefaults \
    -monitor "unix:$TMP/monitor-$1.sock,server=on,wait=off" \
    -object memory-backend-memfd,id=mem,size=1024M,share=on -numa node,memdev=mem \
    -chardev "socket,id=gpu0,path=$VHOST_A" -device vhost-user-gpu-pci,chardev=gpu0 \
    -kernel "$GUEST/vmlinuz" -initrd "$GUEST/initrd.img" -serial "file:$TMP/serial-$1.log" \
    -append "console=ttyS0 quiet $2" >"$TMP/qemu-$1.log" 2>&1 &
  VM_PID=$!
  gm_track "$VM_PID"
}

# wait_serial N PATTERN SECONDS: until the guest's console shows PATTERN.
wait_serial() {
  local deadline=$((SECONDS + $3))
  until grep -aq "$2" "$TMP/serial-$1.log" 2>/dev/null; do
    kill -0 "$VM_PID" 2>/dev/null ||
      { tail -20 "$TMP/serial-$1.log" "$TMP/qemu-$1.log" >&2; fail "VM $1 ended before '$2'"; }
    [ $SECONDS -lt $deadline ] ||
      { tail -20 "$TMP/serial-$1.log" >&2; fail "VM $1: no '$2' within $3 s"; }
    sleep 0.2
  done
}

# monitor N COMMAND: one human-monitor command, its output.
monitor() {
  python3 - "$TMP/monitor-$1.sock" "$2" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(30)
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

# The first VM: boots, renders $FRAMES frames, powers off.
start_vm 1 "gm.app=kmscube gm.frames=$FRAMES gm.poweroff=1"
wait_field "$DOMAIN_A" clients 1 30
wait_serial 1 "GM-APP-EXIT kmscube" 240
deadline=$((SECONDS + 60))
while kill -0 "$VM_PID" 2>/dev/null; do
  [ $SECONDS -lt $deadline ] || fail "VM 1 did not power off"
  sleep 0.2
done
wait "$VM_PID" 2>/dev/null || true
grep -aq "GM-APP-EXIT kmscube rc=0" "$TMP/serial-1.log" ||
  { tail -20 "$TMP/serial-1.log" >&2; fail "kmscube failed in the guest"; }
rendered=$(sed -n 's/.*Rendered \([0-9]*\) frames.*/\1/p' "$TMP/serial-1.log" | tail -1)
[ "${rendered:-0}" -ge $((FRAMES - 1)) ] ||
  { tail -20 "$TMP/serial-1.log" >&2; fail "kmscube rendered ${rendered:-no} frames of $FRAMES"; }
if grep -q "EDID requested but the backend doesn't support it" "$TMP/qemu-1.log"; then
  fail "QEMU found no EDID support: $(cat "$TMP/qemu-1.log")"
fi
wait_field "$DOMAIN_A" clients 0 15
groups=$(domain_field "$DOMAIN_A" groups)
[ "$groups" -gt 0 ] || fail "show-budgets counted no groups of the VM"
grep -q "domain $DOMAIN_A vm [0-9]*: guest context [0-9]* \"kmscube\" created" "$MEDIATORD_LOG" ||
  fail "the worker did not name the guest's kmscube context"
grep -q "QEMU disconnected" "$MEDIATORD_LOG" || fail "the worker did not notice QEMU's end"
log "VM 1: kmscube $(grep -a 'Rendered' "$TMP/serial-1.log" | tail -1 | tr -d '\r'); show-budgets: $groups groups"

# The second VM renders until it is killed; its screen shows the cube.
start_vm 2 "gm.app=kmscube gm.frames=1000000"
wait_field "$DOMAIN_A" clients 1 30
wait_serial 2 "GM-APP-START kmscube" 120
before=$(domain_field "$DOMAIN_A" groups)
deadline=$((SECONDS + 60))
until [ "$(domain_field "$DOMAIN_A" groups)" -ge $((before + 30)) ]; do
  [ $SECONDS -lt $deadline ] || fail "VM 2's kmscube does not render"
  sleep 0.2
done
monitor 2 "screendump $TMP/screen.ppm" >/dev/null || fail "QEMU's monitor did not answer"
[ -s "$TMP/screen.ppm" ] || fail "no screendump"
python3 - "$TMP/screen.ppm" <<'PY' || fail "the screendump does not show the rendered frame"
import sys
data = open(sys.argv[1], "rb").read()
fields, pos = [], 0
while len(fields) < 4:  # P6, width, height, maxval
    while data[pos:pos + 1].isspace():
        pos += 1
    end = pos
    while not data[end:end + 1].isspace():
        end += 1
    fields.append(data[pos:end])
    pos = end
pixels = data[pos + 1:]
w, h = int(fields[1]), int(fields[2])
colours = len({pixels[i:i + 3] for i in range(0, len(pixels), 3 * 7)})
print(f"screendump {w}x{h}, {colours} colours sampled", file=sys.stderr)
sys.exit(0 if fields[0] == b"P6" and w > 0 and colours > 16 else 1)
PY
log "VM 2: the screendump shows the rendered frame"
kill -KILL "$VM_PID"
wait "$VM_PID" 2>/dev/null || true
wait_field "$DOMAIN_A" clients 0 15
gm_assert_mediatord_alive
gm_stop_mediatord || fail "mediatord exited with an error"
log "ok"
