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
# handshakes took no longer than alone (its longest under a second).
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

handshakes() { # SOCKET N OUT: N handshakes one after another; each's ms in OUT
  local i t0
  for i in $(seq 1 "$2"); do
    t0=$(date +%s%N)
    timeout -k 5 60 "$VTEST_POKE" "$1" handshake >/dev/null 2>>"$3.err" || {
      echo "fail" >>"$3"
      continue
    }
    echo $((($(date +%s%N) - t0) / 1000000)) >>"$3"
  done
}
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
log "safety handshakes beside them (ms): $(tr '\n' ' ' <"$TMP/safety")"
[ "$safety_max" -lt 1000 ] || fail "a safety handshake took $safety_max ms beside the normal ones"
gm_stop 5 "$IDLE"
wait "$IDLE" 2>/dev/null || :
gm_assert_mediatord_alive
log "ok"
