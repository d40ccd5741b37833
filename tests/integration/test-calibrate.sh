#!/bin/bash
# SPDX-License-Identifier: MIT
# mediatorctl calibrate: the microbenchmarks of Schnitzer et al., Concepts
# for Execution Time Prediction of 3D GPU Rendering, run as a client of a
# domain in a context of their own; the worker seeds the domain's model
# with the per-group, per-pixel, per-vertex and per-fragment costs it
# measured and saves it; the next context of the domain loads it. Bad
# arguments are refused with the documented exit statuses.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
setup_rendering fifo 1
STATE=$TMP/state/$DOMAIN_A/$DOMAIN_A.sgd.state

rc=0
ctl calibrate >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "calibrate without DOMAIN: exit $rc, expected 2"
rc=0
ctl calibrate "$DOMAIN_A" --rounds 0 >/dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || fail "calibrate --rounds 0: exit $rc, expected 2"
rc=0
out=$(ctl calibrate no-such-domain 2>&1) || rc=$?
[ $rc -eq 1 ] || fail "calibrate of an unknown domain: exit $rc, expected 1"
grep -q "no such domain" <<<"$out" || fail "unclear message for an unknown domain: $out"

out=$(timeout -k 5 300 "$MEDIATORCTL" --socket "$CONTROL" calibrate "$DOMAIN_A" --rounds 8 2>&1) ||
  fail "mediatorctl calibrate failed: $out"
printf '%s\n' "$out" >&2
for kind in flush clears culled triangles; do
  grep -Eq "^$kind +8 groups" <<<"$out" || fail "no $kind microbenchmark in: $out"
done
grep -q "seeded model of domain $DOMAIN_A" <<<"$out" || fail "no seeded model printed"
grep -q "calibration applied to model sgd" "$MEDIATORD_LOG" ||
  fail "the worker did not apply the calibration: $(grep calibrat "$MEDIATORD_LOG")"
[ -s "$STATE" ] || fail "no learned state in $STATE after calibrating"

# The seeded coefficients: positive costs per group, vertex and fragment.
model=$(ctl model --json) || fail "mediatorctl model failed"
jq -e --arg d "$DOMAIN_A" '.domains[] | select(.name == $d) | .contexts[] |
    select(.name == "mediator-calibrate") | .coefficients_ns |
    .group > 0 and .vertices > 0 and .fragments > 0 and .clear_c > 0' <<<"$model" >/dev/null ||
  fail "the calibration context's model lacks seeded coefficients: $model"

# The domain's next context starts from the calibrated state.
run_glmark a "$SOCK_A" $((2 + GLMARK_SLACK_S)) -b build:duration=1
grep -q "learned state loaded from $STATE" "$MEDIATORD_LOG" ||
  fail "the next context did not load the calibrated state"
gm_assert_mediatord_alive
log "ok"
