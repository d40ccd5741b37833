#!/bin/bash
# SPDX-License-Identifier: MIT
# A compromised worker finds no way up (issue 30, doc/design.md "Workers'
# rights"). mediatord runs as root on a terminal (a pseudo-terminal this
# test holds, as an operator's shell would be), and attacker's code
# (tests/tools/worker-attack.c, loaded with LD_PRELOAD) acts inside the
# infotainment domain's worker once its system-call filter is on. Asserted:
# - every worker leads a session of its own and has no controlling
#   terminal; its stdin is /dev/null;
# - tiocsti: pushing a command line into any terminal the worker can reach
#   (its descriptors, /dev/tty, every pseudo-terminal by name) is refused, and
#   the terminal's input queue stays empty;
# - wx: memory writable and executable at once (a new map, a writable map
#   turned executable, its own code turned writable) is refused;
# - the attacking worker still serves its client afterwards (a refused
#   terminal request costs nothing), and the cluster, in the same
#   mediatord, renders every frame;
# - no file outside the test's directory that the worker user could write
#   changed.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering
[ "$(id -u)" = 0 ] || skip "needs root, to start workers as the worker user"
require_cmd python3 python3
[ -e "${WORKER_ATTACK:-}" ] || fail "not built: the worker-attack module (WORKER_ATTACK)"

gm_write_config "$CONFIG" \
  "[mediator]" "worker_pass_environment=LD_PRELOAD GM_WORKER_ATTACK*" \
  control_socket="$CONTROL" state_dir="$TMP/state" cache_dir="$TMP/cache" \
  policy=budget renderer=egl-surfaceless \
  "[domain $DOMAIN_A]" class=safety period_us=16667 budget_us=4000 vtest_socket="$SOCK_A" \
  "[domain $DOMAIN_B]" class=normal period_us=16667 budget_us=12000 vtest_socket="$SOCK_B"

