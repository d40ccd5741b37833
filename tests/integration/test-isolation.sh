#!/bin/bash
# SPDX-License-Identifier: MIT
# Two live domains under policy budget: a periodic 60 Hz cluster client
# (guest-shim/cluster-client, safety) and a flooding infotainment
# client (guest-shim/long-draws: full-screen draws with an expensive
# shader, one group each, back to back). The budget policy throttles
# infotainment; the cluster misses no deadline after its start-up frames
# by mediatord's count (and at most 1 % by its own clock, which also
# counts its CPU time on the shared cores; a sanitizer build reports the
# misses, frames_judged in lib.sh); show-budgets stays consistent (used in
# the last period <= budget + debt for the strict domain, throttled > 0);
# set-budget applies from the next period and refuses a budget the safety
# domains cannot have. On a noisy host (CPU steal, see below), or when
# each missed frame waited behind a group past its bound, the clients' run
# is tried again, up to 3 times.
# Last, in a domain that is not strict and at the default config, a flood
# of single draws of about 1.5 periods (25 ms), one draw a group, which fit
# no gap the cluster leaves whole: the worker cuts each into scissor tiles
# (doc/design.md "Pieces"), the trace shows them, and the cluster misses
# nothing by mediatord's count either.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering
{ [ -x "$CLUSTER_CLIENT" ] && [ -x "$LONG_DRAWS" ]; } || fail "bench/isolation clients not built"
FRAMES=600

# The cluster's misses by its own clock tolerated in an attempt (below): 1 %
# of its frames; in a sanitizer build, where the client's own code and the
# workers' run several times slower on the same two cores, 2 % (an ASan CI
# run on 2026-11-27: 7 of 600 by the client's clock, 0 by mediatord's and
# in the trace).
CLIENT_MISSES_MAX=6

write_config budget 1
# The infotainment domain is strict (it never runs past its budget): 8 ms
# per 16.7 ms period, for a flood of ~2 ms groups (960x540 with the
# expensive shader) that alone would take the whole GPU. Groups this size
# leave the scheduler room for this machine's noise (the same group can
# take 3x as long when the two cores are contended; with ASan, more).
sed -i '/^\[domain '"$DOMAIN_B"'\]/a strict = true' "$CONFIG"
sed -i 's/^budget_us = 12000$/budget_us = 8000/' "$CONFIG"
start_mediatord


# unexplained_misses TRACE: the missed frames in TRACE that no overrun
# explains: none of the groups on the GPU in the period before the frame's
# end (the frame's own included) ran longer than its bound. A group past
# its bound is the host's noise on llvmpipe (see below); the scheduler's
# promise holds for groups within their bounds.
unexplained_misses() {
  jq -s '[.[] | select(.type == null)] as $g
    | [.[] | select(.type == "frame" and .missed)
      | select(.release_ns as $r | .end_ns as $e
        | [$g[] | select(.dispatch_ns < $e and .end_ns > $r - 16667000
          and .measured_ns > .bound_ns)] | length == 0)] | length' "$1"
}

# attempt N: both clients, FRAMES cluster frames, traced into $TMP/trace-N.jsonl.
# Sets frames, misses, md_misses, trace_misses, unexplained, throttled, after
# and steal (% of CPU time taken by the hypervisor for other guests during
# the attempt).
attempt() {
  local n=$1 s0 s1 before
  s0=$(steal_ticks)
  gm_in_domain --timeout 60 "$SOCK_B" "$LONG_DRAWS" --iterations 1 --size 960x540 \
    --seconds $((FRAMES / 60 + 8)) --json /dev/fd/3 3>"$TMP/long.json" >"$TMP/long.log" 2>&1 &
  LONG_PID=$!
  gm_track "$LONG_PID"
  sleep 2
  gm_in_domain --timeout 60 "$SOCK_A" "$CLUSTER_CLIENT" --frames "$FRAMES" \
    --json /dev/fd/3 3>"$TMP/cluster.json" >"$TMP/cluster.log" 2>&1 &
  CLUSTER_PID=$!
  gm_track "$CLUSTER_PID"
  sleep 2 # past the cluster's start-up (shader compilation)
  before=$(budgets_json)
  ctl trace start "$TMP/trace-$n.jsonl" >&2 || fail "trace start failed"
  wait "$CLUSTER_PID" || fail "cluster-client failed: $(tail -3 "$TMP/cluster.log")"
  ctl trace stop >&2 || fail "trace stop failed"
  after=$(budgets_json)
  wait "$LONG_PID" || fail "long-draws failed: $(tail -3 "$TMP/long.log")"
  s1=$(steal_ticks)
  steal=$(steal_percent "$s0" "$s1")
  frames=$(jq .frames "$TMP/cluster.json")
  misses=$(jq .misses "$TMP/cluster.json")
  md_misses=$(($(jq '.domains[0].deadline_misses' <<<"$after") - $(jq '.domains[0].deadline_misses' <<<"$before")))
  trace_misses=$(jq -s '[.[] | select(.type == "frame" and .missed and (.startup | not))] | length' "$TMP/trace-$n.jsonl")
  unexplained=$(unexplained_misses "$TMP/trace-$n.jsonl")
  throttled=$(jq '.domains[1].throttled' <<<"$after")
  log "attempt $n: cluster: $frames frames, $misses missed by its clock, $md_misses by mediatord's" \
    "after start-up ($trace_misses in the trace, $unexplained of them no overrun past a bound" \
    "explains); p99 latency $(jq .p99_latency_us "$TMP/cluster.json") us;" \
    "infotainment: $(jq .groups_per_s "$TMP/long.json") groups/s, throttled $throttled;" \
    "host CPU steal $steal %"
  [ "$frames" -eq "$FRAMES" ] || fail "cluster-client ran $frames frames, not $FRAMES"
  # mediatord's count is the scheduler's: a frame completed on the GPU after
  # its release + deadline. The client's own clock also counts its CPU time
  # (GL calls, virgl encoding, the vtest round trips) on two cores shared
  # with llvmpipe's threads, which no GPU scheduler controls: up to
  # CLIENT_MISSES_MAX are tolerated there, and printed.
  [ "$md_misses" -eq 0 ] && [ "$trace_misses" -eq 0 ] && [ "$misses" -le "$CLIENT_MISSES_MAX" ]
}

