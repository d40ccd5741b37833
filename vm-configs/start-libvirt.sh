#!/bin/bash
# SPDX-License-Identifier: MIT
# start-libvirt.sh: starts virtlogd and libvirtd by hand where no init
# system does (containers, CI), with what they need: the kvm group, the
# libvirt-qemu user, /var/log/libvirt; idempotent. Waits until
# `virsh -c qemu:///system list` answers. Needs root.
set -euo pipefail
# A libvirtd that answers is enough (one of another PID namespace may show
# in pgrep without being this system's).
virsh -c qemu:///system list >/dev/null 2>&1 && exit 0
getent group kvm >/dev/null || groupadd -r kvm
getent group libvirt-qemu >/dev/null || groupadd -r libvirt-qemu
id libvirt-qemu >/dev/null 2>&1 ||
  useradd -r -g libvirt-qemu -G kvm -d /var/lib/libvirt -s /usr/sbin/nologin libvirt-qemu
mkdir -p /var/log/libvirt /var/lib/libvirt
pgrep -x virtlogd >/dev/null || virtlogd -d
libvirtd -d 2>/dev/null || true # one already starting keeps its pid file
for _ in $(seq 100); do
  virsh -c qemu:///system list >/dev/null 2>&1 && exit 0
  sleep 0.1
done
echo "start-libvirt.sh: libvirtd does not answer" >&2
exit 1
