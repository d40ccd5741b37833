#!/bin/bash
# SPDX-License-Identifier: MIT
# Workers run without rights (doc/design.md, "Workers' rights"). mediatord
# runs as root with a 60 Hz cluster client in the safety domain; from
# /proc, its worker: runs as the worker user (real, effective, saved and
# file system uid and gid; its groups only), has no capabilities,
# no-new-privs, the system-call filter on (seccomp mode 2), a data limit of
# the domain's worker_memory_mb (plus what it had mapped at start), and no
# descriptor of mediatord's listening sockets. With
# MEDIATOR_WORKER_TRY_FORBIDDEN naming the infotainment domain, that
# domain's worker makes a forbidden call once its renderer is up: it dies
# of SIGSYS, mediatord logs the call's name, and the cluster client, in the
# same mediatord, renders every frame to the end; mediatord still serves.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering
[ "$(id -u)" = 0 ] || skip "needs root, to start workers as the worker user"
WORKER_USER=gpu-mediator
getent passwd "$WORKER_USER" >/dev/null ||
  fail "no user $WORKER_USER: scripts/install-deps.sh creates it (scripts/add-worker-user.sh)"
uid=$(id -u "$WORKER_USER")
gid=$(id -g "$WORKER_USER")
MEMORY_MB=1024

gm_write_config "$CONFIG" \
  "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" policy=budget \
  renderer=egl-surfaceless \
  "[domain $DOMAIN_A]" class=safety period_us=16667 budget_us=4000 vtest_socket="$SOCK_A" \
  worker_memory_mb=$MEMORY_MB \
  "[domain $DOMAIN_B]" class=normal period_us=16667 budget_us=12000 vtest_socket="$SOCK_B"
# (It kills a worker by its filter on purpose: lib.sh's check is off.)
EXPECT_FILTER_KILL=1
MEDIATOR_WORKER_TRY_FORBIDDEN=$DOMAIN_B start_mediatord

gm_in_domain --timeout 60 "$SOCK_A" "$CLUSTER_CLIENT" --frames 360 \
  --json /dev/fd/3 3>"$TMP/cluster.json" >"$TMP/cluster.log" 2>&1 &
CLUSTER_PID=$!
gm_track "$CLUSTER_PID"
wait_field "$DOMAIN_A" clients 1 30
mapfile -t workers < <(pgrep -P "$MEDIATORD_PID")
[ ${#workers[@]} -eq 1 ] || fail "expected one worker, found ${#workers[@]}: ${workers[*]}"
w=${workers[0]}
# Its renderer is up (the filter goes on then) once the cluster renders.
wait_field "$DOMAIN_A" contexts 1 30

# status_field NAME: the values of /proc/$w/status's line NAME, tab-separated.
status_field() {
  sed -n "s/^$1:[[:space:]]*//p" "/proc/$w/status"
}
[ "$(status_field Uid)" = "$uid	$uid	$uid	$uid" ] || fail "worker uids: $(status_field Uid)"
[ "$(status_field Gid)" = "$gid	$gid	$gid	$gid" ] || fail "worker gids: $(status_field Gid)"
want_groups=$(id -G "$WORKER_USER" | tr ' ' '\n' | sort -n | tr '\n' ' ')
got_groups=$(status_field Groups | tr ' ' '\n' | sed '/^$/d' | sort -n | tr '\n' ' ')
[ "$got_groups" = "$want_groups" ] || fail "worker groups: '$got_groups', expected '$want_groups'"
# (CapBnd, the bounding set, is inherited: without privileges it gives nothing.)
for cap in CapInh CapPrm CapEff CapAmb; do
  [ "$(status_field $cap)" = 0000000000000000 ] || fail "worker $cap: $(status_field $cap)"
done
[ "$(status_field NoNewPrivs)" = 1 ] || fail "worker no-new-privs: $(status_field NoNewPrivs)"
[ "$(status_field Seccomp)" = 2 ] || fail "worker seccomp mode: $(status_field Seccomp)"
# The limit is what it had mapped at start (VmData then, no more than now)
# plus the domain's worker_memory_mb.
limit=$(awk '/^Max data size/ {print $4}' "/proc/$w/limits")
vmdata=$(($(status_field VmData | awk '{print $1}') * 1024))
[ "$limit" != unlimited ] && [ "$limit" -ge $((MEMORY_MB << 20)) ] &&
  [ "$limit" -le $((vmdata + (MEMORY_MB << 20))) ] ||
  fail "worker data limit: $limit bytes, expected $MEMORY_MB MiB plus what it had at start" \
    "(VmData now $vmdata bytes)"
log "worker $w: uid $uid gid $gid groups $got_groups, no capabilities, no-new-privs," \
  "seccomp 2, data limit $((limit >> 20)) MiB (VmData $((vmdata >> 20)) MiB)"

# No descriptor of mediatord's listening sockets: their inodes from
# /proc/net/unix, where flag __SO_ACCEPTCON (00010000) marks a listening
# socket (an accepted one shows the same path).
mapfile -t listen_inodes < <(awk -v a="$SOCK_A" -v b="$SOCK_B" -v c="$CONTROL" \
  '$4 == "00010000" && ($8 == a || $8 == b || $8 == c) {print $7}' /proc/net/unix)
[ ${#listen_inodes[@]} -eq 3 ] || fail "found ${#listen_inodes[@]} of mediatord's 3 listening sockets"
for fd in /proc/"$w"/fd/*; do
  target=$(readlink "$fd" || true)
  for ino in "${listen_inodes[@]}"; do
    [ "$target" != "socket:[$ino]" ] || fail "worker holds listening socket $ino as $fd"
  done
done
log "worker $w holds $(ls /proc/"$w"/fd | wc -l) descriptors, none of mediatord's listening sockets"

# The infotainment domain's worker makes a forbidden call.
gm_in_domain --timeout 30 "$SOCK_B" "$CLUSTER_CLIENT" --frames 60 >"$TMP/victim.log" 2>&1 &&
  fail "the infotainment client rendered: its worker was not killed" || :
grep -q "forbidden system call socket (" "$MEDIATORD_LOG" ||
  fail "mediatord's log does not name the forbidden call"
grep -q "domain $DOMAIN_B: client [0-9]*: worker [0-9]* killed by signal $(kill -l SYS)" \
  "$MEDIATORD_LOG" || fail "mediatord did not log the worker's death by SIGSYS"
log "infotainment worker: $(grep -m1 'forbidden system call' "$MEDIATORD_LOG")"

wait "$CLUSTER_PID" || fail "cluster-client failed: $(tail -3 "$TMP/cluster.log")"
frames=$(jq .frames "$TMP/cluster.json")
[ "$frames" = 360 ] || fail "the cluster rendered $frames of 360 frames"
gm_assert_mediatord_alive
timeout -k 5 30 "$VTEST_POKE" "$SOCK_A" handshake >&2 || fail "mediatord no longer serves the cluster"
log "the cluster rendered all $frames frames; mediatord serves on"
log "PASS"