# These machines are VMs on a shared host. While the hypervisor gives a
# large share of the CPUs to other guests (steal), llvmpipe, the clients and
# mediatord all stall, and frames come late however the GPU is scheduled
# (in one such CI-like run the cluster's own groups took up to 39 ms). An
# attempt with misses counts against the scheduler when the host was quiet
# (steal under STEAL_NOISY %) and a missed frame waited behind no group
# past its bound (unexplained_misses; as in the single draws' run below:
# on a quiet host here one run in four, 2026-11-28, lost a frame by
# mediatord's count). Else it
# is run again, up to ATTEMPTS times, and the test fails if none passes.
STEAL_NOISY=5
ATTEMPTS=3
for n in $(seq "$ATTEMPTS"); do
  attempt "$n" && break
  frames_judged || break
  if { [ "$steal" -lt "$STEAL_NOISY" ] && [ "$unexplained" -gt 0 ]; } || [ "$n" -eq "$ATTEMPTS" ]; then
    [ "$md_misses" -eq 0 ] || fail "mediatord counted $md_misses cluster deadline misses (steal $steal %)"
    [ "$trace_misses" -eq 0 ] || fail "the trace shows $trace_misses missed cluster frames"
    fail "the cluster missed $misses deadlines by its own clock (steal $steal %)"
  fi
  log "attempt $n: each miss waited behind an overrun, or the host was noisy (CPU steal $steal %): again"
done
# A frame said to be alone had no infotainment group on the GPU while it ran (the
# trace's group records, from dispatch to fence). Whether any frame had one
# beside it depends on the run: the scheduler may keep every flood group
# out of the cluster's frames (all alone, and rightly), or mediatord may
# count frames as crossed that no group overlapped (a group granted after
# the frame's group ended, before the frame closed: not alone, and
# conservatively so). So the check is that no frame overlapped by a group
# is said to be alone; how many frames were overlapped is printed (in most
# runs hundreds of the ~490: the check is not empty).
python3 - "$TMP/trace-$n.jsonl" "$DOMAIN_A" <<'PY' || fail "a frame the trace says was alone was not"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
frames = [r for r in recs if r.get("type") == "frame" and r["domain"] == sys.argv[2] and r["end_ns"]]
others = [r for r in recs if "type" not in r and r["domain"] != sys.argv[2]]
def overlapped(f):
    return any(g["dispatch_ns"] < f["end_ns"] and g["end_ns"] > f["release_ns"] for g in others)
alone = [f for f in frames if f["alone"]]
crossed = [f for f in frames if overlapped(f)]
bad = [f for f in alone if overlapped(f)]
print("test-isolation: %d frames, %d alone, %d overlapped by an infotainment group, "
      "%d alone though overlapped" % (len(frames), len(alone), len(crossed), len(bad)),
      file=sys.stderr)
