#!/bin/bash
# SPDX-License-Identifier: MIT
# The learned model state survives a restart (Keller's thesis, §4.6): a first run
# of glmark2-es2 leaves the domain's state file in state_dir; after each
# of RESTARTS restarts (default 7, 4 under ASan) the worker loads it, and, for the
# median restart:
#  - the first 20 groups' mean |error| is at most half that of the cold
#    start;
#  - the restart criterion: their MAPE (groups of at least 100 us, as
#    bench/accuracy) is within 2x of the MAPE of the same 20 groups
#    replayed (predict-replay --state) from the state this worker saved
#    at the end of its run: a model that has learned this run's
#    conditions. Same groups, same measured times: what the saved state
#    is compared with is what the end of the run would have predicted,
#    not the later groups of the run, whose times differ from the first
#    seconds' (under Mesa 25 on 2 cores glmark2's frames take ~800 or
#    ~1200 us in stretches during the first seconds, steady later);
#    reported, not judged, in an AddressSanitizer build (below).
# The median, because one restart is 20 groups on a shared 2-core host:
# a run whose draws all take 1.8x what they took in the run before (seen
# here) is a run no saved state predicts. Every restart's figures are
# printed. Last, a corrupt state file is reported, ignored, and replaced.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering
[ -x "${PREDICT_REPLAY:-}" ] || fail "PREDICT_REPLAY is not set to the built predict-replay"

# Each run's seconds of glmark2's build scene: 3 give 1400 groups or so in
# the plain build; an AddressSanitizer worker draws 72 to 95 a second
# (2026-11-28), so 6 there.
RUN_S=3
! worker_sanitized || RUN_S=6

start_xvfb
write_config fifo 1
STATE=$TMP/state/$DOMAIN_A/$DOMAIN_A.sgd.state

# one_run N: mediatord, a traced glmark2 run in domain A (features dumped
# to $TMP/dump-N), mediatord stopped; the state it left is kept as state-N.
one_run() {
  gm_worker_dir "$TMP/dump-$1"
  MEDIATOR_FEATURE_DUMP=$TMP/dump-$1 start_mediatord
  ctl trace start "$TMP/trace-$1.jsonl" >/dev/null || fail "trace start failed"
  run_glmark "a$1" "$SOCK_A" $((RUN_S + GLMARK_SLACK_S)) -b build:duration="$RUN_S"
  wait_field "$DOMAIN_A" clients 0 10 # the worker saved its state on exit
  ctl trace stop >/dev/null || fail "trace stop failed"
  cp "$MEDIATORD_LOG" "$TMP/mediatord-$1.log"
  gm_stop_mediatord || fail "mediatord did not stop cleanly"
  cp "$STATE" "$TMP/state-$1" 2>/dev/null || :
}

# replay_mape N: the MAPE of run N's first 20 groups, as the worker predicted
# them ("recorded") and as replayed from the state run N saved ("sgd").
replay_mape() {
  "$PREDICT_REPLAY" --first 20 --state "$TMP/state-$1" "run$1" "$TMP/dump-$1/$DOMAIN_A-1.jsonl" \
    >"$TMP/replay-$1.txt" || fail "predict-replay failed on run $1"
}

# mae N FROM TO: mean |predicted - measured| of groups FROM..TO-1 of run N, in us
# (group records only: the trace's frame records have a "type").
mae() {
  jq -s "[.[] | select(has(\"type\") | not)] | .[$2:$3] |
      [.[] | (.predicted_ns - .measured_ns) | fabs] | add / length / 1000 | floor" \
    "$TMP/trace-$1.jsonl"
}

# mape N FROM TO: MAPE in % (groups measured >= 100 us) of groups FROM..TO-1 of run N.
mape() {
  jq -s "[.[] | select(has(\"type\") | not)] | .[$2:$3] | [.[] | select(.measured_ns >= 100000) |
      ((.predicted_ns - .measured_ns) | fabs) / .measured_ns] | add / length * 1000 | floor / 10" \
    "$TMP/trace-$1.jsonl"
}

