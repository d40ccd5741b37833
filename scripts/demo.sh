#!/bin/bash
# gpu-mediator demo: two domains share one (software) GPU.
#
#   scripts/demo.sh [--vms | --vtest]
#
# Where virtual machines can run here (root, libvirt, QEMU >= 8: all
# installed by scripts/install-deps.sh), the demo is the product's main job,
# scripts/demo-vms.sh: cluster-vm and ivi-vm under libvirt. Elsewhere, or
# with --vtest, it is the same with host clients over vtest, below; the
# first line it prints says which ran.
#
#   cluster       class safety, 4 ms of GPU time every 16.667 ms
#   infotainment  class normal, 12 ms of GPU time every 16.667 ms
#
# Installs what is missing, builds, starts a virtual X display (Xvfb) and
# mediatord with a throw-away config in a temp dir, then runs an unmodified
# GL ES program (glmark2-es2) in each domain at the same time and prints
# mediatorctl show-budgets while they run and after. Cleans up on exit.
# Exits non-zero when anything fails.
#
# Environment: DEMO_SECONDS (default 10) is about how long each app renders.
set -euo pipefail

cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
SRCROOT=$PWD
SECS=${DEMO_SECONDS:-10}

say() {
  echo
  echo "=== $*"
}

die() {
  echo "demo: $*" >&2
  exit 1
}

mode=auto
case ${1:-} in
--vms) mode=vms ;;
--vtest) mode=vtest ;;
"") ;;
*) die "usage: scripts/demo.sh [--vms | --vtest]" ;;
esac

say "installing missing packages"
scripts/install-deps.sh

# vms_here: empty when VMs can run here, else why not
vms_here() {
  local v
  [ "$(id -u)" = 0 ] || { echo "not root"; return; }
  command -v libvirtd >/dev/null || { echo "no libvirtd"; return; }
  v=$(qemu-system-x86_64 --version 2>/dev/null | sed -n 's/^QEMU emulator version \([0-9]*\)\..*/\1/p')
  [ "${v:-0}" -ge 8 ] || echo "QEMU ${v:-missing} (vhost-user-gpu needs QEMU >= 8 without KVM)"
}
if [ $mode != vtest ]; then
  why=$(vms_here)
  if [ -z "$why" ]; then
    mode=vms
  else
    [ $mode = auto ] || die "virtual machines cannot run here: $why"
    mode=vtest
    say "virtual machines cannot run here ($why): the demo runs host clients over vtest"
  fi
fi

say "building (build/)"
if [ ! -f build/build.ninja ]; then
  meson setup build >/dev/null
fi
ninja -C build

MEDIATORD=$SRCROOT/build/daemon/mediatord
MEDIATORCTL=$SRCROOT/build/tools/mediatorctl
export MEDIATOR_WORKER=$SRCROOT/build/worker/mediator-worker
MEDIATOR_EXEC=$SRCROOT/build/tools/mediator-exec
CLUSTER_CLIENT=$SRCROOT/build/guest-shim/cluster-client

TMP=$(mktemp -d /tmp/gpu-mediator-demo.XXXXXX)
pids=()
mediatord_pid=
xvfb_pid=
vms=()
source vm-configs/vms-lib.sh
VMS_LOG_DIR=$TMP/log

