#!/bin/bash
# SPDX-License-Identifier: MIT
# vm-configs/guest/build.sh OUTDIR: builds the guest of cluster-vm and
# ivi-vm from Debian 12 packages (debootstrap from the configured Debian
# mirror): Debian's kernel, Mesa (virgl, and llvmpipe where the GPU has no
# 3D), kmscube and glmark2-es2-drm, run as shipped, and guest-shim's
# cluster-client and long-draws, compiled here from the source tree with
# the host's cc against Debian 12's libdrm, GBM, EGL and GLES headers.
# Compiled here rather than taken from a meson build directory: the image
# then never depends on which build (ASan, Mesa 25 headers) ran last, and
# the guest is the same Debian 12 as the host, so they run there as built
# (their shared libraries come with Mesa's packages below; the build checks
# that every one resolves in the image). The result is
#   OUTDIR/vmlinuz      the guest kernel (direct boot: <kernel> in the XML)
#   OUTDIR/initrd.img   the whole root file system as an initramfs (<initrd>)
# and boots without a disk. Its /init mounts the basics, loads virtio-gpu
# and runs the application named on the kernel command line on the serial
# console:  gm.app=kmscube|glmark2|cluster|flood  gm.frames=N  gm.poweroff=1
# (init lists the rest: gm.rate, gm.deadline_us, gm.bench, gm.mode, ...)
# printing "GM-APP-START app", the application's own output, and
# "GM-APP-EXIT app rc=N".
#
# Reproducible and cached: the packages, this recipe, init and the compiled
# applications make a key; a build with the same key reuses
# $GM_GUEST_CACHE (default /var/cache/gpu-mediator/guest) and only copies.
# Needs cc with the -dev packages above, and to build an image root,
# debootstrap, cpio and gzip.
set -euo pipefail
OUT=${1:?usage: build.sh OUTDIR}
HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
CACHE=${GM_GUEST_CACHE:-/var/cache/gpu-mediator/guest}
MIRROR=${GM_GUEST_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
PACKAGES=linux-image-amd64,kmod,libgl1-mesa-dri,libegl-mesa0,libgbm1,libgles2,kmscube,glmark2-es2-drm,busybox
SRC=$(cd -- "$HERE/../.." && pwd)
APPS=(cluster-client long-draws)
mkdir -p "$OUT" "$CACHE/debs"
bin=$(mktemp -d)
trap 'rm -rf -- "$bin"' EXIT
for app in "${APPS[@]}"; do
  cc -std=gnu11 -O2 -D_GNU_SOURCE -Wall -Werror -I"$SRC/guest-shim" \
    $(pkg-config --cflags libdrm) -o "$bin/$app" "$SRC/guest-shim/$app.c" \
    "$SRC/guest-shim/frame_stats.c" "$SRC/guest-shim/samples.c" "$SRC/guest-shim/client_args.c" \
    "$SRC/guest-shim/gles/gles_target.c" "$SRC/guest-shim/gles/gles_kms.c" \
    -lEGL -lGLESv2 -lgbm -ldrm -lm -pthread
done
key=$( (cat "$HERE/build.sh" "$HERE/init" "${APPS[@]/#/$bin/}"; echo "$SUITE $MIRROR $PACKAGES") |
  sha256sum | cut -c1-16)
if [ -f "$CACHE/$key/initrd.img" ] && [ -f "$CACHE/$key/vmlinuz" ]; then
  cp "$CACHE/$key/vmlinuz" "$CACHE/$key/initrd.img" "$OUT/"
  echo "guest: reused $CACHE/$key"
  exit 0
fi
[ "$(id -u)" = 0 ] || { echo "guest: building needs root (debootstrap)" >&2; exit 1; }
work=$(mktemp -d "$CACHE/build.XXXXXX")
trap 'rm -rf -- "$work" "$bin"' EXIT
root=$work/root
debootstrap --variant=minbase --include="$PACKAGES" --cache-dir="$CACHE/debs" \
  "$SUITE" "$root" "$MIRROR" >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log" >&2; exit 1; }
kver=$(ls "$root/lib/modules" | sort -V | tail -1)
cp "$root/boot/vmlinuz-$kver" "$work/vmlinuz"
# What a display-only guest does not need: docs, locales, firmware,
# modules other than the GPU, virtio, input and the file systems used.
rm -rf "$root"/usr/share/{doc,man,info,locale} "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* \
  "$root/boot"/* "$root/lib/firmware"
find "$root/lib/modules/$kver/kernel" -mindepth 1 -maxdepth 1 ! -name drivers ! -name fs -exec rm -rf {} +
find "$root/lib/modules/$kver/kernel/drivers" -mindepth 1 -maxdepth 1 \
  ! -name gpu ! -name virtio ! -name char ! -name input ! -name dma-buf ! -name video -exec rm -rf {} +
find "$root/lib/modules/$kver/kernel/drivers/gpu/drm" -mindepth 1 -maxdepth 1 -type d \
  ! -name virtio -exec rm -rf {} +
chroot "$root" depmod "$kver"
for app in "${APPS[@]}"; do
  install -m 0755 "$bin/$app" "$root/usr/bin/$app"
  missing=$(chroot "$root" ldd "/usr/bin/$app" | grep 'not found' || true)
  [ -z "$missing" ] || { echo "guest: $app lacks in the image: $missing" >&2; exit 1; }
done
cp "$HERE/init" "$root/init"
chmod 0755 "$root/init"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --reproducible 2>/dev/null | gzip -6 -n) \
  >"$work/initrd.img"
mkdir -p "$CACHE/$key"
mv "$work/vmlinuz" "$work/initrd.img" "$CACHE/$key/"
cp "$CACHE/$key/vmlinuz" "$CACHE/$key/initrd.img" "$OUT/"
echo "guest: built $CACHE/$key ($(du -h "$CACHE/$key/initrd.img" | cut -f1) initrd, kernel $kver)"
