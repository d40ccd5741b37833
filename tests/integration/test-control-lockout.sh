#!/bin/bash
# SPDX-License-Identifier: MIT
# No user who may only read the control socket can lock root out of it
# (doc/protocols.md, "Transport"; issue 30: 40 connections of one member
# of control_group took all 32 places). mediatord runs as root with
# control_group and admin_group, each a group made for the test, and
# users made for it: seven in control_group only, one in admin_group.
# Each of the seven in turn opens 6 connections and keeps them busy (a
# status request every 2 s):
#  - each of the first six gets 4 (CONTROL_MAX_PER_USER), its 5th and 6th
#    are refused with "too many control connections of uid N: at most 4
#    per user";
#  - the seventh gets none: the last 8 of 32 places are kept for root,
#    mediatord's user and admin_group ("... are kept for root, ...");
#  - meanwhile root's and the admin's mediatorctl status are answered;
#  - a connection of the admin that sends nothing is closed after 10 s
#    (CONTROL_IDLE_TIMEOUT_MS) with "closed: no request for 10000 ms",
#    while the busy connections are all still served 12 s on.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root, to make users and connect as them"
require_cmd setpriv util-linux
require_cmd useradd passwd
require_cmd groupadd passwd
# Debian's python3, which the users can run (root's PATH may lead elsewhere).
[ -x /usr/bin/python3 ] || gm_missing /usr/bin/python3 python3

PER_USER=4  # CONTROL_MAX_PER_USER
USER_MAX=24 # CONTROL_MAX_CLIENTS - CONTROL_ADMIN_SLOTS
IDLE_S=10   # CONTROL_IDLE_TIMEOUT_MS / 1000
CTL_GROUP=gm-lock-ctl-$$
ADM_GROUP=gm-lock-adm-$$
ADMIN=gm-lock-$$-a
USERS=()
for i in 1 2 3 4 5 6 7; do
  USERS+=("gm-lock-$$-$i")
done

# remove_users: the test's users and groups, those that were made.
remove_users() {
  local u g
  for u in "${USERS[@]}" "$ADMIN"; do
    if getent passwd "$u" >/dev/null; then userdel -f "$u" || :; fi
  done
  for g in "${USERS[@]}" "$ADMIN" "$CTL_GROUP" "$ADM_GROUP"; do
    if getent group "$g" >/dev/null; then groupdel "$g" || :; fi
  done
}
gm_on_exit remove_users
groupadd --system "$CTL_GROUP"
groupadd --system "$ADM_GROUP"
for u in "${USERS[@]}"; do
  useradd --system --user-group --no-create-home --shell /usr/sbin/nologin \
    --groups "$CTL_GROUP" "$u"
done
useradd --system --user-group --no-create-home --shell /usr/sbin/nologin \
  --groups "$CTL_GROUP,$ADM_GROUP" "$ADMIN"

# as_user USER COMMAND...: COMMAND as USER, with its groups.
as_user() {
  setpriv --reuid="$1" --regid="$(id -g "$1")" --init-groups -- "${@:2}"
}
now_ms() {
  date +%s%3N
}

# The busy client: opens N connections, prints the first line each gets
# to a status request, then "held", then every 2 s asks status on each
# connection it kept and prints how many answered, until it is stopped.
cat >"$TMP/busy.py" <<'EOF'
import socket
import sys
import time

path, n = sys.argv[1], int(sys.argv[2])
req = b'{"cmd":"status"}\n'


def reply(s):
    buf = b""
    try:
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    except OSError as e:
        buf += ("<%s>" % e.strerror).encode()
    return buf.decode(errors="replace").strip() or "<closed>"


socks = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    socks.append(s)
kept = []
for s in socks:
    try:
        s.sendall(req)
    except OSError:
        pass  # a refused connection may be closed already; its line is there
    line = reply(s)
    print(line[:200], flush=True)
    if '"ok":true' in line:
        kept.append(s)
    else:
        s.close()
print("held", flush=True)
rounds = 0
while True:
    time.sleep(2)
    rounds += 1
    ok = 0
    for s in kept:
        try:
            s.sendall(req)
            ok += '"ok":true' in reply(s)
        except OSError:
            pass
    print("round %d: %d of %d answered" % (rounds, ok, len(kept)), flush=True)
EOF
# The idle client: connects, sends nothing, and prints after how long, and
# with what line, mediatord closed the connection.
cat >"$TMP/idle.py" <<'EOF'
import socket
import sys
import time

s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(60)
s.connect(sys.argv[1])
t0 = time.monotonic()
buf = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    buf += chunk
print("%d %s" % ((time.monotonic() - t0) * 1000, buf.decode(errors="replace").strip()))
EOF
chmod 0644 "$TMP/busy.py" "$TMP/idle.py"

