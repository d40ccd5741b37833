#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian packages (issue 18). From a copy of the source tree,
# `dpkg-buildpackage -b -us -uc` builds gpu-mediator, gpu-mediator-tools
# and gm-fence-dkms, each holds what it should, and lintian finds no
# error. Installed on this machine with dpkg -i (a machine that has
# gpu-mediator installed already is skipped: the test would replace it), their maintainer scripts make the
# workers' users and the directories and enable the unit; the installed
# configuration passes --check; the installed mediatord finds its installed
# worker by itself and, with mediatorctl, serves a vtest client; libvirt's
# vhost-user descriptor names the installed VM launcher, and the AppArmor
# abstractions are included from libvirt's local/ files and parse; and
# dpkg --purge removes all of it again.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering
[ "$(id -u)" = 0 ] || skip "needs root, for dpkg -i"
require_cmd virsh libvirt-clients
require_cmd libvirtd libvirt-daemon-system
require_cmd qemu-system-x86_64 qemu-system-x86
require_cmd jq jq
[ "$(gm_qemu_major)" -ge 8 ] 2>/dev/null ||
  skip "QEMU $(gm_qemu_major): vhost-user-gpu-pci needs QEMU >= 8 here (bookworm-backports)"
for c in dpkg-buildpackage dpkg-checkbuilddeps fakeroot; do
  command -v "$c" >/dev/null || fail "$c is missing (scripts/install-deps.sh installs it)"
done
for p in gpu-mediator gpu-mediator-tools; do
  if dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^[ih]i'; then
    skip "package $p is installed on this machine; this test would replace it"
  fi
done

SRC=$(cd -- "$TESTS_SRCDIR/.." && pwd)
PKG=$TMP/pkg
mkdir -p "$PKG/src"
if git -C "$SRC" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  (cd "$SRC" && git ls-files --cached --others --exclude-standard -z | cpio -pdm0 --quiet "$PKG/src")
else
  (cd "$SRC" && tar --exclude='./build*' --exclude=./bench-fuzz-out -cf - .) | tar -xf - -C "$PKG/src"
fi
(cd "$PKG/src" && dpkg-checkbuilddeps) >"$PKG/deps.log" 2>&1 ||
  fail "build dependencies missing: $(cat "$PKG/deps.log")"
t0=$SECONDS
(cd "$PKG/src" && DEB_BUILD_OPTIONS="parallel=$(nproc) nocheck" dpkg-buildpackage -b -us -uc) \
  >"$PKG/build.log" 2>&1 || fail "dpkg-buildpackage failed: $(tail -15 "$PKG/build.log")"
log "dpkg-buildpackage built $(cd "$PKG" && echo *.deb) in $((SECONDS - t0)) s"

# contents PACKAGE: the files of PACKAGE's .deb, one per line.
contents() {
  dpkg-deb -c "$PKG/$1"_*.deb | awk '{print $6}' | grep -v '/$' | sed 's|^\.||'
}
expect_in() {
  local deb=$1 f
  shift
  for f in "$@"; do
    contents "$deb" | grep -x -- "$f" >/dev/null || fail "$deb.deb lacks $f"
  done
}
expect_in gpu-mediator /usr/sbin/mediatord /usr/libexec/gpu-mediator/mediator-worker \
  /usr/libexec/gpu-mediator/mediator-calibrate /usr/bin/mediatorctl \
  /usr/libexec/gpu-mediator/gpu-mediator-vm-gpu /usr/share/qemu/vhost-user/40-gpu-mediator.json \
  /etc/apparmor.d/abstractions/gpu-mediator-qemu /etc/apparmor.d/abstractions/gpu-mediator-libvirtd \
  /etc/gpu-mediator/mediatord.conf /lib/systemd/system/gpu-mediator.service \
  /lib/systemd/system/gpu-mediator-metrics.service /lib/systemd/system/gpu-mediator-metrics.timer \
  /usr/lib/tmpfiles.d/gpu-mediator.conf /usr/lib/sysusers.d/gpu-mediator.conf \
  /usr/share/man/man8/mediatord.8.gz /usr/share/man/man5/mediatord.conf.5.gz \
  /usr/share/man/man1/mediatorctl.1.gz /usr/share/bash-completion/completions/mediatorctl
