#!/bin/bash
# SPDX-License-Identifier: MIT
# A safety domain whose config has no period_us (issue 33): mediatord
# learns the period from when the guest's frames come. A cluster client
# (guest-shim/cluster-client) draws at 60 Hz, switches to 30 Hz, then back
# to 60 Hz (--switch-rate), while a normal domain floods the GPU with
# small groups (long-draws, one draw a group). Asserts, from the trace's
# frame records (period_ns: the period in force when each frame ended):
# 10 frames of the new rate after each change (and after the client's
# first frame), and on until the next change, the period is within 2 % of
# the client's; show-budgets counts both rate changes and shows the
# learned period; the cluster misses no more frames by mediatord's count
# than in the same run with nothing beside it right after (on a quiet
# host, none). On a noisy host, an attempt that fails either is tried
# again like the other tests beside a flood (beside_noise in lib.sh: up
# to 3 attempts; a sanitizer build reports them). Last, mediatorctl plan
# proposes a budget for the cluster from a trace of it alone, and plan
# --check gives mediator-sim's verdict on it.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering
require_cmd jq jq
[ -x "$CLUSTER_CLIENT" ] || fail "cluster-client not built"
[ -x "$LONG_DRAWS" ] || fail "long-draws not built"
# Frames at each rate: 60 Hz for 5 s, 30 Hz for 6 s, 60 Hz for 5 s.
FAST=300
SLOW=180

start_xvfb
gm_write_config "$CONFIG" \
  "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" cache_dir="$TMP/cache" \
  policy=budget max_inflight=1 renderer=egl-surfaceless \
  "[domain $DOMAIN_A]" class=safety budget_us="$(safety_budget_us)" vtest_socket="$SOCK_A" \
  "[domain $DOMAIN_B]" class=normal period_us=16667 budget_us=12000 vtest_socket="$SOCK_B"
grep -q '^period_us' <(sed -n "/^\[domain $DOMAIN_A\]/,/^\[domain $DOMAIN_B\]/p" "$CONFIG") &&
  fail "the cluster's config has a period_us"
start_mediatord
j=$(budgets_json)
[ "$(gm_budgets_field "$DOMAIN_A" period_us "$j")" = 16667 ] ||
  fail "a learned period's shortest is not the default 16667 us: $j"

# period_ok TRACE LOG: the learned period in TRACE's frame records against
# the rates cluster-client's LOG says it switched to; "" when it held,
# else what did not.
period_ok() {
  jq -rs --slurpfile sw <(awk '/GM-CLUSTER rate /{
      for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      printf "{\"t\": %s, \"p\": %d}\n", v["release_ns"], v["period_us"] * 1000 }' "$2" |
      jq -s .) --argjson first "$3" '
    ([{t: $first, p: 16667000}] + $sw[0]) as $s
    | [range(0; $s | length) as $i
      | ($s[$i].t + 10 * $s[$i].p) as $from
      | (if $i + 1 < ($s | length) then $s[$i + 1].t else 1e30 end) as $to
      | .[] | select(.type == "frame" and .domain == "'"$DOMAIN_A"'"
          and .release_ns >= $from and .release_ns < $to)
      | select((.period_ns - $s[$i].p) | fabs > $s[$i].p * 0.02)
      | "frame released \(.release_ns): period \(.period_ns) ns, the client'"'"'s \($s[$i].p)"]
    | .[0:3] | join("; ")' "$1"
}

# switching_cluster N LABEL: the cluster client in domain A, 60, 30 then
# 60 Hz, traced to $TMP/trace-LABEL-N.jsonl (its log $TMP/cluster-LABEL-N.log);
# sets j0 and j1 (show-budgets --json from 2 s in, past the cluster's
# start-up, and at its end).
switching_cluster() {
  local n=$1 label=$2 pid
  ctl trace start "$TMP/trace-$label-$n.jsonl" >&2 || fail "trace start failed"
  gm_in_domain --timeout 120 "$SOCK_A" "$CLUSTER_CLIENT" --frames $((2 * FAST + SLOW)) \
    --switch-rate "$FAST:30" --switch-rate "$((FAST + SLOW)):60" \
    >"$TMP/cluster-$label-$n.log" 2>&1 &
  pid=$!
  gm_track "$pid"
  sleep 2 # past the cluster's start-up (shader compilation), 2 s before its first change
  j0=$(budgets_json)
  wait "$pid" || fail "cluster-client failed: $(tail -3 "$TMP/cluster-$label-$n.log")"
  j1=$(budgets_json)
  ctl trace stop >&2 || fail "trace stop failed"
  [ "$(grep -c 'GM-CLUSTER rate ' "$TMP/cluster-$label-$n.log")" = 2 ] ||
    fail "cluster-client did not switch its rate twice: $(cat "$TMP/cluster-$label-$n.log")"
}

# period_off N LABEL: "" when the learned period held in switching_cluster
# N LABEL's trace, else where it did not.
period_off() {
  local trace=$TMP/trace-$2-$1.jsonl t_first
  t_first=$(jq -s '[.[] | select(.type == "frame" and .domain == "'"$DOMAIN_A"'")
    | .release_ns] | min' "$trace")
  period_ok "$trace" "$TMP/cluster-$2-$1.log" "$t_first"
}

