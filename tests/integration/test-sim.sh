#!/bin/bash
# SPDX-License-Identifier: MIT
# mediator-sim on small stored traces with known outcomes (tests/data/sim/):
# a 60 Hz cluster (1.5 ms frames) against an infotainment flood of 20 ms
# groups misses most frames under fifo and none under budget, which still
# keeps the GPU ~90 % busy; a flood of 40 ms groups (larger than any gap the
# cluster leaves) is not schedulable: after max_defer it runs and frames are
# missed, or with oversize = unschedulable it is refused; the same groups
# cut into pieces (tests/data/sim/ivi-40ms-pieces.jsonl) are schedulable.
# Replays are
# deterministic; bad input exits 2 with a message.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
SIM=$MEDIATOR_SIM
DATA=$TESTS_SRCDIR/data/sim
[ -x "$SIM" ] || fail "mediator-sim not built at $SIM"

# sim OUT ARGS...: runs mediator-sim, keeps stdout in $TMP/OUT, sets $rc.
sim() {
  local out=$1
  shift
  "$SIM" "$@" >"$TMP/$out" 2>"$TMP/$out.err" && rc=0 || rc=$?
}

# col OUT DOMAIN N: column N of DOMAIN's row.
col() {
  awk -v d="$2" -v n="$3" '$1 == d { print $n }' "$TMP/$1"
}

sim fifo --check "$DATA/fifo.conf" "$DATA/cluster-60hz.jsonl" "$DATA/ivi-20ms.jsonl"
[ "$rc" -eq 1 ] || fail "fifo: exit $rc, expected 1 (not schedulable)"
[ "$(col fifo cluster 5)" -ge 200 ] || fail "fifo: only $(col fifo cluster 5) cluster misses"
grep -q "schedulable: no" "$TMP/fifo" || fail "fifo: no verdict"

sim budget --check "$DATA/budget.conf" "$DATA/cluster-60hz.jsonl" "$DATA/ivi-20ms.jsonl"
[ "$rc" -eq 0 ] || fail "budget: exit $rc: $(cat "$TMP/budget" "$TMP/budget.err")"
[ "$(col budget cluster 3)" -eq 240 ] || fail "budget: cluster ran $(col budget cluster 3) groups"
[ "$(col budget cluster 5)" -eq 0 ] || fail "budget: $(col budget cluster 5) cluster misses"
[ "$(col budget infotainment 3)" -eq 200 ] || fail "budget: infotainment lost groups"
[ "$(col budget infotainment 8)" -gt 0 ] || fail "budget: infotainment never throttled"
util=$(col budget infotainment 6)
[ "${util%%.*}" -ge 75 ] || fail "budget: infotainment kept only $util of the GPU"

sim big --check "$DATA/budget.conf" "$DATA/cluster-60hz.jsonl" "$DATA/ivi-40ms.jsonl"
[ "$rc" -eq 1 ] || fail "40 ms groups: exit $rc, expected 1"
[ "$(col big infotainment 8)" -eq 20 ] || fail "40 ms groups: not all throttled"
[ "$(col big cluster 5)" -gt 0 ] || fail "40 ms groups ran after max_defer without a miss?"

# The same 40 ms groups cut into pieces of 4 ms (doc/design.md, "Pieces";
# each piece a record of its own, "piece": [k, 10]): schedulable, the
# cluster misses nothing and no piece waits as oversize.
sim pieces --check "$DATA/budget.conf" "$DATA/cluster-60hz.jsonl" "$DATA/ivi-40ms-pieces.jsonl"
[ "$rc" -eq 0 ] || fail "40 ms groups in pieces: exit $rc: $(cat "$TMP/pieces" "$TMP/pieces.err")"
[ "$(col pieces cluster 5)" -eq 0 ] || fail "40 ms groups in pieces: $(col pieces cluster 5) cluster misses"
[ "$(col pieces infotainment 3)" -eq 200 ] || fail "40 ms groups in pieces: not all 200 pieces ran"
[ "$(col pieces infotainment 8)" -eq 0 ] || fail "pieces of 4 ms throttled as oversize"

sim refused --check "$DATA/unschedulable.conf" "$DATA/cluster-60hz.jsonl" "$DATA/ivi-40ms.jsonl"
[ "$rc" -eq 1 ] || fail "unschedulable: exit $rc, expected 1"
[ "$(col refused infotainment 9)" -eq 20 ] || fail "unschedulable: not all 40 ms groups refused"
[ "$(col refused cluster 5)" -eq 0 ] || fail "unschedulable: the cluster missed frames"

sim again --check "$DATA/budget.conf" "$DATA/cluster-60hz.jsonl" "$DATA/ivi-20ms.jsonl"
cmp -s "$TMP/budget" "$TMP/again" || fail "two replays of the same traces differ"

sim oracle --model oracle "$DATA/budget.conf" "$DATA/cluster-60hz.jsonl" "$DATA/ivi-20ms.jsonl"
[ "$rc" -eq 0 ] || fail "--model oracle: exit $rc"

# Bad input: exit 2 and a message.
printf '{"domain":"cluster","client":1}\n' >"$TMP/bad.jsonl"
sim bad "$DATA/budget.conf" "$TMP/bad.jsonl"
{ [ "$rc" -eq 2 ] && grep -q "bad.jsonl:1: not a group record" "$TMP/bad.err"; } ||
  fail "a malformed trace: exit $rc, $(cat "$TMP/bad.err")"
sim missing "$DATA/budget.conf" "$TMP/none.jsonl"
{ [ "$rc" -eq 2 ] && grep -q "none.jsonl" "$TMP/missing.err"; } || fail "a missing trace: exit $rc"
sim noconf "$TMP/none.conf" "$DATA/cluster-60hz.jsonl"
[ "$rc" -eq 2 ] || fail "a missing config: exit $rc"
sim usage --model nonsense "$DATA/budget.conf" "$DATA/cluster-60hz.jsonl"
[ "$rc" -eq 2 ] || fail "a bad --model: exit $rc"
log "ok: fifo $(col fifo cluster 5) misses, budget 0 (infotainment ${util} of the GPU)"
