#!/bin/bash
# SPDX-License-Identifier: MIT
# Two domains, one unmodified GL ES client (glmark2-es2) in each at the same
# time: both finish and score; each worker's threads run at its domain's
# worker_nice; show-budgets shows both domains with measured
# GPU time and command groups; status and the table answer; mediatorctl's
# exit statuses for usage errors and an unreachable daemon; a second
# mediatord on the same sockets refuses to start and disturbs nothing;
# mediatord exits 0 on SIGTERM and removes its sockets.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
setup_rendering budget 1

scenes=(-b build:duration=2 -b shading:duration=2)
start_glmark a "$SOCK_A" $((4 + GLMARK_SLACK_S)) "${scenes[@]}"
start_glmark b "$SOCK_B" $((4 + GLMARK_SLACK_S)) "${scenes[@]}"

# Each domain's worker runs at the domain's default worker_nice (0 for
# both classes), and no thread of it (llvmpipe's included) at a higher
# priority: Mesa lowers some of its own (its shader cache's) to 19 and to
# idle priority. Once its groups complete, its main thread is in the
# normal class (TS), the normal domain's too: idle priority (IDL) is for
# a normal worker's start-up and for revoked groups
# (test-deceiving-client).
# revoked DOMAIN: mediatord revoked a grant of DOMAIN's and put its worker
# at idle priority until the group completes (an AddressSanitizer worker's
# groups often run past the 2 ms a gap may hold: 2026-11-28, a CI run).
revoked() {
  grep -E "domain $1: client [0-9]+ context [0-9]+: .*grant revoked, .*worker at idle priority" \
    "$MEDIATORD_LOG" >/dev/null
}
check_worker_nice() {
  local domain=$1 want=$2 pid nices cls ni lowest deadline=$((SECONDS + 30))
  # Class and nice in one look: the main thread drops to idle priority
  # (IDL, nice "-") for a large resource's creation now and then (host
  # work), and while a revoked group completes; at its domain's priority
  # it is TS at the domain's nice.
  until pid=$(pgrep -P "$MEDIATORD_PID" -f -- "--domain $domain( |$)" | head -n 1) &&
    [ -n "$pid" ] && [ "$(ps -L -o nlwp= -p "$pid" | head -n 1)" -gt 1 ] &&
    [ "$(domain_field "$domain" groups)" -gt 0 ] &&
    read -r cls ni < <(ps -o cls=,nice= -p "$pid") &&
    { [ "$cls" = TS ] || { [ "$cls" = IDL ] && revoked "$domain"; }; }; do
    [ $SECONDS -lt $deadline ] ||
      fail "no worker of $domain with its renderer's threads and its main thread in class TS" \
        "past its first group (class: $(ps -o cls= -p "${pid:-0}"))"
    sleep 0.05
  done
  nices=$(ps -L -o nice= -p "$pid" | tr -d ' ' | sort -n | uniq -c | awk '{printf "%s%s x%s", (NR > 1 ? ", " : ""), $2, $1}')
  [ "$cls" = IDL ] || [ "$ni" = "$want" ] ||
    fail "the worker of $domain (pid $pid) runs at nice $ni in class TS, expected $want"
  # "-": a thread at idle priority (SCHED_IDLE), below any nice value (all
  # of them while a revoked group completes: a young one is revoked at the
  # cluster's next release now and then).
  lowest=$(ps -L -o nice= -p "$pid" | tr -d ' ' | grep -vx -- - | sort -n | head -n 1) || :
  [ -z "$lowest" ] || [ "$lowest" -ge "$want" ] ||
    fail "a thread of the worker of $domain (pid $pid) runs above nice $want: $nices"
  log "worker of $domain: threads at nice $nices, classes" \
    "$(ps -L -o cls= -p "$pid" | tr -d ' ' | sort | uniq -c | awk '{printf "%s x%s ", $2, $1}')"
}
check_worker_nice "$DOMAIN_A" 0
check_worker_nice "$DOMAIN_B" 0

# A normal domain's worker that has completed no group yet (an idle
# connection) runs at idle priority: its start-up takes no CPU a safety
# frame wants.
accepted_b() {
  grep -oE "domain $DOMAIN_B: client [0-9]+ accepted, worker [0-9]+" "$MEDIATORD_LOG" || true
}
before=$(accepted_b | wc -l)
timeout -k 5 60 "$VTEST_POKE" "$SOCK_B" hold-idle 1 >"$TMP/idle.out" 2>&1 &
IDLE_PID=$!
gm_track "$IDLE_PID"
deadline=$((SECONDS + 30))
until idle_worker=$(accepted_b | sed -n "$((before + 1))p" | awk '{print $NF}') &&
  [ -n "$idle_worker" ] && [ "$(ps -L -o nlwp= -p "$idle_worker" | head -n 1)" -ge 1 ]; do
  [ $SECONDS -lt $deadline ] || fail "no worker for the idle connection"
  sleep 0.2
