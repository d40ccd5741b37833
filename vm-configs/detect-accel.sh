#!/bin/bash
# SPDX-License-Identifier: MIT
# detect-accel.sh KERNEL INITRD: prints the libvirt domain type that boots
# the guest on this host: "kvm" when QEMU with KVM brings the guest (built by
# vm-configs/guest/build.sh) to its /init, "qemu" (TCG) otherwise.
#
# /dev/kvm being there is not enough: some hosts' /dev/kvm is a PVM
# hypervisor (kvm_pvm) on which QEMU starts but Debian's kernel stops in its
# boot code ("KVM internal error"). So the guest is booted once with KVM and
# no GPU, with gm.app=none gm.poweroff=1, and KVM counts only when its /init
# says so on the serial console within GM_ACCEL_PROBE_S seconds (default
# 60; a KVM guest needs a few). Needs qemu-system-x86_64.
set -euo pipefail
[ $# -eq 2 ] && [ -r "$1" ] && [ -r "$2" ] || {
  echo "usage: detect-accel.sh KERNEL INITRD" >&2
  exit 2
}
kernel=$1 initrd=$2
why=
if [ ! -c /dev/kvm ]; then
  why="no /dev/kvm"
elif [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; then
  why="/dev/kvm is not readable and writable"
else
  serial=$(mktemp)
  trap 'rm -f -- "$serial"' EXIT
  # In the background: a QEMU that aborts is no job report on stderr.
  timeout "${GM_ACCEL_PROBE_S:-60}" qemu-system-x86_64 -accel kvm -cpu host -m 512 -smp 1 \
    -display none -no-reboot -nodefaults -kernel "$kernel" -initrd "$initrd" \
    -serial "file:$serial" -append "console=ttyS0 quiet gm.app=none gm.poweroff=1" \
    </dev/null >/dev/null 2>&1 &
  { wait $!; } 2>/dev/null || true
  if grep -q '^GM-GUEST' "$serial"; then
    echo kvm
    exit 0
  fi
  why="a guest under KVM did not reach its /init"
fi
echo "detect-accel: $why; guests run under TCG (type qemu)" >&2
echo qemu
