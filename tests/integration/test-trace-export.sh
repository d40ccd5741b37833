#!/bin/bash
# SPDX-License-Identifier: MIT
# `mediatorctl trace export --perfetto OUT TRACE` (mediator/tools/trace_export.h):
# a timeline that ui.perfetto.dev opens, checked against the trace it came
# from by check-perfetto.py (every group a slice at its start with its
# measured, predicted and bound times, model and commands; every wait for a
# grant a slice and a flow to its group; every frame a slice, MISSED ones
# named so, with release and deadline markers; nothing else):
#  1. a known trace, tests/data/trace/two-domains.jsonl (records of a
#     bench/faults run of two domains, and made ones: a piece, a young
#     group without a wait, a missed and an unfinished frame, a record of
#     an unknown type, a line that is not JSON and a cut last line);
#  2. a live trace of this run: the 60 Hz cluster client in the safety
#     domain and long-draws in the other, with the budget policy.
# Bad command lines are refused with exit status 2.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
CHECK=$TESTS_SRCDIR/integration/check-perfetto.py
command -v python3 >/dev/null || fail "python3 is missing (scripts/install-deps.sh)"

known=$TESTS_SRCDIR/data/trace/two-domains.jsonl
"$MEDIATORCTL" trace export --perfetto "$TMP/known.json" "$known" 2>"$TMP/known.err" ||
  fail "export of the known trace failed: $(cat "$TMP/known.err")"
grep -q ': 122 groups (121 waited for a grant), 62 frames (2 missed), 3 lines skipped$' \
  "$TMP/known.err" || fail "export summary: $(cat "$TMP/known.err")"
python3 "$CHECK" "$known" "$TMP/known.json" >&2 || fail "the known trace's timeline is wrong"

for args in "--perfetto" "$known" "--perfetto $TMP/x.json" "--perfetto $TMP/x.json $TMP/none.jsonl" \
  "--perfetto $TMP/x.json --bogus $known"; do
  # shellcheck disable=SC2086 # one argument per word
  "$MEDIATORCTL" trace export $args >/dev/null 2>"$TMP/usage.err" && rc=0 || rc=$?
  [ $rc = 2 ] || fail "trace export $args: exit status $rc, expected 2"
  [ -s "$TMP/usage.err" ] || fail "trace export $args: no message"
done

setup_rendering budget 1
traced_two_domain_run "$TMP/live.jsonl"
ctl trace stop >&2 || fail "trace stop failed"
"$MEDIATORCTL" trace export --perfetto "$TMP/live.json" "$TMP/live.jsonl" 2>"$TMP/live.err" ||
  fail "export of the live trace failed: $(cat "$TMP/live.err")"
python3 "$CHECK" "$TMP/live.jsonl" "$TMP/live.json" >&2 || fail "the live trace's timeline is wrong"
grep -q ', 0 lines skipped$' "$TMP/live.err" || fail "lines of the live trace skipped: $(cat "$TMP/live.err")"
for d in "$DOMAIN_A" "$DOMAIN_B"; do
  python3 -c 'import json,sys; ev=json.load(open(sys.argv[1]))["traceEvents"]; sys.exit(0 if any(e["ph"]=="M" and e["args"]["name"]=="domain "+sys.argv[2] for e in ev) else 1)' \
    "$TMP/live.json" "$d" || fail "the live timeline has no process for domain $d"
done
log "live: $(cat "$TMP/live.err")"
log "PASS"