# mediatord on a pseudo-terminal: its session's leader with the terminal as
# controlling terminal and stdin (output to the log). The holder keeps the
# master side and writes how many bytes wait in the terminal's input queue
# to $TMP/pending, every 0.1 s, until mediatord exits.
cat >"$TMP/pty-hold.py" <<'EOF'
import fcntl, os, struct, sys, termios, time, tty
log, pid_file, pending_file, argv = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
master, slave = os.openpty()
tty.setraw(slave)  # injected bytes count at once, without a newline
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    out = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(slave, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.execv(argv[0], argv)
with open(pid_file + ".tmp", "w") as f:
    f.write(f"{pid}\n")
os.rename(pid_file + ".tmp", pid_file)
while os.waitpid(pid, os.WNOHANG) == (0, 0):
    n = struct.unpack("i", fcntl.ioctl(slave, termios.FIONREAD, b"\0" * 4))[0]
    with open(pending_file + ".tmp", "w") as f:
        f.write(f"{n}\n")
    os.rename(pending_file + ".tmp", pending_file)
    time.sleep(0.1)
EOF
: >"$MEDIATORD_LOG"
worker_files_mark
LD_PRELOAD=$WORKER_ATTACK GM_WORKER_ATTACK=tiocsti,wx GM_WORKER_ATTACK_DOMAIN=$DOMAIN_B \
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
  python3 "$TMP/pty-hold.py" "$MEDIATORD_LOG" "$TMP/mediatord.pid" "$TMP/pending" \
  "$MEDIATORD" --config "$CONFIG" &
HOLDER_PID=$!
gm_track "$HOLDER_PID"
gm_wait_path -s "$TMP/mediatord.pid" 20 "$HOLDER_PID" "the terminal holder" "$MEDIATORD_LOG"
MEDIATORD_PID=$(cat "$TMP/mediatord.pid")
gm_on_exit gm_kill_mediatord
for sock in "$SOCK_A" "$SOCK_B" "$CONTROL"; do
  gm_wait_path -S "$sock" 20 "$MEDIATORD_PID" mediatord "$MEDIATORD_LOG"
done
[ "$(awk '{print $7}' "/proc/$MEDIATORD_PID/stat")" != 0 ] ||
  fail "mediatord has no controlling terminal: the test sets nothing up"
log "mediatord pid $MEDIATORD_PID on $(readlink "/proc/$MEDIATORD_PID/fd/0")"

gm_in_domain --timeout 60 "$SOCK_A" "$CLUSTER_CLIENT" --frames 360 \
  --json /dev/fd/3 3>"$TMP/cluster.json" >"$TMP/cluster.log" 2>&1 &
CLUSTER_PID=$!
gm_track "$CLUSTER_PID"
gm_in_domain --timeout 60 "$SOCK_B" "$CLUSTER_CLIENT" --frames 240 \
  --json /dev/fd/3 3>"$TMP/attacker.json" >"$TMP/attacker.log" 2>&1 &
ATTACKER_PID=$!
gm_track "$ATTACKER_PID"
wait_field "$DOMAIN_A" clients 1 30
wait_field "$DOMAIN_B" clients 1 30

# Every worker: its own session, no controlling terminal, stdin /dev/null.
mapfile -t workers < <(pgrep -P "$MEDIATORD_PID")
[ ${#workers[@]} -eq 2 ] || fail "expected two workers, found ${#workers[@]}: ${workers[*]}"
for w in "${workers[@]}"; do
  read -r session tty_nr < <(sed 's/^.*) //' "/proc/$w/stat" | awk '{print $4, $5}')
  [ "$session" = "$w" ] || fail "worker $w is in session $session, not one of its own"
  [ "$tty_nr" = 0 ] || fail "worker $w has a controlling terminal ($tty_nr)"
  [ "$(readlink "/proc/$w/fd/0")" = /dev/null ] ||
    fail "worker $w's stdin is $(readlink "/proc/$w/fd/0")"
done
log "workers ${workers[*]}: each its session's leader, no controlling terminal, stdin /dev/null"

deadline=$((SECONDS + 60))
until grep -q "worker-attack: wx: finished" "$MEDIATORD_LOG"; do
  [ $SECONDS -lt $deadline ] || fail "the attack did not finish within 60 s"
  grep -q "worker-attack: the filter never came on" "$MEDIATORD_LOG" &&
    fail "the attacker's worker never turned its filter on"
  sleep 0.2
done
grep "worker-attack:" "$MEDIATORD_LOG" | sed 's/^/  /' >&2
! grep -q "worker-attack: .*: DONE$" "$MEDIATORD_LOG" || fail "an attack succeeded"
grep -q "worker-attack: tiocsti: open /dev/tty (.*): refused" "$MEDIATORD_LOG" ||
  fail "the worker was not refused its session's terminal"
grep -q "worker-attack: tiocsti: TIOCSTI on fd 0 (/dev/null) (.*): refused" "$MEDIATORD_LOG" ||
  fail "no attempt on the worker's stdin was reported"
mediatord_tty=$(readlink "/proc/$MEDIATORD_PID/fd/0")
grep -q "worker-attack: tiocsti: open $mediatord_tty (.*): refused" "$MEDIATORD_LOG" ||
  fail "no attempt on mediatord's terminal $mediatord_tty was reported"
[ "$(grep -c "worker-attack: wx: .*: refused" "$MEDIATORD_LOG")" = 3 ] ||
  fail "memory writable and executable at once: not refused all three ways"
sleep 0.5 # the holder's next look
[ "$(cat "$TMP/pending")" = 0 ] || fail "$(cat "$TMP/pending") bytes wait in mediatord's terminal"

wait "$ATTACKER_PID" || fail "the attacker's client failed: $(tail -3 "$TMP/attacker.log")"
wait "$CLUSTER_PID" || fail "cluster-client failed: $(tail -3 "$TMP/cluster.log")"
frames=$(jq .frames "$TMP/cluster.json")
[ "$frames" = 360 ] || fail "the cluster rendered $frames of 360 frames"
! grep -q "killed by signal" "$MEDIATORD_LOG" || fail "a worker was killed: $(grep -m1 'killed by signal' "$MEDIATORD_LOG")"
gm_assert_mediatord_alive
worker_files_unchanged gpu-mediator "the terminal attack"
log "terminal requests and writable code refused, nothing injected; both clients rendered every frame"
log "PASS"
