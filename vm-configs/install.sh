#!/bin/bash
# SPDX-License-Identifier: MIT
# vm-configs/install.sh: sets this host up for cluster-vm and ivi-vm, so that
# after it `virsh start cluster-vm` and `virsh start ivi-vm` boot guests whose
# unmodified GL ES apps render through a running mediatord. Idempotent: run
# it again after a change, it reuses what is there. Needs root.
#
#  1. installs the Debian packages (scripts/install-deps.sh) and builds
#     mediatord (build/ in the source tree) where it is not built;
#  2. builds or reuses the guest image (vm-configs/guest/build.sh);
#  3. writes mediatord's configuration for the two VMs (from
#     vm-configs/mediatord-vms.conf) unless the file is there already (an
#     integrator's edits are kept), and starts mediatord with it unless one
#     answers on its control socket;
#  4. starts virtlogd and libvirtd where no init system does
#     (vm-configs/start-libvirt.sh);
#  5. renders cluster-vm.xml and ivi-vm.xml for this host (libvirt domain
#     type kvm or qemu, as vm-configs/detect-accel.sh finds) and
#     `virsh define`s them (a defined VM is updated; a running one takes the
#     new definition at its next start).
#
# Options (defaults in brackets):
#   --config FILE        mediatord's configuration [/etc/gpu-mediator/mediatord.conf]
#   --state-dir DIR      guest image, rendered XML, models [/var/lib/gpu-mediator]
#   --run-dir DIR        sockets, control socket, mediatord.pid [/run/gpu-mediator]
#   --log-dir DIR        mediatord.log and the guests' serial logs [/var/log/gpu-mediator]
#   --build-dir DIR      the meson build to run mediatord from [build/ in the source tree]
#   --prefix P           names the VMs Pcluster-vm and Pivi-vm [none]
#   --cluster-app ARGS   the cluster guest's application [gm.app=cluster gm.frames=10000000]
#   --ivi-app ARGS       the infotainment guest's application [gm.app=flood gm.iterations=4]
#   --accel kvm|qemu     skip the detection
#   --no-mediatord       write the config, do not start mediatord
# ARGS are the guest's kernel arguments (vm-configs/guest/init).
set -euo pipefail
SRCROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
CONFIG=/etc/gpu-mediator/mediatord.conf
STATE_DIR=/var/lib/gpu-mediator
RUN_DIR=/run/gpu-mediator
LOG_DIR=/var/log/gpu-mediator
BUILD=$SRCROOT/build
PREFIX=
CLUSTER_APP="gm.app=cluster gm.frames=10000000"
IVI_APP="gm.app=flood gm.iterations=4"
ACCEL=
START_MEDIATORD=1

say() { echo "install: $*"; }
die() {
  echo "install: $*" >&2
  exit 1
}
usage() {
  sed -n '3,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&"${1:-1}"
}

while [ $# -gt 0 ]; do
  case $1 in
  --config | --state-dir | --run-dir | --log-dir | --build-dir | --prefix | --cluster-app | \
    --ivi-app | --accel)
    [ $# -ge 2 ] || { echo "install: $1 needs a value (see --help)" >&2; exit 2; }
    case $1 in
    --config) CONFIG=$2 ;;
    --state-dir) STATE_DIR=$2 ;;
    --run-dir) RUN_DIR=$2 ;;
    --log-dir) LOG_DIR=$2 ;;
    --build-dir) BUILD=$2 ;;
    --prefix) PREFIX=$2 ;;
    --cluster-app) CLUSTER_APP=$2 ;;
    --ivi-app) IVI_APP=$2 ;;
    --accel) ACCEL=$2 ;;
    esac
    shift 2
    ;;
  --no-mediatord) START_MEDIATORD=0; shift ;;
  -h | --help) usage; exit 0 ;;
  *) echo "install: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case $ACCEL in "" | kvm | qemu) ;; *) echo "install: --accel is kvm or qemu" >&2; exit 2 ;; esac
