#!/bin/bash
# SPDX-License-Identifier: MIT
# trace start opens its file as the user who asks (doc/protocols.md,
# "trace-start"; issue 30: mediatord, as root, opened any path a member
# of admin_group named, followed links and waited on a FIFO). mediatord
# runs as root; a local user made for the test is in admin_group (so
# trace start is not refused as such) and runs mediatorctl through
# setpriv with its groups:
#  a) a file of root's, mode 0600, keeps its content: "Permission denied";
#     a new file in a directory only root may write is not made;
#  b) a symbolic link to that file, and one to a new path in root's
#     directory, are refused ("is a symbolic link"): nothing changes;
#  c) a FIFO, without a reader and with one, is refused at once ("not a
#     regular file"), and mediatord answers status right after, while a
#     cluster client renders in the safety domain;
#  d) a new file in the user's own directory becomes the trace: the user's
#     file, with the records of a cluster client's groups;
# and root, too, traces into a new file (root's) but not through a link.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root, to make a user and run mediatorctl as it"
require_cmd setpriv util-linux
require_cmd useradd passwd
require_cmd groupadd passwd
require_cmd mkfifo coreutils
require_cmd jq jq
[ -x "$CLUSTER_CLIENT" ] || fail "not built: $CLUSTER_CLIENT"

TUSER=gm-trace-$$
TGROUP=gm-trace-adm-$$
# remove_user: the test's user and group, if they were made.
remove_user() {
  if getent passwd "$TUSER" >/dev/null; then userdel -f "$TUSER" || :; fi
  local g
  for g in "$TUSER" "$TGROUP"; do
    if getent group "$g" >/dev/null; then groupdel "$g" || :; fi
  done
}
gm_on_exit remove_user
groupadd --system "$TGROUP"
useradd --system --user-group --no-create-home --shell /usr/sbin/nologin \
  --groups "$TGROUP" "$TUSER"

# as_user COMMAND...: COMMAND as the test's user, with its groups (admin_group among them).
as_user() {
  setpriv --reuid="$TUSER" --regid="$(id -g "$TUSER")" --init-groups -- "$@"
}
# user_ctl ARGS...: the user's mediatorctl, bounded in time.
user_ctl() {
  as_user timeout -k 5 20 "$MEDIATORCTL" --socket "$CONTROL" "$@"
}
now_ms() {
  date +%s%3N
}

gm_write_config "$CONFIG" \
  "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" cache_dir="$TMP/cache" \
  policy=budget renderer=egl-surfaceless control_group="$TGROUP" admin_group="$TGROUP" \
  "[domain $DOMAIN_A]" class=safety period_us=16667 budget_us=4000 vtest_socket="$SOCK_A" \
  "[domain $DOMAIN_B]" class=normal period_us=16667 budget_us=12000 vtest_socket="$SOCK_B"
start_mediatord
_probe_mediator_exec "$SOCK_A"
user_ctl status >/dev/null || fail "the user's mediatorctl status failed"

# Root's file (0600) and directory (0755: only root writes there), and the user's directory.
SECRET=$TMP/secret
ROOT_DIR=$TMP/root-only
USER_DIR=$TMP/user
printf "root's secret\n" >"$SECRET"
chmod 0600 "$SECRET"
install -d -m 0755 "$ROOT_DIR"
install -d -m 0755 -o "$TUSER" -g "$(id -g "$TUSER")" "$USER_DIR"
secret_before=$(stat -c '%s %Y %U %a' "$SECRET")

# expect_refused NAME WHAT PATH: the user's trace start of PATH fails (exit
# status 1) within 5 s with an error that names PATH and WHAT.
expect_refused() {
  local name=$1 what=$2 path=$3 rc=0 t0 took
  t0=$(now_ms)
  user_ctl trace start "$path" >"$TMP/$name.out" 2>&1 || rc=$?
  took=$(($(now_ms) - t0))
  [ $rc -eq 1 ] || fail "$name: exit status $rc, expected 1: $(cat "$TMP/$name.out")"
  grep -qF "$path: $what" "$TMP/$name.out" ||
    fail "$name: expected '$path: $what': $(cat "$TMP/$name.out")"
  [ "$took" -lt 5000 ] || fail "$name: answered after $took ms"
  log "$name: refused in $took ms: $(head -n 1 "$TMP/$name.out")"
}

