#!/bin/bash
# SPDX-License-Identifier: MIT
# vm-configs/install.sh: sets this host up for cluster-vm and ivi-vm, so that
# after it `virsh start cluster-vm` and `virsh start ivi-vm` boot guests whose
# unmodified GL ES apps render through a running mediatord; with --vms 4
# also hud-vm (a head-up display, a second safety domain, 30 Hz) and
# rear-vm (the rear seats, a second normal domain, weight 1 against the
# head unit's 3). Idempotent: run it again after a change, it reuses what
# is there. Needs root.
#
#  1. installs the Debian packages (scripts/install-deps.sh); takes the
#     installed package gpu-mediator's programs (/usr/sbin/mediatord, its
#     worker and launcher, /usr/bin/mediatorctl) where it is installed and
#     no --build-dir is given, else a meson build's (build/ in the source
#     tree), built where it is not;
#  2. builds or reuses the guest image (vm-configs/guest/build.sh);
#  3. writes mediatord's configuration for the VMs (from
#     vm-configs/mediatord-vms.conf, with --vms 4 mediatord-vms4.conf:
#     learned periods, weights) unless the file is there already (an
#     integrator's edits, or the package's configuration, are kept), and
#     starts mediatord with it unless one answers on its control socket.
#     In a kept file, cluster-vm takes [domain cluster], or else the first
#     safety domain, and ivi-vm [domain ivi], or else the first normal one
#     (the package's [domain infotainment]); with --vms 4, hud-vm takes
#     [domain hud] and rear-vm [domain rear], which a kept file must have
#     (or give --hud-domain, --rear-domain); the file gets what the VMs
#     need where it lacks it (the file before is kept as FILE.before-vms):
#     each VM's name in its domain's vms (libvirt's own vhost-user path),
#     or socket_owner = libvirt-qemu (the fallback, where libvirt's QEMU
#     opens the domain's vhost_user_socket itself);
#  4. starts virtlogd and libvirtd where no init system does
#     (vm-configs/start-libvirt.sh);
#  5. libvirt's own vhost-user path: where the package's vhost-user
#     descriptor (/usr/share/qemu/vhost-user/40-gpu-mediator.json) does not
#     reach this mediatord (no package, or another vm_socket), writes
#     /etc/qemu/vhost-user/40-gpu-mediator.json naming a launcher of this
#     build for it (STATE_DIR/gpu-mediator-vm-gpu);
#  6. renders cluster-vm.xml and ivi-vm.xml for this host (hud-vm from
#     cluster-vm.xml, rear-vm from ivi-vm.xml; libvirt domain
#     type kvm or qemu, as vm-configs/detect-accel.sh finds) and
#     `virsh define`s them (a defined VM is updated; a running one takes the
#     new definition at its next start).
#
# Options (defaults in brackets):
#   --config FILE        mediatord's configuration [/etc/gpu-mediator/mediatord.conf]
#   --state-dir DIR      guest image, rendered XML, models [/var/lib/gpu-mediator]
#   --run-dir DIR        sockets, control socket, mediatord.pid [/run/gpu-mediator]
#   --log-dir DIR        mediatord.log and the guests' serial logs [/var/log/gpu-mediator]
#   --build-dir DIR      the meson build to run mediatord from [the package's
#                        programs where gpu-mediator is installed, else build/
#                        in the source tree]
#   --prefix P           names the VMs Pcluster-vm and Pivi-vm [none]
#   --vms 2|4            two VMs, or four: also hud-vm and rear-vm [2]
#   --cluster-app ARGS   the cluster guest's application [gm.app=cluster gm.frames=10000000]
#   --ivi-app ARGS       the infotainment guest's application [gm.app=flood gm.iterations=4]
#   --hud-app ARGS       the head-up display's [gm.app=hud gm.frames=10000000]
#   --rear-app ARGS      the rear seats' [gm.app=flood gm.iterations=4]
#   --cluster-domain D   mediatord's domain for cluster-vm [see 3.]
#   --ivi-domain D       mediatord's domain for ivi-vm [see 3.]
#   --hud-domain D       ... for hud-vm [hud]
#   --rear-domain D      ... for rear-vm [rear]
#   --accel kvm|qemu     skip the detection
#   --gpu-path libvirt|commandline
#                        the VMs' GPU: libvirt's vhost-user video device, or
#                        <qemu:commandline> (the fallback) [libvirt where
#                        libvirt >= 6.1]
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
HUD_APP="gm.app=hud gm.frames=10000000"
REAR_APP="gm.app=flood gm.iterations=4"
VMS=2
HUD_DOMAIN=
REAR_DOMAIN=
ACCEL=
START_MEDIATORD=1
CLUSTER_DOMAIN=
IVI_DOMAIN=
GPU_PATH=
BUILD_GIVEN=0

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
    --ivi-app | --accel | --cluster-domain | --ivi-domain | --gpu-path | --vms | --hud-app | \
    --rear-app | --hud-domain | --rear-domain)
    [ $# -ge 2 ] || { echo "install: $1 needs a value (see --help)" >&2; exit 2; }
    case $1 in
    --config) CONFIG=$2 ;;
    --state-dir) STATE_DIR=$2 ;;
    --run-dir) RUN_DIR=$2 ;;
    --log-dir) LOG_DIR=$2 ;;
    --build-dir) BUILD=$2 BUILD_GIVEN=1 ;;
    --prefix) PREFIX=$2 ;;
    --cluster-app) CLUSTER_APP=$2 ;;
    --ivi-app) IVI_APP=$2 ;;
    --accel) ACCEL=$2 ;;
    --cluster-domain) CLUSTER_DOMAIN=$2 ;;
    --ivi-domain) IVI_DOMAIN=$2 ;;
    --gpu-path) GPU_PATH=$2 ;;
    --vms) VMS=$2 ;;
    --hud-app) HUD_APP=$2 ;;
    --rear-app) REAR_APP=$2 ;;
    --hud-domain) HUD_DOMAIN=$2 ;;
    --rear-domain) REAR_DOMAIN=$2 ;;
    esac
    shift 2
    ;;
  --no-mediatord) START_MEDIATORD=0; shift ;;
  -h | --help) usage; exit 0 ;;
  *) echo "install: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case $ACCEL in "" | kvm | qemu) ;; *) echo "install: --accel is kvm or qemu" >&2; exit 2 ;; esac