sys.exit(1 if bad else 0)
PY
[ "$throttled" -gt 0 ] || fail "infotainment was never throttled"
# The flood ran beside the cluster: more than 100 groups by the cluster's
# last frame in the plain build. An AddressSanitizer worker's groups are
# longer than the 2 ms a gap may hold at least, so they are revoked and the
# client suspended, with penalties that grow (2026-11-28 here: 16
# revocations or more in one attempt). In an ASan CI run that day the flood had run
# fewer than 100 groups by then, its first revoked at 250 ms, though 24
# groups/s over its whole run. There it must have run and been throttled.
ivi_groups=$(jq '.domains[1].groups' <<<"$after")
log "infotainment: $ivi_groups groups by the cluster's last frame"
[ "$ivi_groups" -gt 0 ] || fail "infotainment never ran"
if judged_here "the infotainment flood's group count"; then
  [ "$ivi_groups" -gt 100 ] || fail "infotainment hardly ran: $ivi_groups groups"
fi
# Consistent numbers: a strict domain never uses more than its budget plus
# what it owed; the cluster frames mediatord saw are about the client's.
jq -e '.domains[1] | .used_last_period_us <= .budget_us + .debt_us + 5000' <<<"$after" \
  >/dev/null || fail "infotainment used more than budget + debt: $after"
jq -e '.domains[0] | .frames >= 500 and .strict == false and .frame_cost_us > 0' \
  <<<"$after" >/dev/null || fail "cluster frames or frame cost not shown: $after"
# The trace has a record per cluster frame: released, due, done, on time.
jq -se --arg d "$DOMAIN_A" '[.[] | select(.type == "frame")] as $f |
  ($f | length) >= 400 and all($f[]; .domain == $d and .deadline_ns > .release_ns and
    (.missed or (.end_ns > 0 and .end_ns <= .deadline_ns)))' "$TMP/trace-$n.jsonl" >/dev/null ||
  fail "the trace lacks consistent frame records"
log "trace: $(jq -s '[.[] | select(.type == "frame")] | length' "$TMP/trace-$n.jsonl") frame records, none missed"

# set-budget: applies from the next period; refused when the safety
# domains would not fit; bad arguments are usage errors.
out=$(ctl set-budget "$DOMAIN_B" --budget-us 6000) || fail "set-budget failed: $out"
grep -q "budget 6000 us per 16667 us" <<<"$out" || fail "set-budget said: $out"
sleep 0.1
[ "$(domain_field "$DOMAIN_B" budget_us)" = 6000 ] || fail "the new budget was not applied"
ctl set-budget "$DOMAIN_A" --budget-us 16000 --deadline-us 8000 >"$TMP/refused.out" 2>&1 && rc=0 || rc=$?
{ [ "$rc" -eq 1 ] && grep -q "fit its deadline" "$TMP/refused.out"; } ||
  fail "an infeasible safety budget: exit $rc, $(cat "$TMP/refused.out")"
ctl set-budget "$DOMAIN_B" --budget-us 0 >/dev/null 2>&1 && rc=0 || rc=$?
[ "$rc" -eq 2 ] || fail "set-budget --budget-us 0: exit $rc, expected 2"
ctl set-budget nosuch --budget-us 10 >"$TMP/nosuch.out" 2>&1 && rc=0 || rc=$?
{ [ "$rc" -eq 1 ] && grep -q "no domain 'nosuch'; the domains are $DOMAIN_A, $DOMAIN_B" "$TMP/nosuch.out"; } || fail "unknown domain: exit $rc"

# A restarted infotainment client starts from the domain's saved model,
# whose memo predicts its first draw (the shader compile, ~100 ms) above
# the strict domain's whole budget, while its context is young: it runs
# (it once waited for budget a strict domain never has).
gm_in_domain --timeout 60 "$SOCK_B" "$LONG_DRAWS" --iterations 1 --size 960x540 --seconds 3 \
  --json /dev/fd/3 3>"$TMP/restart.json" >"$TMP/restart.log" 2>&1 ||
  fail "a restarted long-draws failed: $(tail -3 "$TMP/restart.log")"
[ "$(jq .groups "$TMP/restart.json")" -gt 10 ] ||
  fail "a restarted long-draws ran only $(jq .groups "$TMP/restart.json") groups in 3 s"