expect_in gpu-mediator-tools /usr/bin/mediator-sim /usr/bin/mediator-exec \
  /usr/share/man/man1/mediator-sim.1.gz /usr/share/man/man1/mediator-exec.1.gz
expect_in gm-fence-dkms /usr/src/gm-fence-0.1.0/dkms.conf /usr/src/gm-fence-0.1.0/gm_fence.c \
  /usr/src/gm-fence-0.1.0/Kbuild /usr/src/gm-fence-0.1.0/uapi/gm_fence.h
! contents gpu-mediator | grep '^/usr/src' >/dev/null || fail "gpu-mediator.deb holds module sources"
dpkg-deb -f "$PKG"/gpu-mediator_*.deb Depends | grep -q libvirglrenderer1 ||
  fail "gpu-mediator.deb does not depend on libvirglrenderer1"

# Debian's checks of the packages: no error (as root: lintian warns about that).
command -v lintian >/dev/null || fail "lintian is missing (scripts/install-deps.sh installs it)"
lintian --fail-on error --allow-root "$PKG"/gpu-mediator_*.changes >"$PKG/lintian.log" 2>&1 ||
  fail "lintian finds errors: $(grep '^E:' "$PKG/lintian.log" | head -20)"
log "lintian: no error ($(grep -c '^W:' "$PKG/lintian.log" || true) warnings)"

