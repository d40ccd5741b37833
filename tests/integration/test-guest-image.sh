#!/bin/bash
# SPDX-License-Identifier: MIT
# The guest image of vm-configs/guest: built (or reused from its cache) with
# one command, booted with QEMU's own virtio-gpu (2D: the guest's stock Mesa
# renders with its software path), and its unmodified kmscube renders
# frames, the cluster application counts its frames and glmark2-es2-drm
# sets its mode, read from the serial console. This checks the recipe; the VM path
# through mediatord is checked by test-vhost-user, test-vhost-user-qemu and
# test-libvirt-vms (a guest cannot run on /dev/kvm here: doc/status.md).
#
# Accelerator: GM_GUEST_ACCEL (default tcg; kvm where it boots Debian's
# kernel). Skips (77) only without root, debootstrap, cpio or QEMU; the
# first build needs Debian's mirror.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_cmd qemu-system-x86_64 qemu-system-x86
require_cmd debootstrap debootstrap
require_cmd cpio cpio
[ "$(id -u)" = 0 ] || skip "needs root (debootstrap)"

start=$SECONDS
"$SRCROOT/vm-configs/guest/build.sh" "$TMP/guest" >"$TMP/build.log" 2>&1 ||
  { tail -20 "$TMP/build.log" >&2; fail "building the guest image failed"; }
log "$(tail -1 "$TMP/build.log") in $((SECONDS - start)) s"
frames=${GM_GUEST_FRAMES:-60}
accel=${GM_GUEST_ACCEL:-tcg}
timeout -k 5 400 qemu-system-x86_64 -accel "$accel" -m 1024 -smp 2 -nographic -no-reboot \
  -device virtio-gpu-pci -kernel "$TMP/guest/vmlinuz" -initrd "$TMP/guest/initrd.img" \
  -append "console=ttyS0 quiet panic=-1 gm.app=kmscube gm.frames=$frames gm.poweroff=1" \
  </dev/null >"$TMP/serial.log" 2>&1 || true
tr -d '\r' <"$TMP/serial.log" | grep -E '^(GM-|Rendered|Using|EGL|GL_)' >&2 || true
grep -q 'GM-GUEST drm ready' "$TMP/serial.log" || fail "the guest found no virtio-gpu"
grep -q 'GM-APP-START kmscube' "$TMP/serial.log" || fail "kmscube did not start"
grep -q 'GM-APP-EXIT kmscube rc=0' "$TMP/serial.log" ||
  { tail -20 "$TMP/serial.log" >&2; fail "kmscube failed"; }
rendered=$(tr -d '\r' <"$TMP/serial.log" | sed -n 's/^Rendered \([0-9]*\) frames.*/\1/p' | tail -1)
# kmscube -c N stops after N - 1 frames, and says so.
[ "${rendered:-0}" -ge $((frames - 1)) ] || fail "kmscube rendered ${rendered:-no} frames of $frames"
log "kmscube: $(tr -d '\r' <"$TMP/serial.log" | grep '^Rendered' | tail -1) (QEMU virtio-gpu 2D, $accel)"

boot() { # NAME KERNEL-ARGS: boots the image on QEMU's virtio-gpu, serial to $TMP/NAME.log
  timeout -k 5 400 qemu-system-x86_64 -accel "$accel" -m 1024 -smp 2 -nographic -no-reboot \
    -device virtio-gpu-pci -kernel "$TMP/guest/vmlinuz" -initrd "$TMP/guest/initrd.img" \
    -append "console=ttyS0 quiet panic=-1 $2 gm.poweroff=1" </dev/null 2>&1 |
    tr -d '\r' >"$TMP/$1.log" || true
}
# The cluster application: its frames counted on the serial console.
boot cluster "gm.app=cluster gm.frames=120 gm.progress=1"
grep -E '^GM-CLUSTER' "$TMP/cluster.log" >&2 || true
grep -q 'GM-APP-EXIT cluster rc=0' "$TMP/cluster.log" ||
  { tail -20 "$TMP/cluster.log" >&2; fail "the cluster application failed"; }
grep -Eq '^GM-CLUSTER frames=120 misses=[0-9]+ skipped=[0-9]+ p50_us=[0-9]+ p99_us=[0-9]+ max_us=[0-9]+' \
  "$TMP/cluster.log" || fail "the cluster application printed no summary of 120 frames"
# glmark2-es2-drm sets its mode (XRGB8888 buffers, a built-in EDID's mode).
boot glmark2 "gm.app=glmark2 gm.bench=build:duration=3"
grep -q 'GM-APP-EXIT glmark2 rc=0' "$TMP/glmark2.log" ||
  { tail -20 "$TMP/glmark2.log" >&2; fail "glmark2-es2-drm failed"; }
! grep -q 'Failed to set crtc' "$TMP/glmark2.log" || fail "glmark2-es2-drm could not set its mode"
grep -q 'Surface Size: *1024x768' "$TMP/glmark2.log" || fail "glmark2-es2-drm did not run at 1024x768"
log "cluster: $(grep '^GM-CLUSTER frames=' "$TMP/cluster.log"); glmark2: mode set, 1024x768"
log "ok"