gm_write_config "$CONFIG" \
  "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" policy=budget \
  control_group="$CTL_GROUP" admin_group="$ADM_GROUP" \
  "[domain $DOMAIN_A]" class=safety period_us=16667 budget_us=4000 vtest_socket="$SOCK_A" \
  "[domain $DOMAIN_B]" class=normal period_us=16667 budget_us=12000 vtest_socket="$SOCK_B"
start_mediatord

# One busy client after the other, each once it holds its connections.
for u in "${USERS[@]}"; do
  as_user "$u" /usr/bin/python3 "$TMP/busy.py" "$CONTROL" 6 >"$TMP/busy-$u.log" 2>&1 &
  gm_track $!
  deadline=$((SECONDS + 20))
  until grep -qx held "$TMP/busy-$u.log"; do
    [ $SECONDS -lt $deadline ] || fail "$u's busy client did not get its answers: $(cat "$TMP/busy-$u.log")"
    sleep 0.1
  done
done

# The first six: 4 each, and the clear refusal of the rest.
for u in "${USERS[@]:0:6}"; do
  uid=$(id -u "$u")
  ok=$(grep -c '"ok":true' "$TMP/busy-$u.log" || :)
  refused=$(grep -cF "too many control connections of uid $uid: at most $PER_USER per user" \
    "$TMP/busy-$u.log" || :)
  [ "$ok" -eq $PER_USER ] && [ "$refused" -eq 2 ] ||
    fail "$u: $ok connections served and $refused refused per user, expected $PER_USER and 2:" \
      "$(cat "$TMP/busy-$u.log")"
done
# The seventh: the places left are kept for administrators.
u=${USERS[6]}
ok=$(grep -c '"ok":true' "$TMP/busy-$u.log" || :)
kept=$(grep -cF "kept for root, mediatord's user and admin_group" "$TMP/busy-$u.log" || :)
[ "$ok" -eq 0 ] && [ "$kept" -eq 6 ] ||
  fail "$u, after $USER_MAX connections of others: $ok served, $kept refused for the" \
    "administrators' places, expected 0 and 6: $(cat "$TMP/busy-$u.log")"
log "six users hold $USER_MAX connections (2 refused each), a seventh got none"

# Root and the admin are served.
t0=$(now_ms)
ctl status >/dev/null || fail "root's mediatorctl status failed while users hold $USER_MAX connections"
took=$(($(now_ms) - t0))
[ "$took" -lt 3000 ] || fail "root's mediatorctl status took $took ms"
as_user "$ADMIN" "$MEDIATORCTL" --socket "$CONTROL" status >"$TMP/admin.out" 2>&1 ||
  fail "the admin's mediatorctl status failed: $(cat "$TMP/admin.out")"
log "root's status answered in $took ms; the admin's too"

# An idle connection is closed; the busy ones, older, are not.
as_user "$ADMIN" /usr/bin/python3 "$TMP/idle.py" "$CONTROL" >"$TMP/idle.out" 2>&1 ||
  fail "the idle client failed: $(cat "$TMP/idle.out")"
read -r idle_ms idle_line <"$TMP/idle.out"
[ "$idle_ms" -ge $((IDLE_S * 1000 - 500)) ] && [ "$idle_ms" -le $((IDLE_S * 1000 + 4000)) ] ||
  fail "the idle connection was closed after $idle_ms ms, expected about $((IDLE_S * 1000))"
grep -qF "closed: no request for $((IDLE_S * 1000)) ms" <<<"$idle_line" ||
  fail "the idle connection's last line: $idle_line"
grep -q "closed a connection of uid $(id -u "$ADMIN") .*no request" "$MEDIATORD_LOG" ||
  fail "mediatord did not log the idle connection it closed"
# Round 6 of a busy client comes 12 s after it held its connections: past the idle timeout.
for u in "${USERS[@]:0:6}"; do
  deadline=$((SECONDS + 15))
  until grep -q '^round 6:' "$TMP/busy-$u.log"; do
    [ $SECONDS -lt $deadline ] || fail "$u's busy client has no round 6: $(tail -n 2 "$TMP/busy-$u.log")"
    sleep 0.2
  done
  grep -qx "round 6: $PER_USER of $PER_USER answered" "$TMP/busy-$u.log" ||
    fail "$u's busy connections, 12 s on: $(grep '^round 6:' "$TMP/busy-$u.log")"
done
log "the idle connection was closed after $idle_ms ms; the busy ones are served 12 s on"
gm_assert_mediatord_alive
log "PASS"