done
classes=$(ps -L -o cls= -p "$idle_worker" | tr -d ' ' | sort -u | tr '\n' ' ')
[ "$classes" = "IDL " ] || fail "the idle connection's worker $idle_worker runs in classes: $classes"
log "idle connection's worker $idle_worker: class $classes"
gm_stop 5 "$IDLE_PID"
wait "$IDLE_PID" 2>/dev/null || :

wait_glmark a
wait_glmark b
gm_assert_mediatord_alive

json=$(budgets_json)
log "show-budgets --json: $json"
for d in "$DOMAIN_A" "$DOMAIN_B"; do
  jq -e --arg d "$d" '[.domains[] | select(.name == $d)] | length == 1' <<<"$json" >/dev/null ||
    fail "show-budgets does not list domain '$d' exactly once"
  groups=$(jq -r --arg d "$d" '.domains[] | select(.name == $d) | .groups' <<<"$json")
  used=$(jq -r --arg d "$d" '.domains[] | select(.name == $d) | .used_us' <<<"$json")
  [ "$groups" -gt 0 ] 2>/dev/null || fail "domain $d: groups is '$groups', expected > 0"
  jq -e --arg d "$d" '.domains[] | select(.name == $d) | .used_us > 0' <<<"$json" >/dev/null ||
    fail "domain $d: used_us is '$used', expected > 0"
  log "domain $d: groups $groups, used_us $used"
done
jq -e --arg d "$DOMAIN_A" --argjson b "$(safety_budget_us)" '.domains[] | select(.name == $d)
       | .class == "safety" and .period_us == 16667 and .budget_us == $b' <<<"$json" >/dev/null ||
  fail "domain cluster does not show its configured class, period and budget"

# Both clients are gone, so no domain has clients left.
wait_field "$DOMAIN_A" clients 0 10
wait_field "$DOMAIN_B" clients 0 10

table=$(ctl show-budgets) || fail "mediatorctl show-budgets failed"
printf '%s\n' "$table" >&2
{ grep -q -F "$DOMAIN_A" <<<"$table" && grep -q -F "$DOMAIN_B" <<<"$table"; } ||
  fail "show-budgets table does not list both domains"
ctl status >&2 || fail "mediatorctl status failed"

# mediatorctl's exit statuses: 2 usage, 3 daemon unreachable.
timeout 20 "$MEDIATORCTL" --socket "$CONTROL" no-such-command >/dev/null 2>&1 && rc=0 || rc=$?
[ "$rc" -eq 2 ] || fail "mediatorctl no-such-command: status $rc, expected 2"
timeout 20 "$MEDIATORCTL" --socket "$TMP/absent.sock" status >/dev/null 2>&1 && rc=0 || rc=$?
[ "$rc" -eq 3 ] || fail "mediatorctl on a missing socket: status $rc, expected 3"

# A second mediatord on the same config must refuse the live sockets
# (exit 3), naming the running one, and leave it untouched: refused before
# it touches the keeper or a domain socket (a probe there would start a
# worker).
accepted=$(grep -c " accepted, worker " "$MEDIATORD_LOG" || :)
timeout 20 "$MEDIATORD" --config "$CONFIG" >"$TMP/second.log" 2>&1 && rc=0 || rc=$?
[ "$rc" -eq 3 ] || fail "a second mediatord on the same sockets exited $rc, expected 3"
grep -F "mediatord $MEDIATORD_PID serves it" "$TMP/second.log" >/dev/null ||
  fail "the second mediatord did not say why: $(cat "$TMP/second.log")"
[ "$(grep -c " accepted, worker " "$MEDIATORD_LOG" || :)" = "$accepted" ] ||
  fail "the second mediatord's start made the running one start a worker"
for s in "$SOCK_A" "$SOCK_B" "$CONTROL"; do
  [ -S "$s" ] || fail "the second mediatord removed $s"
done
timeout -k 5 30 "$VTEST_POKE" "$SOCK_A" handshake >&2 ||
  fail "the first mediatord stopped serving after a second one tried to start"
ctl status >/dev/null || fail "the first mediatord's control socket stopped answering"

gm_stop_mediatord && rc=0 || rc=$?
[ "$rc" -eq 0 ] || fail "mediatord exited with status $rc on SIGTERM, expected 0"
for s in "$SOCK_A" "$SOCK_B" "$CONTROL"; do
  [ ! -e "$s" ] || fail "mediatord left $s behind"
done
log "ok"
