#!/bin/bash
# SPDX-License-Identifier: MIT
# Who may reach mediatord (doc/design.md, "Configuration"; issue: a local
# user must not spend the safety domain's budget or change mediatord).
# mediatord runs as root; a local user ("nobody", through setpriv) is not
# in any of its groups but nogroup:
#  - a domain socket with the default owner and mode (root, 0660) refuses
#    the user's connection; a domain with socket_group = nogroup takes it;
#  - the control socket (control_group = nogroup) lets the user read
#    (show-budgets) but refuses its set-budget and trace start with
#    "permission denied" (mediatorctl exit status 1), changes nothing, and
#    mediatord logs the refusal with the uid; root changes the budget;
#  - restarted with admin_group = nogroup, the same user's set-budget is
#    taken.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_cmd setpriv util-linux
# Debian's python3, which the user can run (root's PATH may lead elsewhere).
[ -x /usr/bin/python3 ] || gm_missing /usr/bin/python3 python3
require_cmd jq jq
[ "$(id -u)" = 0 ] || skip "needs root, to run clients as another user"
getent passwd nobody >/dev/null || fail "no user 'nobody' on this system"
getent group nogroup >/dev/null || fail "no group 'nogroup' on this system"

# as_user COMMAND...: COMMAND as nobody:nogroup with no supplementary group.
as_user() {
  setpriv --reuid=nobody --regid=nogroup --clear-groups -- "$@"
}

# try_connect SOCKET: prints "ok" or the error the user's connect() got.
try_connect() {
  as_user /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
    print("ok")
except OSError as e:
    print(e.strerror)
' "$1"
}

# write_access_config [ADMIN_GROUP]
write_access_config() {
  gm_write_config "$CONFIG" \
    "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" policy=budget \
    control_group=nogroup ${1:+admin_group=$1} \
    "[domain $DOMAIN_A]" class=safety period_us=16667 budget_us=4000 vtest_socket="$SOCK_A" \
    "[domain $DOMAIN_B]" class=normal period_us=16667 budget_us=12000 vtest_socket="$SOCK_B" \
    socket_group=nogroup
}

chmod 0755 "$TMP" # the user must reach the sockets' directory
write_access_config
start_mediatord

# The sockets' owners and modes, as configured.
[ "$(stat -c '%a %U %G' "$SOCK_A")" = "660 root root" ] ||
  fail "cluster socket: $(stat -c '%a %U %G' "$SOCK_A"), expected 660 root root"
[ "$(stat -c '%a %G' "$SOCK_B")" = "660 nogroup" ] ||
  fail "infotainment socket: $(stat -c '%a %G' "$SOCK_B"), expected 660 nogroup"
[ "$(stat -c '%a %G' "$CONTROL")" = "660 nogroup" ] ||
  fail "control socket: $(stat -c '%a %G' "$CONTROL"), expected 660 nogroup"

# Domain sockets: the safety domain's is closed to the user, the other's open.
got=$(try_connect "$SOCK_A")
[ "$got" = "Permission denied" ] || fail "the user's connect to the cluster socket: $got"
got=$(try_connect "$SOCK_B")
[ "$got" = ok ] || fail "the user's connect to the infotainment socket: $got"
log "domain sockets: cluster refused the user (Permission denied), infotainment took it"

# Control socket: reading is open to control_group.
as_user "$MEDIATORCTL" --socket "$CONTROL" show-budgets --json >"$TMP/user-show.json" \
  2>"$TMP/user-show.err" || fail "the user's show-budgets failed: $(cat "$TMP/user-show.err")"
jq -e --arg d "$DOMAIN_A" '.domains[] | select(.name == $d) | .budget_us == 4000' \
  "$TMP/user-show.json" >/dev/null || fail "the user's show-budgets: $(cat "$TMP/user-show.json")"

# expect_refused NAME COMMAND...: mediatorctl as the user exits 1 with "permission denied".
expect_refused() {
  local name=$1 rc=0
  shift
  as_user "$MEDIATORCTL" --socket "$CONTROL" "$@" >"$TMP/$name.out" 2>&1 || rc=$?
  [ $rc -eq 1 ] || fail "the user's $name: exit status $rc, expected 1: $(cat "$TMP/$name.out")"
  grep -q "permission denied: $name changes mediatord" "$TMP/$name.out" ||
    fail "the user's $name: $(cat "$TMP/$name.out")"
  log "the user's $name: $(head -n 1 "$TMP/$name.out")"
}
expect_refused set-budget set-budget "$DOMAIN_A" --budget-us 1000
expect_refused trace-start trace start "$TMP/user-trace.jsonl"
sleep 0.1 # a set-budget applies from the domain's next period: several have passed
[ "$(domain_field "$DOMAIN_A" budget_us)" = 4000 ] || fail "the refused set-budget changed the budget"
[ ! -e "$TMP/user-trace.jsonl" ] || fail "the refused trace start wrote a trace"
grep -q "refused set-budget from uid $(id -u nobody)" "$MEDIATORD_LOG" ||
  fail "mediatord did not log the refusal"

# Root may change it.
ctl set-budget "$DOMAIN_A" --budget-us 5000 >/dev/null || fail "root's set-budget failed"
wait_field "$DOMAIN_A" budget_us 5000 2 # from the domain's next period

# With admin_group = nogroup, the user may change it too.
gm_stop_mediatord
write_access_config nogroup
start_mediatord
as_user "$MEDIATORCTL" --socket "$CONTROL" set-budget "$DOMAIN_A" --budget-us 3000 \
  >"$TMP/admin.out" 2>&1 || fail "the admin group's set-budget failed: $(cat "$TMP/admin.out")"
wait_field "$DOMAIN_A" budget_us 3000 2
log "admin_group = nogroup: the user's set-budget applied"
log "PASS"
