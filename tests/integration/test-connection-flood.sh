#!/bin/bash
# SPDX-License-Identifier: MIT
# One domain's flood of connections does not lock the safety domain out
# (issue 29): a 60 Hz cluster client (guest-shim/cluster-client) draws in
# the safety domain while 300 idle connections (vtest-poke hold-idle) are
# opened to the normal domain's socket. The normal domain keeps exactly
# its max_clients; the rest are closed at once, with few log lines naming
# the domain and its limit (rate-limited); a new cluster connection is
# still accepted and served (a handshake, and a second cluster client that
# draws its frames); and the running cluster misses at most one deadline
# more by mediatord's count during the flood than in as long right after it
# (the host's noise, measured the same way, as test-restart does; 1 % more
# in a sanitizer build). An attempt that misses more is run again, up to 3
# times.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering
require_cmd jq jq
require_cmd pgrep procps
[ -x "$CLUSTER_CLIENT" ] || fail "cluster-client not built"
FRAMES=1500 # 25 s at 60 Hz: start-up, the flood (~8 s), as long without
# Cluster misses by mediatord's count allowed during the flood above the
# host's noise: 1. In about half the attempts on a quiet 2-core host the
# running cluster missed 1 frame in the flood's 3-6 s, never more; issue
# 29's target is 0, not met yet. The likeliest cause, not yet measured: the
# normal domain's 16 workers starting at once (each forked from mediatord's
# loop and sandboxed, at idle priority, on 2 cores). Idle connections make
# no renderer, so WIRE_START's turns do not pace them; pacing the spawns
# would, at the price of holding the domain's other clients up behind idle
# connections (tried, taken back). A sanitizer build's run reports the
# misses and does not judge them (frames_judged in lib.sh).
MISS_ALLOWANCE=1
FLOOD=300
MAX_CLIENTS=16 # the default max_clients, written out
# At most the rate limit's burst (domain_limits.h: 5 a 10 s window) per
# window the run spans, and some slack for a window boundary.
MAX_REFUSAL_LINES=20

write_config budget 1
sed -i "/^\[domain $DOMAIN_B\]/a max_clients = $MAX_CLIENTS" "$CONFIG"
start_mediatord
grep -q "domain $DOMAIN_B: at most $MAX_CLIENTS clients" "$MEDIATORD_LOG" ||
  fail "mediatord did not log the domain's limits"
grep -q "^.*memory: .*cgroup v2" "$MEDIATORD_LOG" ||
  fail "mediatord did not say how memory is limited"
log "$(grep -m1 'memory: ' "$MEDIATORD_LOG")"