# median: the median of the numbers on stdin (one per line).
median() {
  sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Seven restarts; four in an AddressSanitizer build, whose runs are twice
# as long (above).
if worker_sanitized; then RESTARTS=${RESTARTS:-4}; else RESTARTS=${RESTARTS:-7}; fi
one_run 1
[ -s "$STATE" ] || fail "no learned state in $STATE after the first run"
cold=$(mae 1 0 20)
log "cold start: first 20 groups MAPE $(mape 1 0 20) % (mean |error| $cold us)"

warm_maes=() ratios=()
for ((n = 2; n <= RESTARTS + 1; n++)); do
  one_run "$n"
  grep -q "learned state loaded from $STATE" "$TMP/mediatord-$n.log" ||
    fail "run $n did not load $STATE"
  # Its first 20 groups are compared, those from the 200th on printed: at
  # least 220.
  groups=$(jq -s '[.[] | select(has("type") | not)] | length' "$TMP/trace-$n.jsonl")
  [ "$groups" -ge 220 ] || fail "too few groups in run $n: $groups"
  warm=$(mae "$n" 0 20)
  replay_mape "$n"
  live_mape=$(awk '$2 == "recorded" { sub("%", "", $5); print $5 }' "$TMP/replay-$n.txt")
  end_mape=$(awk '$2 == "sgd" { sub("%", "", $5); print $5 }' "$TMP/replay-$n.txt")
  [ -n "$live_mape" ] && [ -n "$end_mape" ] ||
    fail "predict-replay printed no recorded/sgd rows for run $n: $(cat "$TMP/replay-$n.txt")"
  warm_maes+=("$warm")
  # (an end-of-run MAPE under 1 % counts as 1 %: no ratio of two tiny figures)
  ratios+=("$(awk -v a="$live_mape" -v b="$end_mape" 'BEGIN { printf "%.2f", a / (b > 1 ? b : 1) }')")
  log "restart $((n - 1)): first 20 groups MAPE $live_mape % (mean |error| $warm us);" \
    "replayed from the end-of-run state $end_mape %; ratio ${ratios[-1]};" \
    "later groups $(mape "$n" 200 100000) %"
done
warm=$(printf '%s\n' "${warm_maes[@]}" | median)
ratio=$(printf '%s\n' "${ratios[@]}" | median)
log "median over $RESTARTS restarts: first 20 groups mean |error| $warm us (cold $cold us);" \
  "MAPE ratio to the end-of-run state's $ratio"
awk -v w="$warm" -v c="$cold" 'BEGIN { exit !(2 * w <= c) }' ||
  fail "the saved state did not halve the error of the first predictions"
# The ratio is of MAPEs over measured times; an AddressSanitizer worker's
# times carry its allocator's stalls (lib.sh, frames_judged): its restarts
# gave ratios of 1.49 to 3.15 where the plain build's gave 1.18 to 1.86
# (2026-11-28), so there it is reported, and judged in the plain build.
if judged_here "the restarts' MAPE ratio"; then
  awk -v r="$ratio" 'BEGIN { exit !(r <= 2) }' ||
    fail "the first 20 groups after a restart: MAPE ${ratio}x that of the end-of-run state (at most 2x)"
fi

# A corrupt file is reported, ignored, and rewritten by the next worker.
printf 'GMPRED garbage' >"$STATE"
last=$((RESTARTS + 2))
one_run "$last"
grep -q "is corrupt or unreadable" "$TMP/mediatord-$last.log" ||
  fail "a corrupt state file was not reported"
{ head -c 6 "$STATE" | grep -q GMPRED && [ "$(stat -c %s "$STATE")" -gt 64 ]; } ||
  fail "the corrupt state file was not replaced"
log "ok"
