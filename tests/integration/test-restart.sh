#!/bin/bash
# SPDX-License-Identifier: MIT
# mediatord killed (SIGKILL) and started again, with a client in each
# domain (doc/design.md, "When mediatord dies"): the cluster (safety) keeps
# drawing its 60 Hz frames through the outage, its worker dispatching
# without grants; the infotainment domain's workers (a vtest client and a
# VM over vhost-user, tests/tools/vhost-user-frontend) wait; the restarted
# mediatord takes the three workers over from the keeper (same clients, no
# reconnect), schedules them again with the budget set at run time before
# the kill, and serves new clients on the same sockets. A clean stop then
# takes the keeper and the workers along.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering
require_built "$CLUSTER_CLIENT" "$LONG_DRAWS"
start_xvfb
VHOST_B=$TMP/ivi.vhost
write_config budget 1
sed -i "s|^vtest_socket = $SOCK_B\$|&\nvhost_user_socket = $VHOST_B|" "$CONFIG"
start_mediatord
KEEPER_SOCK=$CONTROL.keeper
[ -S "$KEEPER_SOCK" ] || fail "mediatord started no keeper: no socket $KEEPER_SOCK"

gm_on_exit stop_keeper
[ "$(keeper_pids | wc -l)" -eq 1 ] || fail "expected one keeper process, found: $(keeper_pids)"

SECS=30
start_stamped_cluster "$SECS"
start_flood long 960x540 "$SECS"
LONG_PID=$FLOOD_PID
# The VM: frames of a clear and a scanout flush, each waiting for its fence.
timeout -k 5 $((SECS + 60)) "$VHOST_USER_FRONTEND" "$VHOST_B" bench3d "$SECS" 256 256 \
  >"$TMP/vm.out" 2>"$TMP/vm.log" &
VM_PID=$!
gm_track "$VM_PID"
wait_field "$DOMAIN_A" clients 1 30
wait_field "$DOMAIN_B" clients 2 30
ctl set-budget "$DOMAIN_B" --budget-us 9000 >&2 || fail "set-budget failed"
mapfile -t workers < <(pgrep -P "$MEDIATORD_PID")
[ ${#workers[@]} -eq 3 ] || fail "expected 3 workers, found ${#workers[@]}: ${workers[*]}"
sleep 6 # both drawing, past start-up

# The kill. The outage lasts until the new mediatord serves its control socket.
t_kill=$EPOCHREALTIME
kill -KILL "$MEDIATORD_PID"
wait "$MEDIATORD_PID" 2>/dev/null || :
log "mediatord $MEDIATORD_PID killed; workers ${workers[*]}"
MEDIATORD_PID=
sleep 3
for w in "${workers[@]}"; do
  gm_alive "$w" || fail "worker $w did not outlive mediatord"
done
[ -S "$KEEPER_SOCK" ] || fail "the keeper's socket is gone with mediatord"
MEDIATORD_LOG=$TMP/mediatord-2.log
start_mediatord
t_back=$EPOCHREALTIME
wait_field "$DOMAIN_A" clients 1 10
wait_field "$DOMAIN_B" clients 2 10
grep -q "took over 3 workers" "$MEDIATORD_LOG" ||
  fail "the new mediatord did not take the 3 workers over: $(grep -i 'keeper\|took' "$MEDIATORD_LOG")"
budget_b=$(domain_field "$DOMAIN_B" budget_us)
[ "$budget_b" -eq 9000 ] || fail "$DOMAIN_B's budget set before the kill is $budget_b us, not 9000"

# Both workers are scheduled by the new mediatord again: their groups reach it.
sleep 4
groups_a=$(domain_field "$DOMAIN_A" groups)
groups_b=$(domain_field "$DOMAIN_B" groups)
log "after the restart: $DOMAIN_A $groups_a groups, $DOMAIN_B $groups_b groups"
[ "$groups_a" -gt 100 ] || fail "the cluster's worker sent the new mediatord $groups_a groups in 4 s"
[ "$groups_b" -gt 10 ] || fail "the infotainment worker sent the new mediatord $groups_b groups in 4 s"
# The VM is still connected: a second one is refused (one VM per socket).
grep -q "VM [0-9]* taken over" "$MEDIATORD_LOG" || fail "the VM's worker was not taken over"
# New clients on the same sockets.
for sock in "$SOCK_A" "$SOCK_B"; do
  timeout -k 5 30 "$VTEST_POKE" "$sock" handshake >&2 ||
    fail "no new client served on $sock after the restart"
done

wait "$CLUSTER_PID" || fail "cluster-client failed: $(tail -3 "$TMP/cluster.err")"
wait "$LONG_PID" || fail "long-draws failed: $(tail -3 "$TMP/long.log")"
wait "$VM_PID" || fail "the VM failed: $(tail -3 "$TMP/vm.log")"
log "VM: $(tail -1 "$TMP/vm.out")"
# Frames drawn while mediatord was away: from the progress lines around the
# outage, and, for the host's own noise, the same span at the end of the
# run (same clients, mediatord up).
read -r frames misses secs < <(cluster_window "$t_kill" "$t_back")
t_end=$(awk '/ GM-CLUSTER progress / { t = $1 } END { print t }' "$TMP/cluster.log")
read -r _ base_misses base_secs < <(cluster_window "$(awk -v t="$t_end" -v s="$secs" 'BEGIN { printf "%.6f", t - s - 0.5 }')" "$t_end")
log "cluster: $frames frames, $misses misses in the $secs s around the outage" \
  "($(awk -v a="$t_kill" -v b="$t_back" 'BEGIN { printf "%.2f", b - a }') s without mediatord);" \
  "$base_misses misses in the last $base_secs s; whole run: $(jq -c . "$TMP/cluster.json")"
log "infotainment: $(jq -c . "$TMP/long.json")"
[ "$(awk -v f="$frames" -v s="$secs" 'BEGIN { print (f >= 0.9 * 60 * s) }')" = 1 ] ||
  fail "the cluster drew $frames frames in the $secs s around the outage (60 Hz)"
# Misses around the outage: at most 12 (5 % of 4 s of frames) above the host's noise.
[ "$misses" -le $((base_misses + 12)) ] ||
  fail "the cluster missed $misses frames around the outage ($base_misses in as long at the end)"

# A clean stop takes the keeper and the workers along.
gm_stop_mediatord || fail "mediatord exited with status $? on SIGTERM"
assert_stopped "after mediatord stopped" "${workers[@]}"
[ ! -e "$KEEPER_SOCK" ] || fail "the keeper's socket is left after mediatord stopped"
log "ok"
