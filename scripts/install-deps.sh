#!/bin/bash
# SPDX-License-Identifier: MIT
# Installs the Debian 12 packages gpu-mediator needs to build, test, run the
# demo and run the benchmarks. Idempotent and quick when everything is there:
# it asks dpkg first and only runs apt-get (update + install) for what is
# missing. Needs root (or sudo) only when something must be installed.
set -euo pipefail

packages=(
  # build
  gcc libc6-dev meson ninja-build pkg-config
  libvirglrenderer-dev libinih-dev libcmocka-dev libjson-c-dev
  libepoxy-dev libdrm-dev libgbm-dev libegl-dev libgles-dev libseccomp-dev
  # the service: sd_notify (libsystemd), man pages (scdoc), mediatorctl's completion,
  # and what the install test checks them with (systemd-analyze, man)
  libsystemd-dev scdoc bash-completion systemd man-db
  # the Debian packages (debian/, test-deb), and apparmor_parser for test-deb's
  # parse of libvirt's AppArmor profiles with the package's abstractions
  debhelper dh-dkms fakeroot dpkg-dev lintian apparmor
  # the checks of `mediatorctl metrics` (Prometheus text format parser)
  python3-prometheus-client
  # ASan/UBSan builds with clang, and the formatter
  clang libclang-rt-14-dev clang-format
  # rendering: Mesa llvmpipe for the worker, virpipe for the clients
  libgl1-mesa-dri libegl-mesa0 libgles2
  # clients, display and the baseline vtest server
  glmark2-es2-x11 mesa-utils-bin xvfb xauth virgl-server
  # test and demo tooling: timeout, pgrep, unshare/mount, JSON checks
  coreutils procps util-linux jq
  # screenshots of the guests (virsh screenshot writes PNG or PPM)
  python3-pil
  # GL ES conformance through mediatord against virgl_test_server (bench/conformance)
  piglit
  # CDF plots of bench/accuracy
  gnuplot-nox
  # ... and under libvirt (vm-configs/, test-libvirt-vms)
  libvirt-daemon-system libvirt-clients libvirt-daemon-driver-qemu
  # ... and the guest image recipe (vm-configs/guest/build.sh)
  debootstrap gzip
  # host-kmod: Debian's kernel and its headers (kbuild, the test's guest), busybox and cpio
  # for the test's initramfs, make and kmod
  linux-image-amd64 linux-headers-amd64 busybox-static cpio make kmod file
)

# The VM path needs QEMU >= 8: QEMU 7.2 (Debian 12) refuses vhost-user-gpu-pci
# without KVM, and guests here run under TCG. Debian's own bookworm-backports
# suite ships QEMU 10; only QEMU and the packages it needs at its own version
# come from there, each named (NAME/SUITE), so that apt takes nothing else
# from the suite: the host keeps Debian 12's Mesa 22, libdrm and libvirt 9.0
# (which drives QEMU 10 with the XML that vm-configs/install.sh renders).
# Mesa 25 clients are tested beside it (scripts/mesa25-beside.sh). A host
# that already runs Mesa 25 from bookworm-backports works too: the -dev
# packages below are then taken from the suite their installed runtime came
# from (Debian 12's refuse to install beside Mesa 25's runtime).
BACKPORTS=bookworm-backports
backports=(qemu-system-x86 qemu-system-gui qemu-system-common qemu-system-data
  qemu-system-modules-opengl seabios)
MIN_QEMU=1:8

# dev packages that must come from the suite of their installed runtime
declare -A runtime_of=([libgbm-dev]=libgbm1 [libdrm-dev]=libdrm2)

installed_version() {
  local status
  status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null || true)
  [ "${status:0:2}" = "ii" ] && dpkg-query -W -f='${Version}' "$1"
}

missing=()
for pkg in "${packages[@]}"; do
  [ -n "$(installed_version "$pkg")" ] && continue
  rt=${runtime_of[$pkg]:-}
  if [ -n "$rt" ] && [[ "$(installed_version "$rt" || true)" == *bpo* ]]; then
    missing+=("$pkg/$BACKPORTS")
  else
    missing+=("$pkg")
  fi
done
qemu=$(installed_version qemu-system-x86 || true)
if [ -z "$qemu" ] || dpkg --compare-versions "$qemu" lt "$MIN_QEMU"; then
  for pkg in "${backports[@]}"; do
    missing+=("$pkg/$BACKPORTS")
  done
fi

# The system users mediatord's workers run as: the default one, and the
# example configuration's (and the tests') users of the cluster and
# infotainment domains.
WORKER_USERS=(gpu-mediator gpu-mediator-cluster gpu-mediator-infotainment)
add_worker_user() {
  if [ "$(id -u)" = 0 ]; then
    "$(dirname -- "${BASH_SOURCE[0]}")/add-worker-user.sh" "${WORKER_USERS[@]}"
  else
    sudo "$(dirname -- "${BASH_SOURCE[0]}")/add-worker-user.sh" "${WORKER_USERS[@]}"
  fi
}

# promtool, Prometheus' own check of the metrics text (test-metrics).
# Debian ships it only inside the Prometheus server's package, whose
# installation adds a user and starts a server: it is taken out of that
# package instead (apt-get download, dpkg-deb), to $PROMTOOL.
PROMTOOL=/var/cache/gpu-mediator-tests/promtool
take_promtool() {
  local tmp s=()
  [ -x "$PROMTOOL" ] && return 0
  [ "$(id -u)" = 0 ] || s=(sudo)
  tmp=$(mktemp -d)
  echo "install-deps: promtool, out of Debian's prometheus package, into $PROMTOOL"
  if ! (cd "$tmp" && apt-get download -q prometheus >/dev/null 2>&1); then
    "${s[@]}" apt-get update -q >/dev/null
    (cd "$tmp" && apt-get download -q prometheus >/dev/null 2>&1)
  fi
  dpkg-deb --fsys-tarfile "$tmp"/prometheus_*.deb | tar -x -C "$tmp" ./usr/bin/promtool
  "${s[@]}" install -D -m 0755 "$tmp/usr/bin/promtool" "$PROMTOOL"
  rm -rf "$tmp"
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present, QEMU $qemu"
  add_worker_user
  take_promtool
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
sources=/etc/apt/sources.list.d/$BACKPORTS.sources
if ! grep -rqs "^[^#]*$BACKPORTS" /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo "install-deps: enabling Debian's $BACKPORTS suite ($sources)"
  # the same archive as the system's own Debian 12 suites
  uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*debian\)\/*$/\1/p' \
    /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
  printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' \
    "${uri:-http://deb.debian.org/debian}" "$BACKPORTS" \
    /usr/share/keyrings/debian-archive-keyring.gpg | "${sudo[@]}" tee "$sources" >/dev/null
fi
"${sudo[@]}" apt-get update -q
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null
add_worker_user
take_promtool
echo "install-deps: done"
