#!/bin/bash
# SPDX-License-Identifier: MIT
# A restarted mediatord takes over no process but the workers that still
# run (issue 30 item 5). Attacker's code in the infotainment domain's
# worker (tests/tools/worker-attack.c, attack "export") sends its end of
# the record channel to its client and exits when mediatord dies, so that
# the channel stays open in the client. mediatord is killed (SIGKILL); once
# the worker has ended and is reaped, a root process of this test takes
# its pid (/proc/sys/kernel/ns_last_pid). Then mediatord starts again and
# the client, pretending to be the worker, answers WIRE_RESUME and sends a
# malformed record. Asserts:
#  - the keeper noticed the worker's end (its pidfd), though its channel
#    was open: "worker PID of domain infotainment ended while mediatord was
#    away", and closed its end of the channel (the client's records go
#    nowhere);
#  - the restarted mediatord takes no client over, and the process with
#    the worker's pid lives on, not signalled;
#  - mediatord then serves new clients, and a clean stop takes the keeper
#    along;
#  - no file outside the test's directory that the worker user could write
#    changed.
# The test runs as a child subreaper (as systemd is for an installed
# mediatord): the worker that outlived mediatord is its child then, and is
# reaped when it ends, so that its pid is free again.
set -euo pipefail
if [ -z "${GM_TEST_SUBREAPER:-}" ]; then
  [ -x /usr/bin/python3 ] || { echo "SKIP: no /usr/bin/python3 (python3)" >&2; exit 77; }
  # PR_SET_CHILD_SUBREAPER (36) is kept across execve.
  GM_TEST_SUBREAPER=1 exec /usr/bin/python3 -c '
import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:
    sys.exit("PR_SET_CHILD_SUBREAPER: " + os.strerror(ctypes.get_errno()))
os.execv("/bin/bash", ["bash"] + sys.argv[1:])' "$0" "$@"
fi
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_cmd pgrep procps
[ "$(id -u)" = 0 ] || skip "needs root, to give a process a pid of its choice (ns_last_pid)"
# Written with the value it has (harmless: pids in use are skipped anyway).
last_pid=$(cat /proc/sys/kernel/ns_last_pid)
{ echo "$last_pid" >/proc/sys/kernel/ns_last_pid; } 2>/dev/null ||
  skip "cannot write /proc/sys/kernel/ns_last_pid (needs CAP_CHECKPOINT_RESTORE or CAP_SYS_ADMIN)"
[ -e "${WORKER_ATTACK:-}" ] || fail "not built: the worker-attack module (WORKER_ATTACK)"

# The client: asks for its renderer's capabilities (VCMD_GET_CAPS2: the
# worker starts its renderer, then its filter is on and the attacker's code
# acts), takes the channel its worker sends, says so ("channel"), and on
# SIGUSR1 sends on it what a worker answers a take-over (WIRE_RESUME), then
# a record of no known type; prints what became of each, then "done", and
# holds on.
cat >"$TMP/thief.py" <<'EOF'
import signal
import socket
import struct
import sys
import time

VCMD_CREATE_RENDERER = 8  # vtest_parser.h
VCMD_GET_CAPS2 = 9
WIRE_RESUME = 10  # common/wire.h

signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGUSR1])
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(30)
s.connect(sys.argv[1])
name = b"thief\0"
s.sendall(struct.pack("<II", len(name), VCMD_CREATE_RENDERER) + name +
          struct.pack("<II", 0, VCMD_GET_CAPS2))
fds = []
while not fds:  # the capabilities come too: dropped
    data, fds, _, _ = socket.recv_fds(s, 65536, 1)
    if not data:
        sys.exit("the worker closed the connection; no channel came")
channel = socket.socket(fileno=fds[0])
print("channel", flush=True)
signal.sigwait([signal.SIGUSR1])
for what, data in (("resume", struct.pack("<IIQ", WIRE_RESUME, 16, 0)),
                   ("garbage", b"\xff" * 16)):
    try:
        channel.send(data)
        print(what, "sent", flush=True)
    except OSError as e:
        print(what, "refused:", e.strerror, flush=True)
print("done", flush=True)
time.sleep(120)
EOF

gm_write_config "$CONFIG" \
  "[mediator]" "worker_pass_environment=LD_PRELOAD GM_WORKER_ATTACK*" \
  control_socket="$CONTROL" state_dir="$TMP/state" cache_dir="$TMP/cache" \
  policy=budget renderer=egl-surfaceless restart_wait_s=60 \
  "[domain $DOMAIN_A]" class=safety period_us=16667 budget_us=4000 vtest_socket="$SOCK_A" \
  "[domain $DOMAIN_B]" class=normal period_us=16667 budget_us=12000 vtest_socket="$SOCK_B"