# attempt N: the cluster; the flood, the new cluster connection (counted:
# from the flood's start to the handshake); a second cluster client; then,
# the flood and the second client gone, as long again: the host's own
# noise measured the same way (as test-restart does). Sets flood_misses,
# quiet_misses, flood_s, steal.
attempt() {
  local n=$1 s0 s1 j0 j1 j2 j3 out deadline t0 frames misses
  s0=$(steal_ticks)
  gm_in_domain --timeout 60 "$SOCK_A" "$CLUSTER_CLIENT" --frames "$FRAMES" \
    --json /dev/fd/3 3>"$TMP/cluster-$n.json" >"$TMP/cluster-$n.log" 2>&1 &
  CLUSTER_PID=$!
  gm_track "$CLUSTER_PID"
  sleep 2 # past the cluster's start-up (shader compilation)
  j0=$(budgets_json)
  t0=$SECONDS
  timeout -k 5 60 "$VTEST_POKE" "$SOCK_B" hold-idle "$FLOOD" >"$TMP/flood-$n.out" 2>&1 &
  FLOOD_PID=$!
  gm_track "$FLOOD_PID"
  deadline=$((SECONDS + 30))
  until grep -q '^hold-idle:' "$TMP/flood-$n.out"; do
    gm_alive "$FLOOD_PID" || fail "vtest-poke hold-idle ended: $(cat "$TMP/flood-$n.out")"
    [ $SECONDS -lt $deadline ] || fail "the flood of $FLOOD connections took over 30 s"
    sleep 0.2
  done
  out=$(grep '^hold-idle:' "$TMP/flood-$n.out")
  log "flood: $out"
  held=$(sed -n 's/.* \([0-9]*\) held$/\1/p' <<<"$out")
  closed=$(sed -n 's/.* \([0-9]*\) closed by the server.*/\1/p' <<<"$out")
  [ "$held" -eq "$MAX_CLIENTS" ] ||
    fail "the normal domain holds $held of $FLOOD idle connections, not its max_clients $MAX_CLIENTS"
  [ "$closed" -eq $((FLOOD - MAX_CLIENTS)) ] ||
    fail "the server closed $closed of $FLOOD connections, expected $((FLOOD - MAX_CLIENTS))"
  [ "$(domain_field "$DOMAIN_B" clients)" -eq "$MAX_CLIENTS" ] ||
    fail "show-budgets: $DOMAIN_B has $(domain_field "$DOMAIN_B" clients) clients"
  j1=$(budgets_json)
  flood_s=$((SECONDS - t0))
  # A new cluster connection, while the flood holds the normal domain full.
  # Not counted in the flood's misses, as the second client below: its
  # worker makes its renderer at the handshake (llvmpipe's start, tens of
  # ms of CPU at the safety domain's priority, beside the running
  # cluster's worker on 2 cores); a CI run counted 2-4 misses in that
  # window with it, 0 in as long after.
  timeout -k 5 30 "$VTEST_POKE" "$SOCK_A" handshake >&2 ||
    fail "a new cluster connection was not served during the flood"
  # A second cluster client, served while the flood goes on. Not counted
  # in the flood's misses: two clients of one safety domain are one stream
  # of frames to mediatord, so the newcomer's start-up (shader compiles of
  # tens of ms) shows as a missed frame of the domain, the flood or not.
  gm_in_domain --timeout 60 "$SOCK_A" "$CLUSTER_CLIENT" --frames 120 \
    --json /dev/fd/3 3>"$TMP/second-$n.json" >"$TMP/second-$n.log" 2>&1 ||
    fail "a second cluster client failed during the flood: $(tail -3 "$TMP/second-$n.log")"
  [ "$(jq .frames "$TMP/second-$n.json")" -eq 120 ] ||
    fail "the second cluster client drew $(jq .frames "$TMP/second-$n.json") of 120 frames"
  gm_stop 5 "$FLOOD_PID"
  wait "$FLOOD_PID" 2>/dev/null || :
  wait_field "$DOMAIN_B" clients 0 20
  wait_field "$DOMAIN_A" clients 1 20
  j2=$(budgets_json)
  sleep "$flood_s"
  gm_alive "$CLUSTER_PID" || fail "cluster-client ended before the quiet window did"
  j3=$(budgets_json)
  wait "$CLUSTER_PID" || fail "cluster-client failed: $(tail -3 "$TMP/cluster-$n.log")"
  s1=$(steal_ticks)
  steal=$(steal_percent "$s0" "$s1")
  frames=$(jq .frames "$TMP/cluster-$n.json")
  misses=$(jq .misses "$TMP/cluster-$n.json")
  flood_misses=$(safety_misses "$j0" "$j1")
  quiet_misses=$(safety_misses "$j2" "$j3")
  log "attempt $n: cluster: $frames frames; missed by mediatord's count: $flood_misses in" \
    "the $flood_s s of the flood, $quiet_misses in as long after it ($misses in all by its" \
    "own clock); second cluster client: $(jq .frames "$TMP/second-$n.json") frames;" \
    "host CPU steal $steal %, load $(cut -d' ' -f1-3 /proc/loadavg)"
  [ "$frames" -eq "$FRAMES" ] || fail "cluster-client ran $frames frames, not $FRAMES"
  [ "$flood_misses" -le $((quiet_misses + MISS_ALLOWANCE)) ]
}

# The flood may cost the cluster no more misses than the host's noise
# does in as long; an attempt that fails that is run again (the noise
# comes in bursts: another guest, another test run on the shared cores),
# up to ATTEMPTS times.
ATTEMPTS=3
beside_noise "$ATTEMPTS" attempt "$MISS_ALLOWANCE"

lines=$(grep -c "domain $DOMAIN_B: refusing a client: it has $MAX_CLIENTS, its max_clients" \
  "$MEDIATORD_LOG" || true)
[ "$lines" -ge 1 ] || fail "no log line names the domain and its max_clients"
[ "$lines" -le "$MAX_REFUSAL_LINES" ] ||
  fail "$lines refusal lines for $((attempt_n * (FLOOD - MAX_CLIENTS))) refusals: not rate-limited"
# Every refusal is counted in the log: a line of its own, or in a later
# line's count ("N more ... since the last line").
told=$(grep "domain $DOMAIN_B: " "$MEDIATORD_LOG" |
  sed -n 's/.*refusing a client: .*(\([0-9]*\) more refused.*/1 \1/p
          s/.*: \([0-9]*\) more clients refused.*/0 \1/p' |
  awk '{ n += $1 + $2 } END { print n + 0 }')
[ "$told" -eq $((attempt_n * (FLOOD - MAX_CLIENTS))) ] ||
  fail "the log tells of $told refusals, not the $((attempt_n * (FLOOD - MAX_CLIENTS))) made"
log "refusals: $((attempt_n * (FLOOD - MAX_CLIENTS))) in $lines lines and $(grep -c ' more clients refused' \
  "$MEDIATORD_LOG") counts, e.g. $(grep -m1 'refusing a client' "$MEDIATORD_LOG");" \
  "$(grep -m1 ' more clients refused' "$MEDIATORD_LOG")"
! grep -q "clients already" "$MEDIATORD_LOG" || fail "the global client table was reached"
gm_assert_mediatord_alive
log "ok"
