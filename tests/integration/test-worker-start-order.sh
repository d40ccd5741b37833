#!/bin/bash
# SPDX-License-Identifier: MIT
# A normal domain's workers make their renderers one at a time
# (mediator/daemon/client_start.c, wire.h's WIRE_START), and nothing of
# that makes anyone else wait.
#
# Eight clients handshake with the normal domain at once (vtest-poke
# handshake, each in a loop for a few seconds), a safety client beside
# them, and idle connections to the normal domain that never handshake.
# By mediatord's log (one thread: its lines are in the order it acted),
# no normal worker begins its renderer while another of its domain has
# begun and has not said it is up; every normal worker asked (a
# "makes its renderer" line before its "renderer up"), no safety worker
# did; every handshake succeeded; the idle connections held no one up
# (the handshakes end while they are still open); and the safety client's
# handshakes took at most three times as long as alone, measured first in
# the same run (a second at least).
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering
require_cmd jq jq
CLIENTS=8
ROUNDS=3

write_config budget 1
start_mediatord

# Idle connections first: their workers never ask, and must hold no one up.
timeout -k 5 120 "$VTEST_POKE" "$SOCK_B" hold-idle 4 >"$TMP/idle.out" 2>&1 &
IDLE=$!
gm_track "$IDLE"
wait_field "$DOMAIN_B" clients 4 30

# A client's capabilities come once its worker's renderer is up, and the
# renderers are made one at a time: the last of CLIENTS waits for all the
# others' (in the plain build 2 s at most here; an AddressSanitizer
# worker's took up to 4.2 s each, 2026-11-28). vtest-poke's 5 s for a reply
# is too short for that; a Mesa client waits as long as it takes.
export VTEST_POKE_REPLY_MS=60000
handshakes() { # SOCKET N OUT: N handshakes one after another; each's ms in OUT
  local i t0
  for i in $(seq 1 "$2"); do
    t0=$(date +%s%N)
    timeout -k 5 90 "$VTEST_POKE" "$1" handshake >/dev/null 2>>"$3.err" || {
      echo "fail" >>"$3"
      continue
    }
    echo $((($(date +%s%N) - t0) / 1000000)) >>"$3"
  done
}
# The safety client's handshakes alone first, its baseline in this run.
handshakes "$SOCK_A" "$ROUNDS" "$TMP/safety-alone"
! grep -q fail "$TMP/safety-alone" || fail "a safety handshake alone failed: $(tail -3 "$TMP/safety-alone.err")"
pids=()
for k in $(seq 1 "$CLIENTS"); do
  handshakes "$SOCK_B" "$ROUNDS" "$TMP/normal-$k" &
  pids+=($!)
done
handshakes "$SOCK_A" $((ROUNDS * 2)) "$TMP/safety" &
pids+=($!)
for p in "${pids[@]}"; do
  wait "$p" || fail "a handshake loop failed"
done
gm_alive "$IDLE" || fail "the idle connections ended before the handshakes: $(cat "$TMP/idle.out")"

! grep -qh fail "$TMP"/normal-* "$TMP/safety" ||
  fail "a handshake failed: $(cat "$TMP"/normal-*.err "$TMP"/safety.err 2>/dev/null | tail -3)"
[ "$(cat "$TMP"/normal-? | wc -l)" -eq $((CLIENTS * ROUNDS)) ] || fail "not every normal handshake ran"

# The order, by mediatord's log.
out=$(awk -v d="$DOMAIN_B" -v s="$DOMAIN_A" '
  function worker(line) { match(line, /worker [0-9]+/); return substr(line, RSTART + 7, RLENGTH - 7) }
  $0 ~ "domain " d ": client [0-9]+: worker [0-9]+ makes its renderer" {
    w = worker($0)
    if (busy != "") { print "worker " w " began while " busy " had not said its renderer is up"; bad = 1 }
    busy = w; asked[w] = 1; began++
  }
  $0 ~ "domain " d ": client [0-9]+: worker [0-9]+ has its renderer up" {
    w = worker($0)
    if (!asked[w]) { print "normal worker " w " made its renderer without asking"; bad = 1 }
    if (w == busy) busy = ""
    up++
  }
  $0 ~ "domain " d ": client [0-9]+: worker [0-9]+ exited" || $0 ~ "has no renderer up .* after it began" {
    if (worker($0) == busy) busy = ""
  }
  $0 ~ "domain " s ": client [0-9]+: worker [0-9]+ makes its renderer" {
    print "a safety worker asked"; bad = 1
  }
  END { print began " normal workers began their renderers one at a time, " up " said they are up"; exit bad }
' "$MEDIATORD_LOG") || fail "$out"
log "$out"
began=$(grep -c "domain $DOMAIN_B: client [0-9]*: worker [0-9]* makes its renderer" "$MEDIATORD_LOG")
[ "$began" -eq $((CLIENTS * ROUNDS)) ] || fail "$began normal workers asked, not $((CLIENTS * ROUNDS))"
waited=$(sed -n "s/.*domain $DOMAIN_B: .* makes its renderer (waited \([0-9]*\) ms.*/\1/p" \
  "$MEDIATORD_LOG" | sort -n)
log "normal workers' waits for their turn (ms): median $(sed -n "$(((began + 1) / 2))p" <<<"$waited")," \
  "longest $(tail -1 <<<"$waited"); renderer up after (ms): $(grep "domain $DOMAIN_B: client" \
    "$MEDIATORD_LOG" | sed -n 's/.*renderer up, \([0-9]*\) ms after its start/\1/p' | sort -n |
    tr '\n' ' ')"
[ "$(tail -1 <<<"$waited")" -gt 0 ] || fail "no normal worker ever waited: the test made no overlap"
safety_max=$(sort -n "$TMP/safety" | tail -1)
alone_max=$(sort -n "$TMP/safety-alone" | tail -1)
# Three times its longest alone, and a second in any case: the normal
# workers start at idle priority beside it on the same two cores (beside
# them 1.9 to 2.4 times as long, 2026-11-28). Had it waited its turn
# behind theirs, it would have taken about CLIENTS of their renderers.
limit=$((3 * alone_max > 1000 ? 3 * alone_max : 1000))
log "safety handshakes alone (ms): $(tr '\n' ' ' <"$TMP/safety-alone");" \
  "beside them: $(tr '\n' ' ' <"$TMP/safety") (limit $limit)"
[ "$safety_max" -lt "$limit" ] ||
  fail "a safety handshake took $safety_max ms beside the normal ones (limit $limit ms)"
gm_stop 5 "$IDLE"
wait "$IDLE" 2>/dev/null || :
gm_assert_mediatord_alive
log "ok"