# a) Root's file, and a new file where only root may write.
expect_refused root-file "Permission denied" "$SECRET"
expect_refused root-dir "Permission denied" "$ROOT_DIR/rt-poc-owned"
[ ! -e "$ROOT_DIR/rt-poc-owned" ] || fail "a file was made in root's directory"

# b) Links to them, made by the user in its own directory.
as_user ln -s "$SECRET" "$USER_DIR/to-secret"
as_user ln -s "$ROOT_DIR/rt-poc-owned" "$USER_DIR/to-new"
expect_refused link-to-file "is a symbolic link" "$USER_DIR/to-secret"
expect_refused link-to-new "is a symbolic link" "$USER_DIR/to-new"
[ ! -e "$ROOT_DIR/rt-poc-owned" ] || fail "a file was made in root's directory through a link"
[ "$(stat -c '%s %Y %U %a' "$SECRET")" = "$secret_before" ] ||
  fail "root's file changed: $(stat -c '%s %Y %U %a' "$SECRET"), was $secret_before"
[ "$(cat "$SECRET")" = "root's secret" ] || fail "root's file lost its content"

# c) A FIFO, while the safety domain renders: refused at once, and
# mediatord goes on answering.
gm_in_domain --timeout 60 "$SOCK_A" "$CLUSTER_CLIENT" --frames 240 >"$TMP/cluster-fifo.log" 2>&1 &
cluster=$!
gm_track "$cluster"
wait_field "$DOMAIN_A" contexts 1 30
as_user mkfifo "$USER_DIR/fifo"
expect_refused fifo "not a regular file" "$USER_DIR/fifo"
exec 3<>"$USER_DIR/fifo" # a reader (and a writer), as a client could keep one
expect_refused fifo-with-reader "not a regular file" "$USER_DIR/fifo"
exec 3>&-
t0=$(now_ms)
ctl status >/dev/null || fail "mediatorctl status failed after the FIFO"
took=$(($(now_ms) - t0))
[ "$took" -lt 2000 ] || fail "mediatorctl status took $took ms after the FIFO"
wait "$cluster" || fail "the cluster client failed beside the FIFO: $(tail -3 "$TMP/cluster-fifo.log")"
log "status answered in $took ms; the cluster client rendered its 240 frames"
wait_field "$DOMAIN_A" clients 0 15

# d) A new file in the user's directory: the user's, with the records.
trace=$USER_DIR/trace.jsonl
user_ctl trace start "$trace" >"$TMP/user-start.out" 2>&1 ||
  fail "the user's trace start failed: $(cat "$TMP/user-start.out")"
[ "$(stat -c '%U %G' "$trace")" = "$TUSER $(id -gn "$TUSER")" ] ||
  fail "the trace file is $(stat -c '%U %G' "$trace")'s, not $TUSER's"
[ "$(ctl status --json | jq -r .trace)" = "$trace" ] ||
  fail "mediatorctl status names the trace $(ctl status --json | jq -r .trace), not $trace"
gm_in_domain --timeout 60 "$SOCK_A" "$CLUSTER_CLIENT" --frames 120 >"$TMP/cluster.log" 2>&1 ||
  fail "the cluster client failed: $(tail -3 "$TMP/cluster.log")"
wait_field "$DOMAIN_A" clients 0 15
user_ctl trace stop >"$TMP/user-stop.out" 2>&1 ||
  fail "the user's trace stop failed: $(cat "$TMP/user-stop.out")"
jq -s -e 'length > 0 and all(type == "object")' "$trace" >/dev/null ||
  fail "the trace is not JSON Lines of objects"
groups=$(jq -c 'select(has("type") | not)' "$trace" | wc -l)
[ "$groups" -gt 0 ] || fail "the user's trace holds no group records"
log "the user's trace: $(wc -l <"$trace") records, $groups of groups, owned by $TUSER"

# Root: a new file is root's; a link is refused as well.
ctl trace start "$TMP/root-trace.jsonl" >/dev/null || fail "root's trace start failed"
[ "$(stat -c %U "$TMP/root-trace.jsonl")" = root ] || fail "root's trace file is not root's"
ctl trace stop >/dev/null || fail "root's trace stop failed"
rc=0
ctl trace start "$USER_DIR/to-secret" >"$TMP/root-link.out" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q "is a symbolic link" "$TMP/root-link.out" ||
  fail "root's trace start through a link: status $rc: $(cat "$TMP/root-link.out")"
[ "$(cat "$SECRET")" = "root's secret" ] || fail "root's file lost its content"
gm_assert_mediatord_alive
log "PASS"
