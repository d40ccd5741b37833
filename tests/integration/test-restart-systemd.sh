#!/bin/bash
# SPDX-License-Identifier: MIT
# The unit's restart, reload and stop (issue 32, item 1) as systemd runs
# them for data/gpu-mediator.service: SIGTERM to mediatord only
# (KillMode=process), its file descriptor store kept across a restart and
# closed at a stop, SIGHUP for a reload. No systemd runs as PID 1 on these
# machines: unit-manager.py does that part of its work (its header says
# which, from systemd's manuals).
#
# - restart: a client in each domain keeps rendering through it (no
#   reconnect: the new mediatord takes both workers over), and the cluster
#   misses at most 2 frames around it by its own count;
# - reload after an edit of the normal domain's budget: show-budgets shows
#   the new budget, no client dropped; an edit that needs a restart is
#   named in the log; an invalid file changes nothing;
# - stop: a client's worker ends at once, not after restart_wait_s, and
#   the keeper with it;
# - without the store (mediatord started by hand): SIGTERM stops the
#   clients, as before.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering
require_built "$CLUSTER_CLIENT" "$LONG_DRAWS"
[ "$GM_HAVE_SYSTEMD" = 1 ] || skip "mediatord built without the systemd feature (libsystemd-dev): no file descriptor store"
start_xvfb
write_config budget 1
gm_on_exit stop_keeper

NOTIFY=$TMP/notify.sock
UNIT_CTL=$TMP/unit.ctl
UNIT_LOG=$TMP/unit.log
: >"$MEDIATORD_LOG"
python3 "$TESTS_SRCDIR/integration/unit-manager.py" --notify "$NOTIFY" --control "$UNIT_CTL" \
  --log "$UNIT_LOG" -- "$MEDIATORD" --config "$CONFIG" >>"$MEDIATORD_LOG" 2>&1 &
MANAGER_PID=$!
gm_track "$MANAGER_PID" # stopped at exit, if still running

# unit COMMAND: tells the manager; waits until it logged COMMAND's event N (a count of lines matching RE).
unit() {
  echo "$1" >"$UNIT_CTL"
}
# wait_unit RE COUNT SECS: until UNIT_LOG has COUNT lines matching RE.
wait_unit() {
  local deadline=$((SECONDS + $3)) n
  # (no UNIT_LOG yet, before the manager's first line: 0)
  until n=$(grep -cE -- "$1" "$UNIT_LOG" 2>/dev/null) || n=${n:-0}; [ "$n" -ge "$2" ]; do
    gm_alive "$MANAGER_PID" || fail "unit-manager exited: $(cat "$UNIT_LOG")"
    [ $SECONDS -lt $deadline ] || fail "no '$1' (x$2) from the unit within $3 s: $(cat "$UNIT_LOG")"
    sleep 0.1
  done
}
# main_pid: the unit's main process now.
main_pid() {
  awk '$1 == "start" { p = $2 } END { print p }' "$UNIT_LOG"
}
wait_unit '^ready ' 1 30
MEDIATORD_PID=$(main_pid)
wait_unit '^stored keeper-lifeline$' 1 10
log "mediatord $MEDIATORD_PID ready under the unit manager; $(grep -c '^stored' "$UNIT_LOG") descriptor stored"

