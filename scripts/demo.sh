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
#   cluster       class safety, a budget fitted to this host (3..8 ms) every 16.667 ms
#   infotainment  class normal, 12 ms of GPU time every 16.667 ms
#
# Installs what is missing, builds, starts a virtual X display (Xvfb) and
# mediatord with a throw-away config in a temp dir; runs the frame-paced
# 60 Hz cluster (guest-shim/cluster-client) alone for 3 s to measure what
# a frame costs on this host and sets the cluster's budget to fit (6 times
# that, 3..8 ms); then runs it and an unmodified glmark2-es2 in the
# infotainment domain at the same time, under policy budget and again
# under policy fifo for contrast, printing mediatorctl show-budgets while
# they run and after. Ends with a verdict: the cluster's misses by
# mediatord's count and by its own clock under both policies, and whether
# it kept its frames under budget. Cleans up on exit. Exits non-zero when
# anything fails (a client, mediatord).
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

# start_demo_mediatord POLICY: mediatord on a throw-away config, the two domains.
start_demo_mediatord() {
  gm_write_config "$TMP/mediatord-$1.conf" \
    "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" cache_dir="$TMP/cache" \
    policy="$1" max_inflight=1 renderer=egl-surfaceless \
    "[domain cluster]" class=safety period_us=16667 budget_us=4000 \
    vtest_socket="$TMP/cluster.vtest" \
    "[domain infotainment]" class=normal period_us=16667 budget_us=12000 \
    vtest_socket="$TMP/infotainment.vtest"
  gm_start_mediatord "$TMP/mediatord-$1.conf" "$TMP/mediatord-$1.log"
}

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

# The cluster: a frame-paced client (guest-shim/cluster-client) that draws
# an instrument cluster every 16.667 ms and counts, by its own clock, the
# frames that complete after their deadline.
cluster_args=(--name cluster --size 480x240)

say "starting mediatord (policy budget)"
start_demo_mediatord budget
cat "$TMP/mediatord-budget.conf"

# The cluster's budget fits what it needs on this host: measured alone
# for 3 s (GPU time per frame by mediatord's count), 6 times that, within
# 3..8 ms: beside glmark2-es2 on 2 cores (llvmpipe: the CPU is the GPU) a
# frame's GPU time stretches several times over, and a safety domain past
# its budget yields to the waiting normal domain (3 times overran it 10
# times in 10 s here).
say "the cluster alone for 3 s: what a frame costs on this host"
gm_client --timeout 60 "$TMP/cluster.vtest" "$CLUSTER_CLIENT" "${cluster_args[@]}" --seconds 3 \
  >"$TMP/cluster-alone.log" 2>&1 || gm_die "cluster-client alone failed"