cleanup() {
  local rc=$? pid
  set +e
  if [ ${#vms[@]} -gt 0 ]; then
    vms_remove "${vms[@]}"
    vms_stop_mediatord "$TMP/run"
  fi
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null
  done
  if [ -n "$mediatord_pid" ]; then
    kill -TERM "$mediatord_pid" 2>/dev/null
    wait "$mediatord_pid" 2>/dev/null
  fi
  [ -n "$xvfb_pid" ] && kill -TERM "$xvfb_pid" 2>/dev/null
  wait 2>/dev/null
  if [ $rc -ne 0 ]; then
    for f in "$TMP"/*.log "$TMP"/log/*.log; do
      [ -s "$f" ] || continue
      echo "----- $f (last 30 lines)" >&2
      tail -n 30 "$f" >&2
    done
    echo "demo: FAILED (status $rc)" >&2
  fi
  rm -rf -- "$TMP"
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT
ctl() {
  timeout 20 "$MEDIATORCTL" --socket "$CONTROL" "$@"
}

if [ $mode = vms ]; then
  say "demo with virtual machines"
  source scripts/demo-vms.sh
  exit 0
fi
say "demo with host clients over vtest"
CONTROL=$TMP/control.sock

say "starting a virtual display (Xvfb)"
mkfifo "$TMP/displayfd"
Xvfb -displayfd 5 -nolisten tcp -noreset -screen 0 1024x768x24 \
  5>"$TMP/displayfd" >"$TMP/xvfb.log" 2>&1 &
xvfb_pid=$!
read -r -t 15 display <"$TMP/displayfd" || die "Xvfb did not start"
export DISPLAY=":$display"
echo "DISPLAY=$DISPLAY"

say "starting mediatord"
mkdir -p "$TMP/state"
cat >"$TMP/mediatord.conf" <<EOF
[mediator]
control_socket = $TMP/control.sock
state_dir = $TMP/state
policy = budget
max_inflight = 1
renderer = egl-surfaceless

[domain cluster]
class = safety
period_us = 16667
budget_us = 4000
vtest_socket = $TMP/cluster.vtest

[domain infotainment]
class = normal
period_us = 16667
budget_us = 12000
vtest_socket = $TMP/infotainment.vtest
EOF
cat "$TMP/mediatord.conf"
"$MEDIATORD" --config "$TMP/mediatord.conf" >"$TMP/mediatord.log" 2>&1 &
mediatord_pid=$!
for s in cluster.vtest infotainment.vtest control.sock; do
  for _ in $(seq 100); do
    [ -S "$TMP/$s" ] && break
    kill -0 "$mediatord_pid" 2>/dev/null || die "mediatord exited"
    sleep 0.1
  done
  [ -S "$TMP/$s" ] || die "mediatord did not create $TMP/$s"
done

# run_app SOCKET LOG COMMAND...: runs an unmodified GL ES program in the
# domain of SOCKET, in the background. Mesa's virgl driver over vtest
# (virpipe) connects to /tmp/.virgl_test; mediator-exec makes that path the
# domain's socket for this program only. Sets app_pid.
run_app() {
  local sock=$1 log=$2
  shift 2
  GALLIUM_DRIVER=virpipe VTEST_SOCKET_NAME=$sock \
    timeout $((SECS + 90)) "$MEDIATOR_EXEC" --socket "$sock" -- "$@" >"$log" 2>&1 &
  app_pid=$!
  pids+=("$app_pid")
}

say "cluster: a 60 Hz instrument cluster; infotainment: glmark2-es2, for about $SECS s"
# The cluster: a frame-paced client (guest-shim/cluster-client) that
# draws an instrument cluster every 16.667 ms, well within its 4 ms budget,
# and counts the frames that complete after their deadline.
run_app "$TMP/cluster.vtest" "$TMP/cluster.log" \
  "$CLUSTER_CLIENT" --name cluster --seconds "$SECS" --size 480x240
cluster_pid=$app_pid
# Infotainment: a few heavier scenes, as fast as the GPU lets them.
third=$(awk -v s="$SECS" 'BEGIN { printf "%.1f", s / 3 }')
run_app "$TMP/infotainment.vtest" "$TMP/infotainment.log" \
  glmark2-es2 --off-screen -b "build:duration=$third" -b "texture:duration=$third" \
  -b "shading:shading=phong:duration=$third"
ivi_pid=$app_pid

sleep $((SECS / 2 + 1))
say "mediatorctl show-budgets (both domains rendering)"
ctl show-budgets

status=0
if wait "$cluster_pid"; then
  grep '^cluster:' "$TMP/cluster.log" || { echo "cluster: no summary" >&2; status=1; }
else
  echo "cluster: cluster-client failed" >&2
  status=1
fi
if wait "$ivi_pid"; then
  score=$(grep -Eo 'glmark2 Score: [0-9]+' "$TMP/infotainment.log" || true)
  [ -n "$score" ] || { echo "infotainment: no glmark2 score" >&2; status=1; }
  echo "infotainment: $score"
  grep -E '^\[' "$TMP/infotainment.log" | sed "s/^/  infotainment: /"
else
  echo "infotainment: glmark2-es2 failed" >&2
  status=1
fi
pids=()

say "mediatorctl show-budgets (after both apps finished)"
ctl show-budgets
kill -0 "$mediatord_pid" 2>/dev/null || die "mediatord is gone"
[ $status -eq 0 ] || die "a client failed"

say "stopping mediatord"
kill -TERM "$mediatord_pid"
wait "$mediatord_pid" || die "mediatord exited with status $? on SIGTERM"
mediatord_pid=
echo "demo: ok"