for d in "$CONFIG" "$STATE_DIR" "$RUN_DIR" "$LOG_DIR" "$BUILD"; do
  case $d in /*) ;; *) echo "install: '$d' is not an absolute path" >&2; exit 2 ;; esac
  case $d in *[!A-Za-z0-9/._-]*) echo "install: '$d': use A-Z a-z 0-9 / . _ - only" >&2; exit 2 ;; esac
done
case $PREFIX in *[!A-Za-z0-9._-]*) echo "install: --prefix: use A-Z a-z 0-9 . _ - only" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || die "needs root (packages, libvirt, /run)"

say "packages"
"$SRCROOT/scripts/install-deps.sh"
if [ ! -x "$BUILD/mediator/daemon/mediatord" ] || [ ! -x "$BUILD/mediator/worker/mediator-worker" ]; then
  say "building $BUILD"
  [ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null
  ninja -C "$BUILD" >/dev/null
fi

say "guest image"
GUEST=$STATE_DIR/guest
mkdir -p "$GUEST"
"$SRCROOT/vm-configs/guest/build.sh" "$GUEST" | tail -1
# libvirt's QEMU (user libvirt-qemu) reads them.
chmod 0755 "$STATE_DIR" "$GUEST"
chmod 0644 "$GUEST/vmlinuz" "$GUEST/initrd.img"

say "libvirt"
if [ -d /run/systemd/system ]; then
  systemctl start virtlogd.socket libvirtd.service
else
  "$SRCROOT/vm-configs/start-libvirt.sh"
fi
VIRSH=(virsh -q -c qemu:///system)

say "mediatord configuration"
mkdir -p "$(dirname -- "$CONFIG")" "$RUN_DIR" "$LOG_DIR"
if [ -f "$CONFIG" ]; then
  say "kept $CONFIG (remove it to have it written anew)"
else
  sed -e "s|/run/gpu-mediator|$RUN_DIR|g; s|/var/lib/gpu-mediator|$STATE_DIR|g" \
    "$SRCROOT/vm-configs/mediatord-vms.conf" >"$CONFIG.tmp"
  mv "$CONFIG.tmp" "$CONFIG"
  say "wrote $CONFIG"
fi
"$BUILD/mediator/daemon/mediatord" --config "$CONFIG" --check >/dev/null
control=$(sed -n 's/^[[:space:]]*control_socket[[:space:]]*=[[:space:]]*\([^[:space:];]*\).*/\1/p' "$CONFIG" | head -1)
control=${control:-/run/gpu-mediator/control.sock}
socket_of() { # DOMAIN: its vhost_user_socket in $CONFIG
  awk -v want="[domain $1]" '/^\[/ { sec = $0 } sec == want && $1 == "vhost_user_socket" { print $3 }' "$CONFIG"
}
if [ "$START_MEDIATORD" = 1 ]; then
  if "$BUILD/mediator/tools/mediatorctl" --socket "$control" status >/dev/null 2>&1; then
    say "mediatord answers on $control"
  else
    say "starting mediatord (log: $LOG_DIR/mediatord.log)"
    MEDIATOR_WORKER=$BUILD/mediator/worker/mediator-worker \
      setsid "$BUILD/mediator/daemon/mediatord" --config "$CONFIG" </dev/null >>"$LOG_DIR/mediatord.log" 2>&1 &
    echo $! >"$RUN_DIR/mediatord.pid"
    for _ in $(seq 100); do
      "$BUILD/mediator/tools/mediatorctl" --socket "$control" status >/dev/null 2>&1 && break
      kill -0 "$(cat "$RUN_DIR/mediatord.pid")" 2>/dev/null ||
        { tail -5 "$LOG_DIR/mediatord.log" >&2; die "mediatord exited"; }
      sleep 0.1
    done
  fi
fi

say "virtual machines"
if [ -z "$ACCEL" ]; then
  ACCEL=$("$SRCROOT/vm-configs/detect-accel.sh" "$GUEST/vmlinuz" "$GUEST/initrd.img")
fi
define() { # TEMPLATE NAME DOMAIN APP
  local xml=$STATE_DIR/$2.xml sock
  sock=$(socket_of "$3")
  [ -n "$sock" ] || die "$CONFIG: [domain $3] has no vhost_user_socket"
  "$SRCROOT/vm-configs/render-xml.sh" "$SRCROOT/vm-configs/$1.xml" NAME="$2" MEMORY_MIB=1024 \
    VCPUS=1 KERNEL="$GUEST/vmlinuz" INITRD="$GUEST/initrd.img" CMDLINE="quiet $4" \
    SERIAL_LOG="$LOG_DIR/$2.serial.log" GPU_SOCKET="$sock" VIRT_TYPE="$ACCEL" >"$xml"
  "${VIRSH[@]}" define "$xml" >/dev/null
  say "defined $2 (type $ACCEL, GPU: domain $3 on $sock, serial: $LOG_DIR/$2.serial.log)"
}
define cluster-vm "${PREFIX}cluster-vm" cluster "$CLUSTER_APP"
define ivi-vm "${PREFIX}ivi-vm" ivi "$IVI_APP"
say "done. Start the VMs and watch the GPU:"
say "  virsh start ${PREFIX}cluster-vm; virsh start ${PREFIX}ivi-vm"
say "  $BUILD/mediator/tools/mediatorctl --socket $control show-budgets --contexts"
