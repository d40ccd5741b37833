#!/bin/bash
# SPDX-License-Identifier: MIT
# Four displays on one GPU (issue 33; not a test). One mediatord, four
# domains, every client a host process over vtest (this 2-core host cannot
# run four TCG guests at once; bench/vms runs two of them as VMs):
#   cluster    safety, no period_us: its period is learned; cluster-client
#              at 60 Hz, 800x480;
#   hud        safety, no period_us, min_period_us 33333: a head-up
#              display at 30 Hz (cluster-client --scene hud: a speed
#              readout, a turn arrow, lane marks; 480x240);
#   headunit   normal, weight 3: long-draws, one 960x540 draw per group of
#              FLOOD_ITER shader iterations (default 6: about 10 ms groups
#              here, a map's redraw);
#   rear       normal, weight 1: the same load.
# Both normal domains keep the GPU busy throughout; they start first, and
# the safety clients once both are past their young groups (up to 30 s).
# The same run under policy budget with budgets set by hand (4 ms each),
# then "planned": policy budget with the safety budgets and shortest
# periods mediatorctl plan --check proposed from the budget run's trace,
# then under policy fifo for contrast (POLICIES), each for
# RUN_S seconds of the safety clients (default 55: 3,300 cluster frames;
# the first 3 s, their start-up, not counted).
# Prints per policy: each safety domain's frames and misses by mediatord's
# count (and its start-up frames, not judged) and by the client's clock,
# its learned period and confidence; each domain's GPU time and share of
# the wall time, the GPU's busy share, and the normal domains' GPU time
# ratio against their weights (3), with its deviation; before the planned
# run, what mediatorctl plan proposed and whether mediator-sim --check
# accepts it. Then mediator-sim --check on the budget run's config and
# trace (is the four-domain config schedulable?).
# Environment: RUN_S, FLOOD_ITER, POLICIES (default "budget planned fifo"), BUILD_DIR,
# OUT (traces, client reports, logs; default bench-displays-out/).
set -euo pipefail

cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
SRCROOT=$PWD
RUN_S=${RUN_S:-55}
FLOOD_ITER=${FLOOD_ITER:-6}
POLICIES=${POLICIES:-budget planned fifo}
OUT=${OUT:-$SRCROOT/bench-displays-out}
GM_NAME=bench
source scripts/lib/gm-common.sh

gm_require_cmd jq jq
gm_ensure_built "$CLUSTER_CLIENT"
gm_ensure_built "$LONG_DRAWS"
gm_ensure_built "$MEDIATOR_SIM"
gm_tmpdir gm-displays
mkdir -p "$OUT"
CONTROL=$TMP/control.sock
STARTUP_S=3
WEIGHT_HEADUNIT=3
WEIGHT_REAR=1

# The safety domains' budgets and shortest periods: as configured by hand, or
# (run "planned") as mediatorctl plan proposed from the budget run's trace.
CLUSTER_BUDGET=4000 CLUSTER_MIN=16667 HUD_BUDGET=4000 HUD_MIN=33333

# write_config RUN FILE: RUN is a policy, or "planned" (policy budget).
write_config() {
  local policy=$1
  [ "$policy" != planned ] || policy=budget
  gm_write_config "$2" \
    "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state-$1" cache_dir="$TMP/cache" \
    policy="$policy" max_inflight=1 \
    "[domain cluster]" class=safety min_period_us=$CLUSTER_MIN budget_us=$CLUSTER_BUDGET \
    vtest_socket="$TMP/cluster.vtest" \
    "[domain hud]" class=safety min_period_us=$HUD_MIN budget_us=$HUD_BUDGET \
    vtest_socket="$TMP/hud.vtest" \
    "[domain headunit]" class=normal weight=$WEIGHT_HEADUNIT vtest_socket="$TMP/headunit.vtest" \
    "[domain rear]" class=normal weight=$WEIGHT_REAR vtest_socket="$TMP/rear.vtest"
}

# flood DOMAIN SECONDS: long-draws in DOMAIN in the background, one draw a group.
flood() {
  gm_in_domain --timeout $(($2 + 30)) "$TMP/$1.vtest" "$LONG_DRAWS" --iterations "$FLOOD_ITER" \
    --size 960x540 --seconds "$2" --json /dev/fd/3 3>"$OUT/$POLICY-$1.json" \
    >"$OUT/$POLICY-$1.log" 2>&1 &
  gm_track "$!"
}

# field DOMAIN KEY JSON
field() {
  gm_budgets_field "$1" "$2" "$3"
}

# delta DOMAIN KEY: KEY of DOMAIN in $J1 less in $J0.
delta() {
  echo $(($(field "$1" "$2" "$J1") - $(field "$1" "$2" "$J0")))
}

