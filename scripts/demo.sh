#!/bin/bash
# SPDX-License-Identifier: MIT
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
# mediatord with a throw-away config in a temp dir, then runs a frame-paced
# 60 Hz cluster (guest-shim/cluster-client) in the cluster domain and an
# unmodified glmark2-es2 in the infotainment domain at the same time, and
# prints mediatorctl show-budgets while they run and after. Cleans up on exit.
# Exits non-zero when anything fails.
#
# Environment: DEMO_SECONDS (default 10) is about how long each app renders.
set -euo pipefail

cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
SRCROOT=$PWD
SECS=${DEMO_SECONDS:-10}
BUILD_DIR=$SRCROOT/build
GM_NAME=demo
source scripts/lib/gm-common.sh

say() {
  echo
  echo "=== $*"
}

mode=auto
case ${1:-} in
--vms) mode=vms ;;
--vtest) mode=vtest ;;
"") ;;
*) gm_die "usage: scripts/demo.sh [--vms | --vtest]" ;;
esac

say "installing missing packages"
scripts/install-deps.sh

# vms_here: empty when VMs can run here, else why not
vms_here() {
  local v
  [ "$(id -u)" = 0 ] || { echo "not root"; return; }
  command -v libvirtd >/dev/null || { echo "no libvirtd"; return; }
  v=$(gm_qemu_major)
  [ "${v:-0}" -ge 8 ] || echo "QEMU ${v:-missing} (vhost-user-gpu needs QEMU >= 8 without KVM)"
}
if [ $mode != vtest ]; then
  why=$(vms_here)
  if [ -z "$why" ]; then
    mode=vms
  else
    [ $mode = auto ] || gm_die "virtual machines cannot run here: $why"
    mode=vtest
    say "virtual machines cannot run here ($why): the demo runs host clients over vtest"
  fi
fi

say "building (build/)"
gm_build

gm_tmpdir gpu-mediator-demo
# At exit, after everything the demo started has stopped (cleanups run
# last in, first out): on a failure, the end of its logs.
demo_failed() {
  gm_failed || return 0
  gm_tail_logs 30 "$TMP"/*.log "$TMP"/log/*.log
  echo "demo: FAILED (status $GM_EXIT_STATUS)" >&2
}
gm_on_exit demo_failed
source vm-configs/vms-lib.sh
VMS_LOG_DIR=$TMP/log

if [ $mode = vms ]; then
  say "demo with virtual machines"
  source scripts/demo-vms.sh
  exit 0
fi
say "demo with host clients over vtest"
CONTROL=$TMP/control.sock

say "starting a virtual display (Xvfb)"
gm_start_xvfb 1024x768x24
echo "DISPLAY=$DISPLAY"

say "starting mediatord"
gm_write_config "$TMP/mediatord.conf" \
  "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" policy=budget max_inflight=1 \
  renderer=egl-surfaceless \
  "[domain cluster]" class=safety period_us=16667 budget_us=4000 \
  vtest_socket="$TMP/cluster.vtest" \
  "[domain infotainment]" class=normal period_us=16667 budget_us=12000 \
  vtest_socket="$TMP/infotainment.vtest"
cat "$TMP/mediatord.conf"
gm_start_mediatord "$TMP/mediatord.conf" "$TMP/mediatord.log"

# run_app SOCKET LOG COMMAND...: runs an unmodified GL ES program in the
# domain of SOCKET, in the background. Mesa's virgl driver over vtest
# (virpipe) connects to /tmp/.virgl_test; mediator-exec makes that path the
# domain's socket for this program only. Sets app_pid.
run_app() {
  local sock=$1 log=$2
  shift 2
  gm_client --timeout $((SECS + 90)) "$sock" "$@" >"$log" 2>&1 &
  app_pid=$!
  gm_track "$app_pid"
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
gm_ctl show-budgets

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

say "mediatorctl show-budgets (after both apps finished)"
gm_ctl show-budgets
gm_assert_mediatord_alive
[ $status -eq 0 ] || gm_die "a client failed"

say "stopping mediatord"
gm_stop_mediatord || gm_die "mediatord exited with status $? on SIGTERM"
echo "demo: ok"
