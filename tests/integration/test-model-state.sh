#!/bin/bash
# The learned model state survives a restart (seed 003 §4.6): a first run
# of glmark2-es2 leaves the domain's state file in state_dir; after a
# restart the worker loads it and predicts the first groups better than a
# cold start did; a corrupt state file is reported, ignored, and replaced.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering

start_xvfb
write_config fifo 1
STATE=$TMP/state/$DOMAIN_A.sgd.state

# one_run N: mediatord, a traced glmark2 run in domain A, mediatord stopped.
one_run() {
  start_mediatord
  ctl trace start "$TMP/trace-$1.jsonl" >/dev/null || fail "trace start failed"
  run_glmark "a$1" "$SOCK_A" $((3 + GLMARK_SLACK_S)) -b build:duration=3
  wait_field "$DOMAIN_A" clients 0 10 # the worker saved its state on exit
  ctl trace stop >/dev/null || fail "trace stop failed"
  cp "$MEDIATORD_LOG" "$TMP/mediatord-$1.log"
  stop_mediatord || fail "mediatord did not stop cleanly"
}

# first20 N: mean |predicted - measured| of the first 20 groups of run N, in us.
first20() {
  jq -s '[.[0:20][] | (.predicted_ns - .measured_ns) | fabs] | add / length / 1000 | floor' \
    "$TMP/trace-$1.jsonl"
}

one_run 1
[ -s "$STATE" ] || fail "no learned state in $STATE after the first run"
cold=$(first20 1)

one_run 2
grep -q "learned state loaded from $STATE" "$TMP/mediatord-2.log" ||
  fail "the second run did not load $STATE"
warm=$(first20 2)
log "first 20 groups: mean |error| $cold us cold, $warm us with the saved state"
[ "$warm" -lt "$cold" ] || fail "the saved state did not improve the first predictions"

# A corrupt file is reported, ignored, and rewritten by the next worker.
printf 'GMPRED garbage' >"$STATE"
one_run 3
grep -q "is corrupt or unreadable" "$TMP/mediatord-3.log" ||
  fail "a corrupt state file was not reported"
head -c 6 "$STATE" | grep -q GMPRED && [ "$(stat -c %s "$STATE")" -gt 64 ] ||
  fail "the corrupt state file was not replaced"
log "ok"