run_policy() {
  local pids=() pid t0 t1 wall d used total=0
  POLICY=$1
  write_config "$POLICY" "$OUT/$POLICY.conf"
  gm_start_mediatord "$OUT/$POLICY.conf" "$OUT/$POLICY-mediatord.log"
  flood headunit $((RUN_S + 40))
  flood rear $((RUN_S + 40))
  # Both normal domains' contexts past their young groups (predict_estimator.h: 64) before
  # the safety domains come: their first groups' shaders compile, and young groups start
  # only at a safety gap's start; the shares below are those of domains at work. (groups
  # counts pieces: a group cut into scissor tiles is several.)
  for _ in $(seq 300); do
    [ "$(gm_budgets | jq '[.domains[] | select(.class == "normal") | .groups >= 400]
      | all')" = true ] && break
    sleep 0.1
  done
  gm_in_domain --timeout $((RUN_S + 60)) "$TMP/cluster.vtest" "$CLUSTER_CLIENT" \
    --seconds "$RUN_S" --name cluster --json /dev/fd/3 3>"$OUT/$POLICY-cluster.json" \
    >"$OUT/$POLICY-cluster.log" 2>&1 &
  pids+=($!)
  gm_in_domain --timeout $((RUN_S + 60)) "$TMP/hud.vtest" "$CLUSTER_CLIENT" --scene hud \
    --rate 30 --size 480x240 --seconds "$RUN_S" --name hud --json /dev/fd/3 3>"$OUT/$POLICY-hud.json" \
    >"$OUT/$POLICY-hud.log" 2>&1 &
  pids+=($!)
  sleep "$STARTUP_S"
  # The trace, for mediator-sim and mediatorctl plan: the four domains at work.
  gm_ctl trace start "$OUT/$POLICY-trace.jsonl" >/dev/null
  J0=$(gm_budgets)
  t0=$(date +%s%N)
  for pid in "${pids[@]}"; do
    wait "$pid" || gm_die "a safety client failed (status $?): $(tail -n 2 "$OUT/$POLICY"-{cluster,hud}.log)"
  done
  t1=$(date +%s%N)
  J1=$(gm_budgets)
  gm_ctl trace stop >/dev/null
  wall=$(((t1 - t0) / 1000))
  echo "$POLICY: $((wall / 1000)) ms measured, from ${STARTUP_S} s into the safety clients' run"
  for d in cluster hud; do
    echo "  $d: $(delta $d frames) frames, $(delta $d deadline_misses) missed by mediatord's" \
      "count ($(delta $d deadline_misses_alone) alone; start-up frames not judged:" \
      "$(field $d startup_frames "$J1")); client:" \
      "$(jq -r '"\(.frames) frames, \(.misses) missed"' "$OUT/$POLICY-$d.json");" \
      "learned period $(field $d learned_period_us "$J1") us," \
      "confidence $(field $d period_confidence "$J1")"
  done
  for d in cluster hud headunit rear; do
    used=$(delta $d used_us)
    total=$((total + used))
    echo "  $d: GPU time $((used / 1000)) ms, $(awk -v u="$used" -v w="$wall" \
      'BEGIN { printf "%.1f", 100 * u / w }') % of the wall time"
  done
  echo "  GPU busy: $(awk -v u="$total" -v w="$wall" 'BEGIN { printf "%.1f", 100 * u / w }') %"
  awk -v a="$(delta headunit used_us)" -v b="$(delta rear used_us)" \
    -v w="$((WEIGHT_HEADUNIT / WEIGHT_REAR))" 'BEGIN {
      r = b > 0 ? a / b : 0
      printf "  headunit/rear GPU time: %.3f, weights %d: %+.1f %%\n", r, w, 100 * (r - w) / w }'
  gm_stop_mediatord
}

# plan: mediatorctl plan --check on the budget run's trace; its safety budgets
# and shortest periods for the planned run.
plan() {
  local rc=0
  echo "mediatorctl plan --check on the budget run's trace:"
  "$MEDIATORCTL" plan --check "$OUT/budget-trace.jsonl" >"$OUT/plan.conf" \
    2>"$OUT/plan.err" || rc=$?
  sed -n 's/^; \(cluster\|hud\): /  \1: /p; s/^; mediator-sim --check: /  mediator-sim --check: /p' \
    "$OUT/plan.conf"
  [ "$rc" = 0 ] || { echo "  no plan to run (exit $rc): $(tail -n 3 "$OUT/plan.err")"; return 1; }
  CLUSTER_BUDGET=$(plan_key cluster budget_us) CLUSTER_MIN=$(plan_key cluster min_period_us)
  HUD_BUDGET=$(plan_key hud budget_us) HUD_MIN=$(plan_key hud min_period_us)
  echo "  planned: cluster budget_us $CLUSTER_BUDGET, min_period_us $CLUSTER_MIN;" \
    "hud budget_us $HUD_BUDGET, min_period_us $HUD_MIN"
}

# plan_key DOMAIN KEY: KEY of DOMAIN in $OUT/plan.conf.
plan_key() {
  awk -v d="[domain $1]" -v k="$2" '$0 == d { in_d = 1; next } /^\[/ { in_d = 0 }
    in_d && $1 == k { print $3 }' "$OUT/plan.conf"
}

for policy in $POLICIES; do
  if [ "$policy" = planned ]; then
    plan || continue
  fi
  run_policy "$policy"
done
if [ -e "$OUT/budget-trace.jsonl" ]; then
  echo "mediator-sim --check on the budget run's config and trace:"
  "$MEDIATOR_SIM" --check "$OUT/budget.conf" "$OUT/budget-trace.jsonl" | sed 's/^/  /' &&
    echo "  schedulable" || echo "  not schedulable (exit $?)"
fi
