#!/bin/bash
# SPDX-License-Identifier: MIT
# host-kmod in a real Linux guest: builds gm_fence.ko with kbuild against
# Debian's kernel headers, boots that Debian kernel in QEMU with a small
# initramfs (busybox, vgem, the module, tests/kmod/gm-fence-test), where the
# test program creates, emits and signals vgem fences and checks the
# module's records, its ioctls and bad input, the overflow count, the
# device's mode and a clean unload (kmemleak too, where the kernel has it).
# Prints the jitter figures the program measured.
#
# Accelerator: GM_KMOD_ACCEL (default tcg). On the machines this project
# is built on, /dev/kvm is a PVM hypervisor under which Debian's stock
# kernel does not boot (doc/status.md); QEMU's TCG boots it in seconds
# and the module runs the same. Skips (77) only when the Debian kernel, its
# headers, busybox, cpio or QEMU are missing.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_cmd qemu-system-x86_64 qemu-system-x86
require_cmd cpio cpio
require_cmd make make
[ -x /bin/busybox ] && file -L /bin/busybox 2>/dev/null | grep -q 'statically linked' ||
  ldd /bin/busybox 2>&1 | grep -q 'not a dynamic' ||
  skip "a static /bin/busybox is missing (busybox-static)"

kver=
for k in $(ls -1 /boot/vmlinuz-*-amd64 2>/dev/null | sed 's|/boot/vmlinuz-||' | sort -V -r); do
  if [ -d "/lib/modules/$k/build" ] && [ -f "/lib/modules/$k/kernel/drivers/gpu/drm/vgem/vgem.ko" ]; then
    kver=$k
    break
  fi
done
[ -n "$kver" ] || skip "no Debian kernel with headers and vgem (linux-image-amd64, linux-headers-amd64)"
log "kernel $kver"

# The module, built out of tree from a copy (the source tree stays clean).
cp -r "$SRCROOT/host-kmod" "$TMP/kmod"
make -C "$TMP/kmod" KVERSION="$kver" >"$TMP/kbuild.log" 2>&1 ||
  { tail -20 "$TMP/kbuild.log" >&2; fail "kbuild of gm_fence.ko failed"; }
if grep -E 'warning:' "$TMP/kbuild.log" >&2; then fail "kbuild warnings (above)"; fi

# The test program, static, with the uapi of vgem from the kernel's headers.
mkdir -p "$TMP/inc/drm"
common=$(readlink -f "/lib/modules/$kver/build" | sed 's/-amd64$/-common/')
# vgem_drm.h is in no -dev package; it has nothing to sanitize, unlike
# drm.h, which comes sanitized with libdrm-dev.
cp "$common/include/uapi/drm/vgem_drm.h" "$TMP/inc/drm/" || fail "no vgem_drm.h in $common"
cp /usr/include/libdrm/drm.h /usr/include/libdrm/drm_mode.h "$TMP/inc/drm/"
gcc -static -O2 -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
  -I "$TMP/inc" -I "$SRCROOT/host-kmod/uapi" -I "$SRCROOT/mediator" -I "$SRCROOT/host-kmod/reader" \
  -o "$TMP/gm-fence-test" "$SRCROOT/tests/kmod/gm-fence-test.c" "$SRCROOT/host-kmod/reader/fence_ring.c" \
  "$SRCROOT/mediator/worker/timestamp_source.c" -lm ||
  fail "building gm-fence-test failed"

# The initramfs.
root=$TMP/initramfs
mkdir -p "$root"/{bin,dev,proc,sys,mod}
cp /bin/busybox "$root/bin/"
for m in drm drm_shmem_helper vgem; do
  f=$(modprobe -S "$kver" --show-depends vgem | awk -v m="/$m.ko" 'index($2, m) {print $2}' | head -1)
  [ -n "$f" ] || fail "module $m of vgem not found"
  cp "$f" "$root/mod/"
done
cp "$TMP/kmod/gm_fence.ko" "$TMP/gm-fence-test" "$root/"
cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
for m in drm drm_shmem_helper vgem; do insmod /mod/$m.ko || echo "GMTEST FAIL insmod_$m"; done
insmod /gm_fence.ko && echo "GMTEST PASS insmod" || echo "GMTEST FAIL insmod: gm_fence.ko"
/gm-fence-test "$(sed -n 's/.*gm.jitter=\([0-9]*\).*/\1/p' /proc/cmdline)"
echo "GMTEST EXIT $?"
if [ -w /sys/kernel/debug/kmemleak ]; then
  echo scan > /sys/kernel/debug/kmemleak; sleep 6; echo scan > /sys/kernel/debug/kmemleak
  n=$(grep -c 'unreferenced object' /sys/kernel/debug/kmemleak)
  [ "$n" = 0 ] && echo "GMTEST PASS kmemleak" || echo "GMTEST FAIL kmemleak: $n objects"
else
  echo "GMTEST KMEMLEAK unavailable: the kernel has no CONFIG_DEBUG_KMEMLEAK"
fi
poweroff -f
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$TMP/initramfs.gz"

accel=${GM_KMOD_ACCEL:-tcg}
log "booting $kver under $accel"
timeout -k 5 300 qemu-system-x86_64 -accel "$accel" -m 512 -smp 1 -nographic -no-reboot \
  -kernel "/boot/vmlinuz-$kver" -initrd "$TMP/initramfs.gz" \
  -append "console=ttyS0 panic=-1 quiet gm.jitter=${GM_KMOD_JITTER_FENCES:-1000}" \
  </dev/null >"$TMP/serial.log" 2>&1 || true
tr -d '\r' <"$TMP/serial.log" | grep '^GMTEST' >"$TMP/results.txt" || true
cat "$TMP/results.txt" >&2
grep -q '^GMTEST DONE failures=0$' "$TMP/results.txt" ||
  { tail -30 "$TMP/serial.log" >&2; fail "the guest test did not pass"; }
! grep -q '^GMTEST FAIL' "$TMP/results.txt" || fail "failures in the guest (above)"
[ "$(grep -c '^GMTEST PASS' "$TMP/results.txt")" -ge 25 ] || fail "too few checks ran"
log "$(grep -c '^GMTEST PASS' "$TMP/results.txt") checks passed in the guest;" \
  "$(grep '^GMTEST JITTER' "$TMP/results.txt" | sed 's/^GMTEST //')"
log "ok"