# mediatord's state and caches where the package keeps them (a build's VM
# set-up uses the same places): this machine's own, if any, is put aside
# and back, since the purge below removes what the package's users own.
HOST_STATE=$TMP/host-state
mkdir -p "$HOST_STATE"
put_back_host_state() {
  [ ! -d "$HOST_STATE/lib" ] || { rm -rf /var/lib/gpu-mediator && mv "$HOST_STATE/lib" /var/lib/gpu-mediator; }
  for d in "$HOST_STATE"/cache/*; do
    [ -d "$d" ] || continue
    mkdir -p /var/cache/gpu-mediator
    rm -rf "/var/cache/gpu-mediator/${d##*/}" && mv "$d" /var/cache/gpu-mediator/
  done
}
gm_on_exit put_back_host_state
[ ! -d /var/lib/gpu-mediator ] || mv /var/lib/gpu-mediator "$HOST_STATE/lib"
mkdir -p "$HOST_STATE/cache"
for d in /var/cache/gpu-mediator/*; do
  [ -d "$d" ] && [ ! -L "$d" ] || continue
  case $(stat -c %U "$d") in gpu-mediator | gpu-mediator-*) mv "$d" "$HOST_STATE/cache/" ;; esac
done

purge() {
  dpkg --purge gpu-mediator-tools gpu-mediator >"$TMP/purge.log" 2>&1 || true
}
gm_on_exit purge
# libvirt's AppArmor local/ files, to which the postinst adds one marked
# line each: made empty where they are not, as libvirt-daemon-system's
# postinst does (and removed at exit).
AA_LOCAL_QEMU=/etc/apparmor.d/local/abstractions/libvirt-qemu
AA_LOCAL_LIBVIRTD=/etc/apparmor.d/local/usr.sbin.libvirtd
AA_MARK='# added by gpu-mediator'
for f in "$AA_LOCAL_QEMU" "$AA_LOCAL_LIBVIRTD"; do
  [ -e "$f" ] && continue
  mkdir -p "${f%/*}"
  : >"$f"
  gm_on_exit rm -f "$f"
done
! grep -qF "$AA_MARK" "$AA_LOCAL_QEMU" "$AA_LOCAL_LIBVIRTD" ||
  fail "libvirt's AppArmor local/ files hold gpu-mediator's lines before the install"
dpkg -i "$PKG"/gpu-mediator_*_*.deb "$PKG"/gpu-mediator-tools_*_*.deb >"$PKG/install.log" 2>&1 ||
  fail "dpkg -i failed: $(tail -15 "$PKG/install.log")"
for p in gpu-mediator gpu-mediator-tools; do
  [ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$p")" = "ii " ] || fail "$p is not installed"
done
for u in gpu-mediator gpu-mediator-cluster gpu-mediator-infotainment; do
  getent passwd "$u" >/dev/null || fail "the package did not make user $u"
done
[ -d /run/gpu-mediator ] && [ -d /var/lib/gpu-mediator ] && [ -d /var/cache/gpu-mediator ] ||
  fail "the package did not make its directories"
[ -L /etc/systemd/system/multi-user.target.wants/gpu-mediator.service ] ||
  fail "the package did not enable gpu-mediator.service"
/usr/sbin/mediatord --config /etc/gpu-mediator/mediatord.conf --check >"$TMP/check.log" 2>&1 ||
  fail "the installed configuration is not valid: $(cat "$TMP/check.log")"
man -w mediatord.conf >/dev/null 2>&1 || fail "man cannot find mediatord.conf(5)"
# What the installed pages cite is installed: each document named NAME.md
# (/usr/share/doc/gpu-mediator, compressed or not), and no path of the
# source tree (doc/, bench/, scripts/).
for page in mediatord.8 mediatord.conf.5 mediatorctl.1; do
  text=$(zcat -f "$(man -w "${page##*.}" "${page%.*}" 2>/dev/null || echo /dev/null)" | sed 's/\\&//g')
  [ -n "$text" ] || fail "man cannot find $page"
  ! grep -oE '(^|[ (])(doc|bench|scripts)/[A-Za-z0-9_./-]+' <<<"$text" >"$TMP/cited.txt" ||
    fail "$page cites files of the source tree: $(sort -u "$TMP/cited.txt" | tr '\n' ' ')"
  for doc in $(grep -oE '\b[a-z]+\.md\b' <<<"$text" | sort -u); do
    [ -e "/usr/share/doc/gpu-mediator/$doc" ] || [ -e "/usr/share/doc/gpu-mediator/$doc.gz" ] ||
      fail "$page cites $doc, which the package does not install"
  done
done
log "installed: users, directories, the unit enabled, the configuration valid, the documents the pages cite"

# libvirt's vhost-user GPU path: the descriptor names the installed launcher,
# which answers libvirt's --print-capabilities, and sorts before the other
# packages' GPU descriptors there (QEMU's 50-qemu-gpu.json).
python3 - /usr/share/qemu/vhost-user 40-gpu-mediator.json <<'EOF' 2>"$TMP/descriptor.log" ||
import json, os, subprocess, sys
folder, ours = sys.argv[1], sys.argv[2]
d = json.load(open(os.path.join(folder, ours)))
assert d["type"] == "gpu" and d["binary"] == "/usr/libexec/gpu-mediator/gpu-mediator-vm-gpu", d
out = subprocess.run([d["binary"], "--print-capabilities"], check=True, capture_output=True).stdout
assert json.loads(out) == {"type": "gpu", "features": ["virgl"]}, out
gpus = sorted(n for n in os.listdir(folder)
              if n.endswith(".json") and json.load(open(os.path.join(folder, n))).get("type") == "gpu")
assert gpus[0] == ours, gpus
EOF
  fail "the vhost-user descriptor: $(tail -3 "$TMP/descriptor.log")"
# The AppArmor abstractions: included once from libvirt's local/ files; a
# VM's profile and libvirtd's parse with them (parsed only: apparmor_parser
# -Q loads nothing, and this machine's kernel may have no AppArmor).
for f in "$AA_LOCAL_QEMU:gpu-mediator-qemu" "$AA_LOCAL_LIBVIRTD:gpu-mediator-libvirtd"; do
  [ "$(grep -cxF "include if exists <abstractions/${f#*:}>  $AA_MARK" "${f%%:*}")" = 1 ] ||
    fail "${f%%:*} does not include ${f#*:} once: $(cat "${f%%:*}")"
done
if command -v apparmor_parser >/dev/null; then
  [ -e /etc/apparmor.d/abstractions/libvirt-qemu ] && [ -e /etc/apparmor.d/usr.sbin.libvirtd ] ||
    fail "no libvirt AppArmor profiles (libvirt-daemon-system, scripts/install-deps.sh)"
  printf '%s\n' '#include <tunables/global>' \
    'profile libvirt-gpu-mediator-test flags=(attach_disconnected) {' \
    '  #include <abstractions/libvirt-qemu>' '}' >"$TMP/vm.apparmor"
  for profile in "$TMP/vm.apparmor" /etc/apparmor.d/usr.sbin.libvirtd; do
    apparmor_parser -Q -K "$profile" >"$TMP/apparmor.log" 2>&1 ||
      fail "AppArmor profile $profile does not parse: $(grep -v '^Cache' "$TMP/apparmor.log")"
    apparmor_parser -p "$profile" >"$TMP/apparmor.full" 2>/dev/null ||
      fail "apparmor_parser -p $profile failed"
    grep -qE '^ */usr/libexec/gpu-mediator/gpu-mediator-vm-gpu (rm|PUx),' "$TMP/apparmor.full" ||
      fail "AppArmor profile $profile lacks gpu-mediator's rule for the launcher"
  done
  log "the vhost-user descriptor names the launcher; the AppArmor profiles parse with its rules"