log "a restarted infotainment client: $(jq .groups "$TMP/restart.json") groups in 3 s"
# A flood of single long draws (one draw per group) in a domain that is
# not strict, at the default piece length: a draw of 1.5 periods fits no
# gap the cluster leaves, so the worker cuts each into scissor tiles, bands
# of its rows drawn one by one, each a piece with its own grant, placed
# between cluster frames; the cluster misses nothing by mediatord's count
# after its start-up. The same noise rule as above. Draws of SINGLE_MS ms
# at 1920 x SINGLE_HEIGHT, the height sized on this machine below.
SINGLE_ITER=10
SINGLE_MS=25
SINGLE_HEIGHT=1080
single_attempt() {
  local n=$1 s0 s1 before after
  s0=$(steal_ticks)
  gm_in_domain --timeout 60 "$SOCK_B" "$LONG_DRAWS" --draws 1 --iterations "$SINGLE_ITER" \
    --size "1920x$SINGLE_HEIGHT" --seconds $((FRAMES / 60 + 8)) --json /dev/fd/3 3>"$TMP/single.json" >"$TMP/single.log" 2>&1 &
  LONG_PID=$!
  gm_track "$LONG_PID"
  sleep 4 # past long-draws' young groups (no cluster yet: they run whole)
  gm_in_domain --timeout 60 "$SOCK_A" "$CLUSTER_CLIENT" --frames "$FRAMES" \
    --json /dev/fd/3 3>"$TMP/cluster-single.json" >"$TMP/cluster-single.log" 2>&1 &
  CLUSTER_PID=$!
  gm_track "$CLUSTER_PID"
  sleep 2
  before=$(budgets_json)
  ctl trace start "$TMP/trace-single-$n.jsonl" >&2 || fail "trace start failed"
  wait "$CLUSTER_PID" || fail "cluster-client failed: $(tail -3 "$TMP/cluster-single.log")"
  ctl trace stop >&2 || fail "trace stop failed"
  after=$(budgets_json)
  kill -TERM "$LONG_PID" 2>/dev/null || fail "long-draws stopped early: $(tail -3 "$TMP/single.log");" \
    "mediatord: $(grep -E "domain $DOMAIN_B: .*(killing worker|killed by|exited|stopping)" "$MEDIATORD_LOG" | tail -3)"
  wait "$LONG_PID" 2>/dev/null || :
  s1=$(steal_ticks)
  steal=$(steal_percent "$s0" "$s1")
  md_misses=$(($(jq '.domains[0].deadline_misses' <<<"$after") - $(jq '.domains[0].deadline_misses' <<<"$before")))
  single_groups=$(($(jq '.domains[1].groups' <<<"$after") - $(jq '.domains[1].groups' <<<"$before")))
  log "single draws, attempt $n: cluster $(jq .frames "$TMP/cluster-single.json") frames," \
    "$(jq .misses "$TMP/cluster-single.json") missed by its clock, $md_misses by mediatord's" \
    "after start-up; infotainment $single_groups groups meanwhile; host CPU steal $steal %"
  unexplained=$(unexplained_misses "$TMP/trace-single-$n.jsonl")
  log "single draws, attempt $n: missed frames no overrun past a bound explains: $unexplained"
  tiles=$(jq -s --arg d "$DOMAIN_B" '[.[] | select(.type == null and .domain == $d and .tile)] | length' \
    "$TMP/trace-single-$n.jsonl")
  log "single draws, attempt $n: $tiles scissor tiles in the trace"
  # A sanitizer build's run reports the misses (frames_judged in lib.sh).
  [ "$md_misses" -eq 0 ] || ! frames_judged
}
# A domain that is not strict (a strict one never runs a group above its
# budget): mediatord again, with the plain two domains.
gm_stop_mediatord || fail "mediatord did not stop cleanly"
write_config budget 1
start_mediatord
# The draw's height for SINGLE_MS ms here: its time is about proportional
# to its pixels. Measured alone, by the client's median round trip.
gm_in_domain --timeout 60 "$SOCK_B" "$LONG_DRAWS" --draws 1 --iterations "$SINGLE_ITER" \
  --size 1920x1080 --seconds 3 --json /dev/fd/3 3>"$TMP/single-size.json" >"$TMP/single-size.log" 2>&1 ||
  fail "long-draws failed: $(tail -3 "$TMP/single-size.log")"
SINGLE_HEIGHT=$(jq --argjson ms "$SINGLE_MS" '[[1080 * $ms / .p50_group_ms | floor, 1080] | min, 270] | max' \
  "$TMP/single-size.json")
log "single draws: $(jq .p50_group_ms "$TMP/single-size.json") ms at 1920x1080 alone: 1920x$SINGLE_HEIGHT"
# An attempt with misses counts against the scheduler unless the host was
# noisy or every missed frame waited behind a group that overran its bound;
# then it runs again, up to ATTEMPTS times, and the test fails if none
# passes.
for n in $(seq "$ATTEMPTS"); do
  single_attempt "$n" && break
  if { [ "$steal" -lt "$STEAL_NOISY" ] && [ "$unexplained" -gt 0 ]; } || [ "$n" -eq "$ATTEMPTS" ]; then
    fail "single long draws: mediatord counted $md_misses cluster deadline misses," \
      "$unexplained not explained by an overrun (steal $steal %)"
  fi
  log "attempt $n: each miss waited behind an overrun, or the host was noisy (CPU steal $steal %): again"
done
[ "$single_groups" -gt 20 ] || fail "the single-draw flood hardly ran: $single_groups groups"
[ "$tiles" -gt 20 ] || fail "the single draws were not cut into scissor tiles: $tiles tiles"

gm_assert_mediatord_alive
log "ok"