# attempt N: the cluster client beside the flood, then alone, each
# switching its rate, traced. Sets flood_misses (by mediatord's count
# during the cluster's run beside the flood, from 2 s in: its start-up
# beside the flood is test-isolation's) and quiet_misses (the same run
# with nothing beside it: the host's own noise, as in the other tests
# beside a flood). Returns non-zero when the flood cost the cluster more
# frames than the noise, or when the learned period was off in either run
# (the noise again: a client starved of the CPU shows its frames late by
# tens of ms, and falls behind by a few ms a frame; tried again, as misses
# are, and the last attempt fails the test).
attempt() {
  local n=$1 bad quiet_bad
  start_flood "flood-$n" 960x540 $(((2 * FAST + SLOW) / 50 + 20))
  sleep 2
  switching_cluster "$n" flood
  bad=$(period_off "$n" flood)
  [ "$(($(gm_budgets_field "$DOMAIN_A" period_changes "$j1") -
    $(gm_budgets_field "$DOMAIN_A" period_changes "$j0")))" -ge 2 ] ||
    fail "show-budgets counts fewer than 2 rate changes: $j1"
  flood_misses=$(safety_misses "$j0" "$j1")
  log "attempt $n, beside the flood: $(gm_budgets_field "$DOMAIN_A" frames "$j1") frames," \
    "$flood_misses missed by mediatord's count; $(tail -1 "$TMP/cluster-flood-$n.log")"
  gm_stop 5 "$FLOOD_PID"
  wait "$FLOOD_PID" 2>/dev/null || :
  wait_field "$DOMAIN_B" clients 0 30
  switching_cluster "$n" quiet
  quiet_misses=$(safety_misses "$j0" "$j1")
  quiet_bad=$(period_off "$n" quiet)
  log "attempt $n, alone: $quiet_misses missed by mediatord's count;" \
    "$(tail -1 "$TMP/cluster-quiet-$n.log")"
  if [ -n "$bad$quiet_bad" ]; then
    bad="beside the flood: ${bad:-held}; alone: ${quiet_bad:-held}"
    [ "$n" -lt 3 ] || fail "the learned period was off by more than 2 % in all 3 attempts," \
      "the last $bad"
    log "attempt $n: the learned period was off by more than 2 %, $bad"
    return 1
  fi
  [ "$flood_misses" -le "$quiet_misses" ]
}

beside_noise 3 attempt 0

# mediatorctl plan on a trace of the cluster alone, past its start-up (as
# an integrator records each domain at work): a budget for the cluster
# from its frames, its shortest period under its 60 Hz; with --check,
# mediator-sim's verdict on the proposal. (On the flooded attempts' trace,
# the slowest frames on a loaded CI host, 14.4 ms, made a budget past the
# period, which plan refuses.)
gm_in_domain --timeout 60 "$SOCK_A" "$CLUSTER_CLIENT" --seconds 7 >"$TMP/alone.log" 2>&1 &
pid=$!
gm_track "$pid"
sleep 2
ctl trace start "$TMP/alone.jsonl" >&2 || fail "trace start failed"
wait "$pid" || fail "cluster-client alone failed: $(tail -3 "$TMP/alone.log")"
ctl trace stop >&2 || fail "trace stop failed"
ctl plan "$TMP/alone.jsonl" >"$TMP/plan.conf" 2>"$TMP/plan.err" ||
  fail "mediatorctl plan failed: $(cat "$TMP/plan.err")"
min=$(sed -n "/^\[domain $DOMAIN_A\]/,/^\[/s/^min_period_us = //p" "$TMP/plan.conf")
budget=$(sed -n "/^\[domain $DOMAIN_A\]/,/^\[/s/^budget_us = //p" "$TMP/plan.conf")
{ [ "${min:-0}" -ge 16000 ] && [ "$min" -le 16667 ] && [ "${budget:-0}" -gt 0 ] &&
  [ "$budget" -le "$min" ]; } ||
  fail "mediatorctl plan proposed no fitting budget for $DOMAIN_A: $(cat "$TMP/plan.conf")"
rc=0
ctl plan --check "$TMP/alone.jsonl" >"$TMP/plan-check.conf" 2>>"$TMP/plan.err" || rc=$?
[ "$rc" -le 1 ] && grep -q "^; mediator-sim --check: .*schedulable" "$TMP/plan-check.conf" ||
  fail "mediatorctl plan --check gave no verdict (exit $rc): $(cat "$TMP/plan.err")"
log "plan: $DOMAIN_A budget_us $budget, min_period_us $min;" \
  "$(grep '^; mediator-sim --check' "$TMP/plan-check.conf")"
ctl show-budgets >"$TMP/show-budgets.txt" || fail "show-budgets failed"
grep -q "^learned period: $DOMAIN_A: 16\.[0-9]* ms (60 Hz), confidence" "$TMP/show-budgets.txt" ||
  fail "show-budgets does not show the learned 60 Hz: $(cat "$TMP/show-budgets.txt")"
gm_alive "$MEDIATORD_PID" || fail "mediatord died"
log "ok: the learned period followed 60, 30 and 60 Hz within 10 frames, $attempt_n attempt(s)"
