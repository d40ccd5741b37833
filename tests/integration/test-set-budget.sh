#!/bin/bash
# SPDX-License-Identifier: MIT
# set-budget --period-us changes every per-period figure of show-budgets
# from the boundary where the new period applies: a GL client
# (glmark2-es2) keeps the infotainment domain busy with a period of
# 100 ms; set-budget gives it 20 ms (budget 20 ms). From then on, in every
# sample of show-budgets, the domain's period, budget and deadline are the
# new ones, the last period was 20 ms long, the use this and last period
# fits a 20 ms period (and a group that began before it), the utilization
# is the last period's use over its length, and what is left is the budget
# less the debt and this period's use. The untouched cluster domain keeps
# its 16.667 ms periods. No invariant of mediatord breaks.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering

OLD_PERIOD_US=100000
NEW_PERIOD_US=20000
# A group is charged whole to the period its completion came in: one that
# began in the period before adds up to its own length. glmark2's groups
# on llvmpipe take a few ms; on a loaded 2-core host up to 3x. Under
# AddressSanitizer one took 62 ms (CI's ASan run, 2026-11-28: a period of
# 20 ms charged 62.4 ms, its debt 42.4 ms, as the rule says).
# Of 20 samples, at least BUSY_MIN show a period in which it used the GPU
# (under AddressSanitizer, groups of 60 ms complete in one 20 ms period of
# three: 7, then 3 of 20 beside another ASan run on a 2-core host).
GROUP_SLACK_US=20000
BUSY_MIN=10
if worker_sanitized; then
  GROUP_SLACK_US=80000
  BUSY_MIN=2
fi

start_xvfb
write_config
# infotainment: 100 ms periods, the whole period as its budget.
sed -i "/^\[domain $DOMAIN_B\]/,\$ {
  s/^period_us = .*/period_us = $OLD_PERIOD_US/
  s/^budget_us = .*/budget_us = $OLD_PERIOD_US/
}" "$CONFIG"
start_mediatord
[ "$(domain_field "$DOMAIN_B" period_us)" = $OLD_PERIOD_US ] ||
  fail "infotainment does not start with its configured period"

start_glmark b "$SOCK_B" $((10 + GLMARK_SLACK_S)) -b shading:duration=10
# Wait until the client renders (its shaders compiled, groups flowing).
deadline=$((SECONDS + 60))
while [ "$(domain_field "$DOMAIN_B" groups)" -lt 100 ]; do
  [ $SECONDS -lt $deadline ] || fail "glmark2 sent fewer than 100 groups in 60 s"
  sleep 0.2
done

reply=$(ctl set-budget "$DOMAIN_B" --period-us $NEW_PERIOD_US --budget-us $NEW_PERIOD_US \
  --json) || fail "set-budget failed: $reply"
log "set-budget: $(jq -c . <<<"$reply")"
jq -e --argjson p $NEW_PERIOD_US '.period_us == $p and .budget_us == $p and .deadline_us == $p' \
  <<<"$reply" >/dev/null || fail "set-budget did not answer the new period: $reply"
# The new period applies from the next boundary (at most 100 ms away);
# after one more, the last period is a new one.
sleep 0.5

busy=0
for i in $(seq 20); do
  json=$(budgets_json)
  d=$(jq --arg d "$DOMAIN_B" '.domains[] | select(.name == $d)' <<<"$json")
  jq -e --argjson p $NEW_PERIOD_US --argjson slack $GROUP_SLACK_US '
    .period_us == $p and .budget_us == $p and .deadline_us == $p and
    .last_period_us == $p and
    .used_last_period_us <= $p + $slack and .used_this_period_us <= $p + $slack and
    ((.utilization - .used_last_period_us / .last_period_us) | . < 0.0001 and . > -0.0001) and
    (([.budget_us - .debt_us - .used_this_period_us, 0] | max) - .remaining_us | . <= 2 and . >= -2)
    ' <<<"$d" >/dev/null ||
    fail "sample $i: infotainment's figures do not follow the new period: $d"
  jq -e '.used_last_period_us > 0' <<<"$d" >/dev/null && busy=$((busy + 1))
  jq -e --arg d "$DOMAIN_A" '.domains[] | select(.name == $d) |
    .period_us == 16667 and .last_period_us == 16667' <<<"$json" >/dev/null ||
    fail "sample $i: the cluster's period changed: $json"
  jq -e '.invariant_violations | type == "object" and length > 0 and all(.[]; . == 0)' \
    <<<"$json" >/dev/null || fail "sample $i: broken invariants: $json"
  sleep 0.1
done
log "last sample: $(jq -c "del(.context_list)" <<<"$d")"
[ $busy -ge $BUSY_MIN ] || fail "infotainment used the GPU in only $busy of 20 last periods"

wait_glmark b
gm_assert_mediatord_alive
! grep -q "invariant .* broken" "$MEDIATORD_LOG" ||
  fail "mediatord logged broken invariants: $(grep "invariant .* broken" "$MEDIATORD_LOG")"
gm_stop_mediatord && rc=0 || rc=$?
[ "$rc" -eq 0 ] || fail "mediatord exited with status $rc on SIGTERM, expected 0"
log "ok"