json=$(gm_budgets)
frame_us=$(jq -r '.domains[] | select(.name == "cluster") |
  if .frames > 0 then (.used_us / .frames | floor) else 0 end' <<<"$json")
budget_us=$((frame_us * 6))
[ "$budget_us" -ge 3000 ] || budget_us=3000
[ "$budget_us" -le 8000 ] || budget_us=8000
echo "cluster alone: $frame_us us of GPU time a frame; budget $budget_us us a period"
gm_ctl set-budget cluster --budget-us "$budget_us"

# run_pair POLICY: the cluster and glmark2-es2 together for about SECS s
# under mediatord's POLICY; prints show-budgets midway and after, and the
# cluster's misses by both counts. Sets misses_md, alone_md (of them, with no
# infotainment group beside), startup_md (its start-up frames, not judged),
# misses_own, frames_own.
run_pair() {
  local policy=$1 third status=0 before after score
  before=$(gm_budgets)
  run_app "$TMP/cluster.vtest" "$TMP/cluster-$policy.log" \
    "$CLUSTER_CLIENT" "${cluster_args[@]}" --seconds "$SECS" --json /dev/fd/3 \
    3>"$TMP/cluster-$policy.json"
  cluster_pid=$app_pid
  # Infotainment: a few heavier scenes, as fast as the GPU lets them.
  third=$(awk -v s="$SECS" 'BEGIN { printf "%.1f", s / 3 }')
  run_app "$TMP/infotainment.vtest" "$TMP/infotainment-$policy.log" \
    glmark2-es2 --off-screen -b "build:duration=$third" -b "texture:duration=$third" \
    -b "shading:shading=phong:duration=$third"
  ivi_pid=$app_pid
  sleep $((SECS / 2 + 1))
  say "mediatorctl show-budgets ($policy, both domains rendering)"
  gm_ctl show-budgets
  wait "$cluster_pid" || { echo "cluster: cluster-client failed" >&2; status=1; }
  if wait "$ivi_pid"; then
    score=$(grep -Eo 'glmark2 Score: [0-9]+' "$TMP/infotainment-$policy.log" || true)
    [ -n "$score" ] || { echo "infotainment: no glmark2 score" >&2; status=1; }
    echo "infotainment ($policy): $score"
  else
    echo "infotainment: glmark2-es2 failed" >&2
    status=1
  fi
  after=$(gm_budgets)
  [ $status -eq 0 ] || gm_die "a client failed under $policy"
  misses_md=$(($(gm_budgets_field cluster deadline_misses "$after") -
    $(gm_budgets_field cluster deadline_misses "$before")))
  alone_md=$(($(gm_budgets_field cluster deadline_misses_alone "$after") -
    $(gm_budgets_field cluster deadline_misses_alone "$before")))
  frames_md=$(($(gm_budgets_field cluster frames "$after") -
    $(gm_budgets_field cluster frames "$before")))
  startup_md=$(($(gm_budgets_field cluster startup_frames "$after") -
    $(gm_budgets_field cluster startup_frames "$before")))
  misses_own=$(jq .misses "$TMP/cluster-$policy.json")
  frames_own=$(jq .frames "$TMP/cluster-$policy.json")
  say "mediatorctl show-budgets ($policy, after both apps finished)"
  gm_ctl show-budgets
  echo "cluster ($policy): $misses_md of $frames_md frames missed their deadline by mediatord's" \
    "count (past its start-up: $startup_md late frames, alone, in its first 30 periods," \
    "not judged); $misses_own of $frames_own late by the cluster's own clock"
}

say "policy budget: the cluster and glmark2-es2 together, for about $SECS s"
run_pair budget
budget_md=$misses_md budget_alone=$alone_md budget_own=$misses_own budget_frames=$frames_own
gm_assert_mediatord_alive
gm_stop_mediatord || gm_die "mediatord exited with status $? on SIGTERM"

say "the same under policy fifo (first come, first served), for contrast"
start_demo_mediatord fifo
run_pair fifo
gm_stop_mediatord || gm_die "mediatord exited with status $? on SIGTERM"

say "verdict"
echo "mediatord's count: a frame is missed when its last group completes (the fence, on the"
echo "host) after the frame's deadline. The cluster's own clock also counts the time its"
echo "frame waits to be sent and read back on this host's busy CPUs."
echo "Missed alone: no infotainment group was on the GPU (or drew on revoked) beside the"
echo "frame, which was late by the cluster's own work (its first frames compile its shaders)."
echo "  policy budget: $budget_md missed by mediatord's count ($budget_alone alone), $budget_own late by the cluster's clock, of $budget_frames"
echo "  policy fifo:   $misses_md missed by mediatord's count ($alone_md alone), $misses_own late by the cluster's clock, of $frames_own"
if [ "$budget_md" -eq 0 ]; then
  echo "demo: the cluster kept its frames beside glmark2-es2 (0 missed by mediatord's count;" \
    "under fifo $misses_md)"
elif [ "$budget_md" -eq "$budget_alone" ]; then
  echo "demo: glmark2-es2 took none of the cluster's frames: the $budget_md it missed by" \
    "mediatord's count it missed alone, by its own work (under fifo $misses_md, $alone_md alone)"
else
  echo "demo: the cluster MISSED $budget_md frames by mediatord's count beside glmark2-es2," \
    "$((budget_md - budget_alone)) with it on the GPU beside them (under fifo $misses_md):" \
    "this host was too busy, or the budgets do not fit it"
fi