worker_files_mark
LD_PRELOAD=$WORKER_ATTACK GM_WORKER_ATTACK=export GM_WORKER_ATTACK_DOMAIN=$DOMAIN_B \
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 start_mediatord
KEEPER_LOG=$MEDIATORD_LOG

gm_on_exit stop_keeper

/usr/bin/python3 "$TMP/thief.py" "$SOCK_B" >"$TMP/thief.log" 2>&1 &
THIEF_PID=$!
gm_track "$THIEF_PID"
deadline=$((SECONDS + 30))
until grep -qx channel "$TMP/thief.log"; do
  gm_alive "$THIEF_PID" || fail "the client got no channel: $(cat "$TMP/thief.log")"
  [ $SECONDS -lt $deadline ] || fail "the client got no channel within 30 s"
  sleep 0.1
done
wait_field "$DOMAIN_B" clients 1 10
worker=$(pgrep -P "$MEDIATORD_PID")
[ "$(wc -w <<<"$worker")" -eq 1 ] || fail "expected one worker, found: $worker"
log "the worker $worker sent its channel to its client"

kill -KILL "$MEDIATORD_PID"
wait "$MEDIATORD_PID" 2>/dev/null || :
log "mediatord $MEDIATORD_PID killed"
MEDIATORD_PID=
# The worker exits, and this test (its subreaper now) reaps it.
deadline=$((SECONDS + 10))
while [ -e "/proc/$worker" ]; do
  [ $SECONDS -lt $deadline ] || fail "the worker $worker did not end when mediatord died"
  sleep 0.1
done
grep -q "worker-attack: export: mediatord died" "$KEEPER_LOG" ||
  fail "the worker did not exit as the attack does: $(grep worker-attack "$KEEPER_LOG")"
# The keeper's view: give it time to notice the end (it must, at once).
ended="worker $worker of domain $DOMAIN_B ended while mediatord was away"
deadline=$((SECONDS + 5))
until grep -qF "$ended" "$KEEPER_LOG" || [ $SECONDS -ge $deadline ]; do
  sleep 0.1
done

# A root process takes the worker's pid: ns_last_pid set to the pid before
# it, then a fork; retried when another fork came between.
REUSER=
for _ in $(seq 200); do
  echo $((worker - 1)) >/proc/sys/kernel/ns_last_pid
  sleep 300 &
  if [ $! -eq "$worker" ]; then
    REUSER=$!
    break
  fi
  kill -KILL $! 2>/dev/null || :
  wait $! 2>/dev/null || :
done
[ -n "$REUSER" ] || fail "no process could be given the pid $worker in 200 tries"
gm_track "$REUSER"
log "process $REUSER (sleep, root) has the worker's pid"

MEDIATORD_LOG=$TMP/mediatord-2.log
start_mediatord
kill -USR1 "$THIEF_PID"
deadline=$((SECONDS + 10))
until grep -qx "done" "$TMP/thief.log"; do
  [ $SECONDS -lt $deadline ] || fail "the client did not send its records: $(cat "$TMP/thief.log")"
  sleep 0.1
done
log "the client, on the channel: $(grep -E '^(resume|garbage)' "$TMP/thief.log" | paste -sd ';')"
sleep 1 # time for a mediatord to read what came, and to act on it

gm_alive "$REUSER" ||
  fail "the process that got the worker's pid $worker was killed: $(grep -E "$worker|taken over" "$MEDIATORD_LOG")"
! grep -E "(client|VM) [0-9]+ taken over" "$MEDIATORD_LOG" >&2 ||
  fail "the restarted mediatord took over a worker that had ended (pid $worker is another process's)"
grep -qF "$ended" "$KEEPER_LOG" ||
  fail "the keeper did not notice the worker's end: $(grep -i keeper "$KEEPER_LOG" | tail -5)"
grep -qx "resume refused: Broken pipe" "$TMP/thief.log" ||
  fail "the channel of the worker that ended was not closed: $(cat "$TMP/thief.log")"
[ "$(domain_field "$DOMAIN_B" clients)" -eq 0 ] || fail "$DOMAIN_B counts a client"
timeout -k 5 30 "$VTEST_POKE" "$SOCK_B" handshake >&2 ||
  fail "no new client served on $SOCK_B after the restart"

gm_stop_mediatord || fail "mediatord exited with status $? on SIGTERM"
for _ in $(seq 50); do [ -n "$(keeper_pids)" ] || break; sleep 0.1; done
[ -z "$(keeper_pids)" ] || fail "the keeper still runs after mediatord stopped"
gm_alive "$REUSER" || fail "the process with pid $worker did not outlive mediatord's stop"
worker_files_unchanged gpu-mediator "the channel export"
log "ok"
