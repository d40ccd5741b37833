#!/bin/bash
# cluster-vm and ivi-vm under libvirt, wired to mediatord by vm-configs/:
# libvirtd and virtlogd started by hand (vm-configs/start-libvirt.sh), the
# shipped XML rendered (vm-configs/render-xml.sh), `virsh define` and
# `virsh start` of both; each VM's QEMU connects its vhost-user-gpu-pci
# device to its domain's socket (show-budgets: a client in each domain);
# `virsh destroy` of ivi frees its worker while cluster stays connected;
# ivi starts again and connects again.
#
# What this cannot show here: a guest rendering. The guests boot Debian's
# kernel with a small initramfs, but /dev/kvm on these machines (PVM) does
# not run Debian's kernel (README, "Status") and QEMU 7.2's vhost-user
# devices need KVM. Skips (77) only without libvirt, QEMU, a usable
# /dev/kvm, root, or Debian's kernel.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_cmd virsh libvirt-clients
require_cmd libvirtd libvirt-daemon-system
require_cmd qemu-system-x86_64 qemu-system-x86
require_cmd jq jq
[ "$(id -u)" = 0 ] || skip "needs root (the system libvirtd)"
[ -w /dev/kvm ] || skip "/dev/kvm is missing or not writable"
kernel=$(ls -1 /boot/vmlinuz-*-amd64 2>/dev/null | sort -V | tail -1)
[ -n "$kernel" ] || skip "no Debian kernel in /boot (linux-image-amd64)"
"$SRCROOT/vm-configs/start-libvirt.sh" || fail "libvirtd did not start"
VIRSH=(virsh -q -c qemu:///system)

# libvirt's QEMU runs as libvirt-qemu: it must reach the sockets and files.
chmod 0711 "$TMP"
VM_DIR=$TMP/vm
mkdir -m 0755 "$VM_DIR"
write_config budget 1
sed -i "s|^vtest_socket = $SOCK_A\$|&\nvhost_user_socket = $VM_DIR/cluster.vhost|; s|^vtest_socket = $SOCK_B\$|&\nvhost_user_socket = $VM_DIR/ivi.vhost|" "$CONFIG"
start_mediatord
# libvirt's QEMU (user libvirt-qemu) connects only to a socket it owns: a
# mode of 0666 was not enough for it on these machines (README, "Virtual
# machines"). An integrator does the same once mediatord is up.
chown libvirt-qemu "$VM_DIR/cluster.vhost" "$VM_DIR/ivi.vhost"

# A small guest: busybox and virtio-gpu; it would say what it found.
root=$TMP/initramfs
kver=${kernel#/boot/vmlinuz-}
mkdir -p "$root"/{bin,dev,proc,sys,mod}
cp /bin/busybox "$root/bin/"
for m in $( (modprobe -S "$kver" --show-depends virtio_pci; modprobe -S "$kver" --show-depends virtio_gpu) |
  awk '{print $2}' | awk '!s[$0]++'); do
  cp "$m" "$root/mod/"
  basename "$m" >>"$root/mod/order"
done
cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
for m in $(cat /mod/order); do insmod /mod/$m; done
sleep 2
[ -e /dev/dri/card0 ] && echo "GM-GUEST virtio-gpu ready" || echo "GM-GUEST no virtio-gpu"
INIT
chmod +x "$root/init"
(cd "$root" && find . | cpio -o -H newc 2>/dev/null | gzip -1) >"$VM_DIR/initramfs.gz"
cp "$kernel" "$VM_DIR/vmlinuz"
chmod 0644 "$VM_DIR"/*

CLUSTER=gm-test-cluster-vm-$$
IVI=gm-test-ivi-vm-$$
cleanup_vms() {
  for d in "$CLUSTER" "$IVI"; do
    "${VIRSH[@]}" destroy "$d" >/dev/null 2>&1 || true
    "${VIRSH[@]}" undefine "$d" >/dev/null 2>&1 || true
  done
}
trap 'cleanup_vms; cleanup' EXIT
render() {
  "$SRCROOT/vm-configs/render-xml.sh" "$SRCROOT/vm-configs/$1.xml" NAME="$2" MEMORY_MIB=256 \
    VCPUS=1 KERNEL="$VM_DIR/vmlinuz" INITRD="$VM_DIR/initramfs.gz" CMDLINE="panic=-1" \
    SERIAL_LOG="$VM_DIR/$2.serial.log" GPU_SOCKET="$VM_DIR/$3.vhost" >"$VM_DIR/$2.xml"
}
render cluster-vm "$CLUSTER" cluster
render ivi-vm "$IVI" ivi
"${VIRSH[@]}" define "$VM_DIR/$CLUSTER.xml" >/dev/null || fail "virsh define $CLUSTER failed"
"${VIRSH[@]}" define "$VM_DIR/$IVI.xml" >/dev/null || fail "virsh define $IVI failed"
"${VIRSH[@]}" start "$CLUSTER" >/dev/null ||
  { tail -5 "/var/log/libvirt/qemu/$CLUSTER.log" >&2; fail "virsh start $CLUSTER failed"; }
"${VIRSH[@]}" start "$IVI" >/dev/null ||
  { tail -5 "/var/log/libvirt/qemu/$IVI.log" >&2; fail "virsh start $IVI failed"; }
wait_field "$DOMAIN_A" clients 1 30
wait_field "$DOMAIN_B" clients 1 30
grep -q "domain $DOMAIN_A vm [0-9]*: VM connected: qemu-system-x86" "$MEDIATORD_LOG" ||
  fail "cluster's worker did not see its VM"
log "both VMs started under libvirt and connected to their domains"

"${VIRSH[@]}" destroy "$IVI" >/dev/null || fail "virsh destroy $IVI failed"
wait_field "$DOMAIN_B" clients 0 15
[ "$(domain_field "$DOMAIN_A" clients)" = 1 ] || fail "cluster lost its VM when ivi was destroyed"
[ "$("${VIRSH[@]}" domstate "$CLUSTER")" = running ] || fail "$CLUSTER is not running any more"
log "virsh destroy ivi: its worker is gone, cluster stays connected"
"${VIRSH[@]}" start "$IVI" >/dev/null || fail "starting $IVI again failed"
wait_field "$DOMAIN_B" clients 1 30
log "ivi started again and connected again"
cleanup_vms
wait_field "$DOMAIN_A" clients 0 15
wait_field "$DOMAIN_B" clients 0 15
assert_mediatord_alive
stop_mediatord || fail "mediatord exited with an error"
log "ok"