case $GPU_PATH in "" | libvirt | commandline) ;; *) echo "install: --gpu-path is libvirt or commandline" >&2; exit 2 ;; esac
case $VMS in 2 | 4) ;; *) echo "install: --vms is 2 or 4" >&2; exit 2 ;; esac
for d in "$CONFIG" "$STATE_DIR" "$RUN_DIR" "$LOG_DIR" "$BUILD"; do
  case $d in /*) ;; *) echo "install: '$d' is not an absolute path" >&2; exit 2 ;; esac
  case $d in *[!A-Za-z0-9/._-]*) echo "install: '$d': use A-Z a-z 0-9 / . _ - only" >&2; exit 2 ;; esac
done
case $PREFIX in *[!A-Za-z0-9._-]*) echo "install: --prefix: use A-Z a-z 0-9 . _ - only" >&2; exit 2 ;; esac
case $CLUSTER_DOMAIN$IVI_DOMAIN$HUD_DOMAIN$REAR_DOMAIN in *[!A-Za-z0-9._-]*) echo "install: a domain name: use A-Z a-z 0-9 . _ - only" >&2; exit 2 ;; esac
[ "$(id -u)" = 0 ] || die "needs root (packages, libvirt, /run)"

say "packages"
"$SRCROOT/scripts/install-deps.sh"
if [ "$BUILD_GIVEN" = 0 ] &&
  [ "$(dpkg-query -W -f='${db:Status-Abbrev}' gpu-mediator 2>/dev/null)" = "ii " ] &&
  [ -x /usr/bin/mediatorctl ]; then
  FROM_PACKAGE=1
  MEDIATORD=/usr/sbin/mediatord
  MEDIATORCTL=/usr/bin/mediatorctl
  WORKER=/usr/libexec/gpu-mediator/mediator-worker
  LAUNCHER=/usr/libexec/gpu-mediator/gpu-mediator-vm-gpu
  say "programs: the installed package gpu-mediator's"
else
  FROM_PACKAGE=0
  MEDIATORD=$BUILD/mediator/daemon/mediatord
  MEDIATORCTL=$BUILD/mediator/tools/mediatorctl
  WORKER=$BUILD/mediator/worker/mediator-worker
  LAUNCHER=$BUILD/mediator/launcher/gpu-mediator-vm-gpu
  if [ ! -x "$MEDIATORD" ] || [ ! -x "$WORKER" ] || [ ! -x "$MEDIATORCTL" ] || [ ! -x "$LAUNCHER" ]; then
    say "building $BUILD"
    [ -f "$BUILD/build.ninja" ] || meson setup "$BUILD" >/dev/null
    ninja -C "$BUILD" >/dev/null
  fi
  say "programs: the build $BUILD"
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
if [ -z "$GPU_PATH" ]; then
  # libvirt's <video><driver name='vhostuser'/> came with libvirt 6.1.0.
  lv=$("${VIRSH[@]}" version | sed -n 's/^Using library: libvirt \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
  read -r lv_major lv_minor <<<"${lv:-0 0}"
  if [ "$lv_major" -gt 6 ] || { [ "$lv_major" = 6 ] && [ "$lv_minor" -ge 1 ]; }; then
    GPU_PATH=libvirt
  else
    GPU_PATH=commandline
    say "libvirt $lv_major.$lv_minor has no vhost-user video device (6.1 has): the VMs' GPU goes" \
      "through <qemu:commandline>"
  fi
fi

say "mediatord configuration"
mkdir -p "$(dirname -- "$CONFIG")" "$RUN_DIR" "$LOG_DIR"
KEPT=0
if [ -f "$CONFIG" ]; then
  KEPT=1
  say "kept $CONFIG (remove it to have it written anew)"
else
  template=mediatord-vms.conf
  [ "$VMS" = 2 ] || template=mediatord-vms4.conf
  sed -e "s|/run/gpu-mediator|$RUN_DIR|g; s|/var/lib/gpu-mediator|$STATE_DIR|g" \
    "$SRCROOT/vm-configs/$template" >"$CONFIG.tmp"
  mv "$CONFIG.tmp" "$CONFIG"
  say "wrote $CONFIG"
fi
"$MEDIATORD" --config "$CONFIG" --check >/dev/null
control=$(sed -n 's/^[[:space:]]*control_socket[[:space:]]*=[[:space:]]*\([^[:space:];]*\).*/\1/p' "$CONFIG" | head -1)
control=${control:-/run/gpu-mediator/control.sock}
# key_of DOMAIN KEY: KEY's value in [domain DOMAIN] of $CONFIG (empty: not set).
key_of() {
  awk -v want="[domain $1]" -v key="$2" '
    /^[[:space:]]*\[/ { sec = $0; sub(/^[[:space:]]+/, "", sec); sub(/[[:space:]]+$/, "", sec) }
    sec == want && $1 == key && $2 == "=" { print $3 }' "$CONFIG"
}
socket_of() { key_of "$1" vhost_user_socket; }
# The socket libvirt's own path hands VMs to ([mediator] vm_socket).
VM_SOCKET=$(sed -n 's/^[[:space:]]*vm_socket[[:space:]]*=[[:space:]]*\([^[:space:];]*\).*/\1/p' "$CONFIG" | head -1)
VM_SOCKET=${VM_SOCKET:-/run/gpu-mediator/vms.sock}
# vm_domain NAME CLASS: NAME when there is a [domain NAME] (with a
# vhost_user_socket for the fallback), else the first CLASS domain (class
# normal where none is set).
vm_domain() {
  awk -v want="$1" -v class="$2" -v need_sock="$([ "$GPU_PATH" = commandline ] && echo 1 || echo 0)" '
    function done_section() {
      if (name == "" || (need_sock && !sock)) return
      if (name == want) named = name
      if (cls == class && first == "") first = name
    }
    /^[[:space:]]*\[domain / { done_section(); name = $2; sub(/\]$/, "", name); sock = 0; cls = "normal"; next }
    /^[[:space:]]*\[/ { done_section(); name = ""; next }
    $1 == "vhost_user_socket" && $2 == "=" { sock = 1 }
    $1 == "class" && $2 == "=" { cls = $3 }
    END { done_section(); print (named != "" ? named : first) }' "$CONFIG"
}
CLUSTER_DOMAIN=${CLUSTER_DOMAIN:-$(vm_domain cluster safety)}
IVI_DOMAIN=${IVI_DOMAIN:-$(vm_domain ivi normal)}
what="domain"
[ "$GPU_PATH" = libvirt ] || what="domain with a vhost_user_socket"
[ -n "$CLUSTER_DOMAIN" ] || die "$CONFIG: no safety $what for cluster-vm"
[ -n "$IVI_DOMAIN" ] || die "$CONFIG: no normal $what for ivi-vm"
# The VMs: template, name, domain, application.
VM_LIST=("cluster-vm ${PREFIX}cluster-vm $CLUSTER_DOMAIN" "ivi-vm ${PREFIX}ivi-vm $IVI_DOMAIN")
VM_APPS=("$CLUSTER_APP" "$IVI_APP")
if [ "$VMS" = 4 ]; then
  HUD_DOMAIN=${HUD_DOMAIN:-hud} REAR_DOMAIN=${REAR_DOMAIN:-rear}
  # class_of DOMAIN: its class in $CONFIG (normal where none is set), empty without it.
  class_of() {
    awk -v want="[domain $1]" '
      /^[[:space:]]*\[/ { sec = $0; sub(/^[[:space:]]+/, "", sec); sub(/[[:space:]]+$/, "", sec)
        if (sec == want) { found = 1; cls = "normal" } }
      sec == want && $1 == "class" && $2 == "=" { cls = $3 }
      END { if (found) print cls }' "$CONFIG"
  }
  [ "$(class_of "$HUD_DOMAIN")" = safety ] ||
    die "$CONFIG: no safety [domain $HUD_DOMAIN] for hud-vm (see vm-configs/mediatord-vms4.conf, or --hud-domain)"
  [ "$(class_of "$REAR_DOMAIN")" = normal ] ||
    die "$CONFIG: no normal [domain $REAR_DOMAIN] for rear-vm (see vm-configs/mediatord-vms4.conf, or --rear-domain)"
  VM_LIST+=("cluster-vm ${PREFIX}hud-vm $HUD_DOMAIN" "ivi-vm ${PREFIX}rear-vm $REAR_DOMAIN")
  VM_APPS+=("$HUD_APP" "$REAR_APP")
fi
# reachable DOMAIN: libvirt's QEMU (libvirt-qemu) may open its socket:
# its owner, or a member of its group (0660, the default mode).
reachable() {
  local owner group
  owner=$(key_of "$1" socket_owner) group=$(key_of "$1" socket_group)
  [ "$owner" = libvirt-qemu ] ||
    { [ -n "$group" ] && id -nG libvirt-qemu 2>/dev/null | tr ' ' '\n' | grep -qx -- "$group"; }
}
EDITED=0
# keep_before: the file as it was before this run's first change.
keep_before() { [ -f "$CONFIG.before-vms" ] || cp -p "$CONFIG" "$CONFIG.before-vms"; }
# list_vm DOMAIN VM: VM in DOMAIN's vms (libvirt's own path finds its domain there).
list_vm() {
  local vms
  vms=$(awk -v want="[domain $1]" '
    /^[[:space:]]*\[/ { sec = $0; sub(/^[[:space:]]+/, "", sec); sub(/[[:space:]]+$/, "", sec) }
    sec == want && $1 == "vms" && $2 == "=" { sub(/^[^=]*=[[:space:]]*/, ""); sub(/[[:space:]]*[;#].*$/, ""); print }' "$CONFIG")
  tr ' ' '\n' <<<"$vms" | grep -qx -- "$2" && return 0
  keep_before
  awk -v want="[domain $1]" -v vms="${vms:+$vms }$2" '
    /^[[:space:]]*\[/ { sec = $0; sub(/^[[:space:]]+/, "", sec); sub(/[[:space:]]+$/, "", sec) }
    sec == want && $1 == "vms" && $2 == "=" { next }
    { print }
    sec == want && /^[[:space:]]*\[/ { print "vms = " vms }' "$CONFIG" >"$CONFIG.tmp"
  mv "$CONFIG.tmp" "$CONFIG"
  EDITED=1
  say "set vms = ${vms:+$vms }$2 in [domain $1] of $CONFIG: libvirt's vhost-user path hands" \
    "$2's GPU to it (the file before: $CONFIG.before-vms)"
}
if [ "$GPU_PATH" = libvirt ]; then
  for vm in "${VM_LIST[@]}"; do
    read -r _ name domain <<<"$vm"
    list_vm "$domain" "$name"
  done
fi
for d in $(for vm in "${VM_LIST[@]}"; do read -r _ _ domain <<<"$vm"; echo "$domain"; done | sort -u); do
  [ "$GPU_PATH" = commandline ] || continue
  reachable "$d" && continue
  [ "$KEPT" = 1 ] || die "$CONFIG: [domain $d]'s socket is not libvirt-qemu's"
  keep_before
  awk -v want="[domain $d]" '
    /^[[:space:]]*\[/ { sec = $0; sub(/^[[:space:]]+/, "", sec); sub(/[[:space:]]+$/, "", sec) }
    sec == want && $1 == "socket_owner" && $2 == "=" { next }
    { print }
    sec == want && /^[[:space:]]*\[/ { print "socket_owner = libvirt-qemu" }' "$CONFIG" >"$CONFIG.tmp"
  mv "$CONFIG.tmp" "$CONFIG"
  EDITED=1
  say "set socket_owner = libvirt-qemu in [domain $d] of $CONFIG: libvirt's QEMU opens its" \
    "socket (the file before: $CONFIG.before-vms)"
done
"$MEDIATORD" --config "$CONFIG" --check >/dev/null
if [ "$START_MEDIATORD" = 1 ]; then
  if "$MEDIATORCTL" --socket "$control" status >/dev/null 2>&1; then
    say "mediatord answers on $control"
    if [ "$EDITED" = 1 ] && [ -d /run/systemd/system ]; then
      systemctl restart gpu-mediator # keeps its clients (doc/operating.md)
      say "restarted gpu-mediator for its new configuration"
    elif [ "$EDITED" = 1 ]; then
      die "mediatord runs with the configuration before: restart it, then run this again"
    fi
  elif [ "$FROM_PACKAGE" = 1 ] && [ -d /run/systemd/system ]; then
    systemctl start gpu-mediator
    say "started gpu-mediator"
  else
    say "starting mediatord (log: $LOG_DIR/mediatord.log)"
    # The package's mediatord finds its installed worker; a build's is named.
    worker_env=()
    [ "$FROM_PACKAGE" = 1 ] || worker_env=(MEDIATOR_WORKER="$WORKER")
    env "${worker_env[@]}" \
      setsid "$MEDIATORD" --config "$CONFIG" </dev/null >>"$LOG_DIR/mediatord.log" 2>&1 &
    echo $! >"$RUN_DIR/mediatord.pid"
    for _ in $(seq 100); do
      "$MEDIATORCTL" --socket "$control" status >/dev/null 2>&1 && break
      kill -0 "$(cat "$RUN_DIR/mediatord.pid")" 2>/dev/null ||
        { tail -5 "$LOG_DIR/mediatord.log" >&2; die "mediatord exited"; }
      sleep 0.1
    done
  fi
fi

if [ "$GPU_PATH" = libvirt ]; then
  # libvirt runs the first descriptor of type gpu, by file name, /etc's over /usr/share's.
  PACKAGED=/usr/share/qemu/vhost-user/40-gpu-mediator.json
  DESCRIPTOR=/etc/qemu/vhost-user/40-gpu-mediator.json
  if [ -f "$PACKAGED" ] && [ "$VM_SOCKET" = /run/gpu-mediator/vms.sock ] &&
    [ ! -f "$DESCRIPTOR" ]; then
    say "libvirt's vhost-user path: the package's $PACKAGED"
  else
    launcher=$STATE_DIR/gpu-mediator-vm-gpu
    printf '#!/bin/sh\n# Written by vm-configs/install.sh: launcher %s for vm_socket %s.\nexec %s --socket=%s "$@"\n' \
      "$LAUNCHER" "$VM_SOCKET" "$LAUNCHER" "$VM_SOCKET" >"$launcher.tmp"
    chmod 0755 "$launcher.tmp"
    mv "$launcher.tmp" "$launcher"
    mkdir -p "$(dirname -- "$DESCRIPTOR")"
    printf '{\n  "description": "gpu-mediator (vm-configs/install.sh): mediatord on %s",\n  "type": "gpu",\n  "binary": "%s"\n}\n' \
      "$VM_SOCKET" "$launcher" >"$DESCRIPTOR.tmp"
    mv "$DESCRIPTOR.tmp" "$DESCRIPTOR"
    say "libvirt's vhost-user path: wrote $DESCRIPTOR (launcher $launcher)"
  fi
fi

say "virtual machines"
if [ -z "$ACCEL" ]; then
  ACCEL=$("$SRCROOT/vm-configs/detect-accel.sh" "$GUEST/vmlinuz" "$GUEST/initrd.img")
fi
define() { # TEMPLATE NAME DOMAIN APP
  local xml=$STATE_DIR/$2.xml sock gpu
  local -a fallback=()
  gpu="domain $3 through libvirt's vhost-user device"
  if [ "$GPU_PATH" = commandline ]; then
    sock=$(socket_of "$3")
    [ -n "$sock" ] || die "$CONFIG: [domain $3] has no vhost_user_socket"
    fallback=(GPU_SOCKET="$sock")
    gpu="domain $3 on $sock"
  fi
  "$SRCROOT/vm-configs/render-xml.sh" "$SRCROOT/vm-configs/$1.xml" NAME="$2" MEMORY_MIB=1024 \
    VCPUS=1 KERNEL="$GUEST/vmlinuz" INITRD="$GUEST/initrd.img" CMDLINE="quiet $4" \
    SERIAL_LOG="$LOG_DIR/$2.serial.log" VIRT_TYPE="$ACCEL" "${fallback[@]}" >"$xml"
  "${VIRSH[@]}" define "$xml" >/dev/null
  say "defined $2 (type $ACCEL, GPU: $gpu, serial: $LOG_DIR/$2.serial.log)"
}
starts=()
for i in "${!VM_LIST[@]}"; do
  read -r template name domain <<<"${VM_LIST[$i]}"
  define "$template" "$name" "$domain" "${VM_APPS[$i]}"
  starts+=("virsh start $name")
done
printf -v line '%s; ' "${starts[@]}"
say "done. Start the VMs and watch the GPU:"
say "  ${line%; }"
say "  $MEDIATORCTL --socket $control show-budgets --contexts"