else
  log "the vhost-user descriptor names the launcher; no apparmor_parser (package apparmor): profiles not parsed"
fi

# The installed programs serve, the worker found where it was installed.
unset MEDIATOR_WORKER
MEDIATORD=/usr/sbin/mediatord MEDIATORCTL=/usr/bin/mediatorctl
write_config
start_mediatord
"$VTEST_POKE" "$SOCK_B" handshake >"$TMP/poke.log" 2>&1 ||
  fail "the installed mediatord did not serve a vtest client: $(tail -3 "$TMP/poke.log")"
wait_field "$DOMAIN_B" clients 0 10
pgrep -f '^/usr/libexec/gpu-mediator/mediator-worker' >/dev/null && fail "a worker outlived its client"
grep -q "domain $DOMAIN_B: client 1:" "$MEDIATORD_LOG" || fail "mediatord's log shows no client"
gm_stop_mediatord || fail "the installed mediatord did not stop cleanly"
log "the installed mediatord, its worker and mediatorctl served a client"

# The VM set-up on the installed package (the package first, then
# vm-configs/install.sh): install.sh takes the package's programs and its
# configuration, lists each VM in its domain's vms, and starts the installed
# mediatord; both VMs start with plain `virsh start` through the package's
# vhost-user descriptor and launcher, and mediatord's vm_socket serves each
# as the client of its domain. (The guests booting and rendering through
# it: test-libvirt-vms, on a build.)
source "$SRCROOT/vm-configs/vms-lib.sh"
VM_PREFIX=gm-deb-$$-
VMS_LOG_DIR=$TMP/log
PKG_RUN=/run/gpu-mediator
# The package's descriptor, not one an earlier set-up of a build left in /etc.
vms_keep_descriptor "$TMP"
rm -f "$VMS_DESCRIPTOR"
remove_vms() {
  vms_remove "${VM_PREFIX}cluster-vm" "${VM_PREFIX}ivi-vm"
  vms_stop_mediatord "$PKG_RUN" || true
  vms_restore_descriptor "$TMP"
}
gm_on_exit remove_vms
chmod 0711 "$TMP"
t0=$SECONDS
"$SRCROOT/vm-configs/install.sh" --state-dir "$TMP/state" --log-dir "$VMS_LOG_DIR" \
  --prefix "$VM_PREFIX" --cluster-app "gm.app=kmscube gm.frames=1000000" \
  --ivi-app "gm.app=flood gm.iterations=4" >"$TMP/install-vms.log" 2>&1 ||
  fail "vm-configs/install.sh on the package failed: $(tail -8 "$TMP/install-vms.log")"
for want in "programs: the installed package gpu-mediator's" "kept /etc/gpu-mediator/mediatord.conf" \
  "libvirt's vhost-user path: the package's /usr/share/qemu/vhost-user/40-gpu-mediator.json"; do
  grep -qF "install: $want" "$TMP/install-vms.log" ||
    fail "install.sh on the package did not say '$want': $(cat "$TMP/install-vms.log")"
done
/usr/sbin/mediatord --config /etc/gpu-mediator/mediatord.conf --check >"$TMP/check-vms.log" 2>&1 ||
  fail "the package's configuration as install.sh left it is not valid: $(cat "$TMP/check-vms.log")"
for vm in "${VM_PREFIX}cluster-vm" "${VM_PREFIX}ivi-vm"; do
  vms_virsh start "$vm" >"$TMP/start.log" 2>&1 || fail "virsh start $vm failed: $(cat "$TMP/start.log")"
done
for d in cluster:cluster-vm infotainment:ivi-vm; do
  for _ in $(seq 300); do
    grep -q "domain ${d%%:*}: VM ${VM_PREFIX}${d#*:} is client" "$VMS_LOG_DIR/mediatord.log" && break
    sleep 0.1
  done
  grep -q "domain ${d%%:*}: VM ${VM_PREFIX}${d#*:} is client" "$VMS_LOG_DIR/mediatord.log" ||
    fail "the installed mediatord did not serve ${VM_PREFIX}${d#*:} in domain ${d%%:*}:" \
      "$(tail -5 "$VMS_LOG_DIR/mediatord.log")"
