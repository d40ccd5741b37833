#!/bin/bash
# SPDX-License-Identifier: MIT
# Unpacks Mesa 25's client libraries from Debian's bookworm-backports suite
# into a directory beside the system's Mesa, without installing anything;
# with --env, also prints the environment that makes a GL client use them:
#
#   eval "$(scripts/mesa25-beside.sh --env)"   # or: ... --env DIR
#   GALLIUM_DRIVER=virpipe VTEST_SOCKET_NAME=... glmark2-es2 ...
#
# The host keeps Debian 12's Mesa 22 (mediatord's worker renders with it);
# only the clients started with this environment load Mesa 25. That is how
# the project checks that both Mesas' vtest clients work through mediatord.
#
# Idempotent: DIR/.mesa25-beside records the package versions it holds, and
# nothing is downloaded again while they match the suite's. Needs the
# bookworm-backports apt source (scripts/install-deps.sh adds it) and, the
# first time, network access; apt-get download needs no root, but DIR must be
# writable (the default is under /var/cache).
#
# Output: stdout carries only the `export NAME='value'` lines of --env;
# progress and errors go to stderr. Exit status: 0 done, 1 the packages cannot be had, 2 usage.
set -euo pipefail

SUITE=bookworm-backports
DEFAULT_DIR=/var/cache/gpu-mediator/mesa-25
TRIPLET=x86_64-linux-gnu

# Mesa 25's EGL and GLX vendor libraries and what they need at a newer
# version than Debian 12 has (libdrm >= 2.4.121, libwayland); the rest of
# their dependencies (LLVM 15, libxcb, expat, ...) are Debian 12's own.
# libgl1-mesa-dri holds the DRI/GBM loader stubs GLX and GBM look for.
PACKAGES=(
  mesa-libgallium libegl-mesa0 libglx-mesa0 libgl1-mesa-dri libgbm1
  libdrm2 libdrm-common libdrm-amdgpu1 libdrm-intel1
  libwayland-server0 libwayland-client0
)

usage() {
  cat <<EOF
usage: $0 [--env] [DIR]

Downloads Mesa 25's client libraries from $SUITE (apt-get download) and
unpacks them into DIR (default $DEFAULT_DIR) without installing them. Run
again: does nothing while DIR is up to date.

  --env   then print, as export lines on stdout, the environment that makes
          a client load them: LD_LIBRARY_PATH and
          __EGL_VENDOR_LIBRARY_FILENAMES (EGL clients), LIBGL_DRIVERS_PATH
          (GLX clients; libglvnd finds libGLX_mesa.so.0 by LD_LIBRARY_PATH)
          and GBM_BACKENDS_PATH (GBM). Use: eval "\$($0 --env)"

Exit status: 0 done, 1 the packages cannot be had, 2 usage.
EOF
}

print_env=0
while [ $# -gt 0 ]; do
  case "$1" in
    -h | --help) usage; exit 0 ;;
    --env) print_env=1; shift ;;
    --) shift; break ;;
    -*) usage >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -le 1 ] || { usage >&2; exit 2; }
dir=${1:-$DEFAULT_DIR}

log() { echo "mesa25-beside: $*" >&2; }

suite_version() {
  apt-cache show "$1/$SUITE" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1
}

# What DIR should hold: one "NAME VERSION" line per package.
wanted=""
for pkg in "${PACKAGES[@]}"; do
  v=$(suite_version "$pkg")
  if [ -z "$v" ]; then
    log "$pkg is not available from $SUITE (is the suite in apt's sources, and apt-get update run?)"
    exit 1
  fi
  wanted+="$pkg $v"$'\n'
done

stamp=$dir/.mesa25-beside
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${wanted%$'\n'}" ]; then
  log "$dir is up to date"
else
  mkdir -p "$dir"
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  specs=()
  for pkg in "${PACKAGES[@]}"; do
    specs+=("$pkg/$SUITE")
  done
  log "downloading ${#specs[@]} packages from $SUITE"
  # apt-get download writes into the current directory; as root, apt drops
  # to its _apt user, which must be able to write there.
  chmod 0777 "$work"
  if ! (cd "$work" && apt-get download -q "${specs[@]}" >&2); then
    log "apt-get download failed"
    exit 1
  fi
  # A fresh tree: files of an older version must not linger.
  rm -rf "$dir/usr" "$stamp"
  for deb in "$work"/*.deb; do
    dpkg -x "$deb" "$dir"
  done
  printf '%s' "${wanted%$'\n'}" >"$stamp"
  log "unpacked into $dir"
fi

lib=$dir/usr/lib/$TRIPLET
vendor=$dir/usr/share/glvnd/egl_vendor.d/50_mesa.json
for f in "$lib/libEGL_mesa.so.0" "$lib/libGLX_mesa.so.0" "$vendor"; do
  if [ ! -e "$f" ]; then
    log "$f is missing after unpacking; remove $stamp and run again"
    exit 1
  fi
done

[ $print_env = 1 ] || exit 0
# The vendor file names libEGL_mesa.so.0 without a path: libglvnd finds it
# through LD_LIBRARY_PATH, as GLX finds libGLX_mesa.so.0.
echo "export LD_LIBRARY_PATH='$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}'"
echo "export __EGL_VENDOR_LIBRARY_FILENAMES='$vendor'"
echo "export LIBGL_DRIVERS_PATH='$lib/dri'"
echo "export GBM_BACKENDS_PATH='$lib/gbm'"