SECS=24
start_stamped_cluster "$SECS"
start_flood long 960x540 "$SECS"
LONG_PID=$FLOOD_PID
wait_field "$DOMAIN_A" clients 1 30
wait_field "$DOMAIN_B" clients 1 30
mapfile -t workers < <(pgrep -P "$MEDIATORD_PID")
[ ${#workers[@]} -eq 2 ] || fail "expected 2 workers, found ${#workers[@]}: ${workers[*]}"
sleep 5

# --- restart ----------------------------------------------------------------
t_restart=$EPOCHREALTIME
unit restart
wait_unit '^ready ' 2 30
t_back=$EPOCHREALTIME
old_pid=$MEDIATORD_PID
MEDIATORD_PID=$(main_pid)
[ "$MEDIATORD_PID" != "$old_pid" ] || fail "the restart did not start a new mediatord"
grep -E "^exit $old_pid 0$" "$UNIT_LOG" >/dev/null ||
  fail "mediatord $old_pid did not exit 0 on SIGTERM: $(grep "^exit" "$UNIT_LOG")"
grep -F "leaving the clients to the keeper" "$MEDIATORD_LOG" >/dev/null ||
  fail "SIGTERM under the unit did not leave the clients to the keeper"
grep -E "^start $MEDIATORD_PID fds=1$" "$UNIT_LOG" >/dev/null ||
  fail "the new mediatord was not given the stored lifeline: $(cat "$UNIT_LOG")"
wait_field "$DOMAIN_A" clients 1 10
wait_field "$DOMAIN_B" clients 1 10
grep -F "took over 2 workers" "$MEDIATORD_LOG" >/dev/null ||
  fail "the new mediatord did not take the 2 workers over: $(grep -i 'keeper\|took' "$MEDIATORD_LOG")"
for w in "${workers[@]}"; do
  gm_alive "$w" || fail "worker $w did not outlive the restart"
done
# The old mediatord sent the workers nothing on its way out (a grant sent
# after the keeper told them it was gone made one stop: 2026-11-28).
! grep -E "^mediator-worker: error: " "$MEDIATORD_LOG" >"$TMP/worker-errors.txt" ||
  fail "a worker logged an error through the restart: $(head -3 "$TMP/worker-errors.txt")"
# One lifeline in the store, not one more per restart.
[ "$(grep -c '^stored' "$UNIT_LOG")" -eq 1 ] || fail "the restart stored another lifeline: $(cat "$UNIT_LOG")"
log "restart: mediatord $old_pid -> $MEDIATORD_PID in" \
  "$(awk -v a="$t_restart" -v b="$t_back" 'BEGIN { printf "%.2f", b - a }') s; both workers taken over"

# --- reload -----------------------------------------------------------------
sleep 2
before_b=$(domain_field "$DOMAIN_B" budget_us)
sed -i "/^\[domain $DOMAIN_B\]/,/^\[/ s/^budget_us = .*/budget_us = 7000/" "$CONFIG"
sed -i "/^\[domain $DOMAIN_B\]/,/^\[/ s/^worker_nice = .*//" "$CONFIG"
printf 'worker_nice = 5\n' >>"$CONFIG" # the last section is domain B's
unit reload
wait_field "$DOMAIN_B" budget_us 7000 10
grep -E "reload of .*: .*domain $DOMAIN_B: budget 7000 us" "$MEDIATORD_LOG" >/dev/null ||
  fail "the reload did not say what it applied: $(grep 'reload' "$MEDIATORD_LOG")"
grep -E "reload of .*applied at the next restart.*\[domain $DOMAIN_B\] worker_nice" "$MEDIATORD_LOG" >/dev/null ||
  fail "the reload did not name worker_nice as waiting for a restart: $(grep 'reload' "$MEDIATORD_LOG")"
[ "$(domain_field "$DOMAIN_A" clients)" = 1 ] && [ "$(domain_field "$DOMAIN_B" clients)" = 1 ] ||
  fail "a client was dropped by the reload"
# An invalid file: an error in the log, nothing changed, mediatord serving.
cp "$CONFIG" "$TMP/good.conf"
printf 'budget_us = lots\n' >>"$CONFIG"
unit reload
for _ in $(seq 50); do
  grep -E "error: reload of .*budget_us" "$MEDIATORD_LOG" >/dev/null && break
  sleep 0.1
done
grep -E "error: reload of .*budget_us" "$MEDIATORD_LOG" >/dev/null ||
  fail "an invalid config was not refused by the reload: $(grep 'reload' "$MEDIATORD_LOG")"
[ "$(domain_field "$DOMAIN_B" budget_us)" = 7000 ] || fail "an invalid config changed the budget"
cp "$TMP/good.conf" "$CONFIG"
gm_assert_mediatord_alive
log "reload: $DOMAIN_B's budget $before_b -> 7000 us, both clients kept; an invalid file refused"

wait "$CLUSTER_PID" || fail "cluster-client failed: $(tail -3 "$TMP/cluster.err")"
wait "$LONG_PID" || fail "long-draws failed: $(tail -3 "$TMP/long.log")"
# The cluster's misses around the restart, by its own progress lines.
read -r frames misses secs < <(cluster_window "$t_restart" "$t_back")
log "cluster: $frames frames, $misses misses in the $secs s around the restart;" \
  "whole run: $(jq -c . "$TMP/cluster.json"); infotainment: $(jq -c . "$TMP/long.json")"
[ "$(awk -v f="$frames" -v s="$secs" 'BEGIN { print (f >= 0.9 * 60 * s) }')" = 1 ] ||
  fail "the cluster drew $frames frames in the $secs s around the restart (60 Hz)"
if judged_here "the cluster's misses around the restart"; then
  [ "$misses" -le 2 ] || fail "the cluster missed $misses frames around the restart"
fi

# --- stop -------------------------------------------------------------------
# late_client NAME: a client that would run 60 s (FLOOD_PID), and its worker (LATE_WORKER).
late_client() {
  start_flood "$1" 320x240 60
  wait_field "$DOMAIN_B" clients 1 30
  LATE_WORKER=$(pgrep -P "$MEDIATORD_PID") || fail "no worker for the client $1"
}
# Its worker ends with the unit's stop.
late_client late
LATE_PID=$FLOOD_PID
late=("$LATE_WORKER")
t_stop=$SECONDS
unit stop
wait_unit '^released ' 1 30
MEDIATORD_PID=
assert_stopped "after the unit stopped" "${late[@]}"
grep -F "let go of the lifeline" "$MEDIATORD_LOG" >/dev/null ||
  fail "the keeper did not say why it stopped the workers"
wait "$LATE_PID" && fail "the late client went on after the unit stopped" || :
log "stop: the late client's worker and the keeper ended within $((SECONDS - t_stop)) s"

# --- by hand, no store: SIGTERM is a clean stop ----------------------------
MEDIATORD_LOG=$TMP/mediatord-by-hand.log
start_mediatord
late_client hand
HAND_PID=$FLOOD_PID
hand=("$LATE_WORKER")
gm_stop_mediatord || fail "mediatord exited with status $? on SIGTERM"
assert_stopped "after SIGTERM without a service manager" "${hand[@]}"
wait "$HAND_PID" && fail "the client went on after mediatord stopped" || :
log "ok"