done
budgets=$(/usr/bin/mediatorctl --socket "$PKG_RUN/control.sock" show-budgets --json) ||
  fail "the installed mediatorctl did not answer"
for d in cluster infotainment; do
  jq -e --arg d "$d" '.domains[] | select(.name == $d) | .clients == 1' <<<"$budgets" >/dev/null ||
    fail "show-budgets: domain $d has no VM client: $budgets"
done
for vm in "${VM_PREFIX}cluster-vm" "${VM_PREFIX}ivi-vm"; do
  [ "$(vms_virsh domstate "$vm")" = running ] || fail "$vm is not running: $(vms_virsh domstate "$vm")"
done
vms_remove "${VM_PREFIX}cluster-vm" "${VM_PREFIX}ivi-vm"
vms_stop_mediatord "$PKG_RUN" || fail "the installed mediatord did not stop cleanly"
log "the package, then install.sh: both VMs started through the package's descriptor and" \
  "launcher, each its domain's client of the installed mediatord ($((SECONDS - t0)) s)"

dpkg --purge gpu-mediator-tools gpu-mediator >"$TMP/purge.log" 2>&1 ||
  fail "dpkg --purge failed: $(tail -5 "$TMP/purge.log")"
for f in /usr/sbin/mediatord /usr/libexec/gpu-mediator /etc/gpu-mediator /var/lib/gpu-mediator \
  /etc/systemd/system/multi-user.target.wants/gpu-mediator.service \
  /usr/share/qemu/vhost-user/40-gpu-mediator.json /etc/apparmor.d/abstractions/gpu-mediator-qemu \
  /etc/apparmor.d/abstractions/gpu-mediator-libvirtd; do
  [ ! -e "$f" ] || fail "$f is still there after dpkg --purge"
done
! grep -qF "$AA_MARK" "$AA_LOCAL_QEMU" "$AA_LOCAL_LIBVIRTD" ||
  fail "libvirt's AppArmor local/ files keep gpu-mediator's lines after dpkg --purge"
left=$(find /var/cache/gpu-mediator -mindepth 1 -maxdepth 1 \( -user gpu-mediator \
  -o -user gpu-mediator-cluster -o -user gpu-mediator-infotainment \) 2>/dev/null || true)
[ -z "$left" ] || fail "dpkg --purge left the domains' shader caches: $left"
log "dpkg --purge removed it all"

# The other order: the VM set-up first (vm-configs/install.sh writes its
# configuration where none is), then the package. dpkg keeps the file it
# finds (asked, the answer N; --force-confold where nobody is asked), and
# the installed mediatord takes it. (The package first, then install.sh:
# test-libvirt-vms.)
id libvirt-qemu >/dev/null 2>&1 || fail "no user libvirt-qemu (libvirt-daemon-system, scripts/install-deps.sh)"
mkdir -p /etc/gpu-mediator
cp "$SRCROOT/vm-configs/mediatord-vms.conf" /etc/gpu-mediator/mediatord.conf
dpkg -i --force-confold "$PKG"/gpu-mediator_*_*.deb "$PKG"/gpu-mediator-tools_*_*.deb \
  </dev/null >"$PKG/install-2.log" 2>&1 || fail "dpkg -i over the VM set-up's configuration failed: $(tail -15 "$PKG/install-2.log")"
cmp -s "$SRCROOT/vm-configs/mediatord-vms.conf" /etc/gpu-mediator/mediatord.conf ||
  fail "the package replaced the VM set-up's configuration"
/usr/sbin/mediatord --config /etc/gpu-mediator/mediatord.conf --check >"$TMP/check-2.log" 2>&1 ||
  fail "the installed mediatord refuses the VM set-up's configuration: $(cat "$TMP/check-2.log")"
dpkg --purge gpu-mediator-tools gpu-mediator >"$TMP/purge-2.log" 2>&1 ||
  fail "dpkg --purge failed: $(tail -5 "$TMP/purge-2.log")"
[ ! -e /etc/gpu-mediator ] || fail "/etc/gpu-mediator is still there after the second purge"
log "the VM set-up's configuration first, then the package: kept and taken, then purged"
log "PASS"
