#!/bin/bash
# Installs the Debian 12 packages gpu-mediator needs to build, test, run the
# demo and run the benchmarks. Idempotent and quick when everything is there:
# it asks dpkg first and only runs apt-get (update + install) for what is
# missing. Needs root (or sudo) only when something must be installed.
set -euo pipefail

packages=(
  # build
  gcc libc6-dev meson ninja-build pkg-config
  libvirglrenderer-dev libinih-dev libcmocka-dev libjson-c-dev
  libepoxy-dev libdrm-dev libgbm-dev libegl-dev libgles-dev
  # ASan/UBSan builds with clang, and the formatter
  clang libclang-rt-14-dev clang-format
  # rendering: Mesa llvmpipe for the worker, virpipe for the clients
  libgl1-mesa-dri libegl-mesa0 libgles2
  # clients, display and the baseline vtest server
  glmark2-es2-x11 mesa-utils-bin xvfb xauth virgl-server
  # test and demo tooling: timeout, pgrep, unshare/mount, JSON checks
  coreutils procps util-linux jq
  # CDF plots of bench/accuracy
  gnuplot-nox
  # the VM path: QEMU's vhost-user-gpu-pci (and its own vhost-user-gpu for bench/vhost-user)
  qemu-system-x86 qemu-system-gui
  # ... and under libvirt (vm-configs/, test-libvirt-vms)
  libvirt-daemon-system libvirt-clients libvirt-daemon-driver-qemu
  # ... and the guest image recipe (vm-configs/guest/build.sh)
  debootstrap gzip
  # host-kmod: Debian's kernel and its headers (kbuild, the test's guest), busybox and cpio
  # for the test's initramfs, make and kmod
  linux-image-amd64 linux-headers-amd64 busybox-static cpio make kmod file
)

missing=()
for pkg in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)
  if [ "${status:0:2}" != "ii" ]; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing: ${missing[*]}"
sudo=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "install-deps: not root and no sudo; install these by hand: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
echo "install-deps: done"
