#!/bin/bash
# SPDX-License-Identifier: MIT
# A worker user per domain (doc/design.md, "Workers' rights"). mediatord
# runs as root, each domain names its worker_user, and there is no keeper
# (restart_wait_s = 0: once, without --outlive-mediatord, the worker
# options after it were lost, --run-as among them). With a client in each
# domain: each worker runs as its domain's user; each domain's state and
# shader cache directories are its user's, mode 0700; the other domain's
# user can neither list nor write into them, nor signal the worker, while
# the owner can; a model of the layout before (state_dir/DOMAIN.MODEL.state)
# was moved into its domain's directory; and when the clients end, each
# worker saves its model in its own domain's directory.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering
[ "$(id -u)" = 0 ] || skip "needs root, to start workers as the domains' users"
USER_A=gpu-mediator-cluster
USER_B=gpu-mediator-infotainment
for u in "$USER_A" "$USER_B"; do
  getent passwd "$u" >/dev/null ||
    fail "no user $u: scripts/install-deps.sh creates it (scripts/add-worker-user.sh $u)"
done

mkdir -p "$TMP/state"
OLD_MODEL=$TMP/state/$DOMAIN_A.sgd.state
printf 'a model of the layout before\n' >"$OLD_MODEL"
gm_write_config "$CONFIG" \
  "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" cache_dir="$TMP/cache" \
  policy=budget renderer=egl-surfaceless restart_wait_s=0 \
  "[domain $DOMAIN_A]" class=safety period_us=16667 budget_us=4000 vtest_socket="$SOCK_A" \
  worker_user=$USER_A \
  "[domain $DOMAIN_B]" class=normal period_us=16667 budget_us=12000 vtest_socket="$SOCK_B" \
  worker_user=$USER_B
start_mediatord

# The models move in before any worker starts.
[ ! -e "$OLD_MODEL" ] || fail "$OLD_MODEL was not moved into $TMP/state/$DOMAIN_A/"
[ "$(cat "$TMP/state/$DOMAIN_A/$DOMAIN_A.sgd.state")" = "a model of the layout before" ] ||
  fail "the model of the layout before is not in $TMP/state/$DOMAIN_A/"
[ "$(stat -c %U "$TMP/state/$DOMAIN_A/$DOMAIN_A.sgd.state")" = "$USER_A" ] ||
  fail "the moved model does not belong to $USER_A"

for d in A B; do
  sock=SOCK_$d
  gm_in_domain --timeout 60 "${!sock}" "$CLUSTER_CLIENT" --frames 180 \
    >"$TMP/client-$d.log" 2>&1 &
  eval "CLIENT_$d=$!"
  gm_track $!
done
wait_field "$DOMAIN_A" contexts 1 30
wait_field "$DOMAIN_B" contexts 1 30

# worker_of DOMAIN: the pid of mediatord's worker for DOMAIN.
worker_of() {
  local p
  for p in $(pgrep -P "$MEDIATORD_PID"); do
    if tr '\0' '\n' <"/proc/$p/cmdline" | grep -qx -- "$1"; then
      echo "$p"
      return 0
    fi
  done
  fail "no worker of domain $1 among mediatord's children"
}
# as_user USER CMD...: CMD as USER, with its groups.
as_user() {
  setpriv --reuid="$1" --regid="$(id -g "$1")" --init-groups -- "${@:2}"
}

for d in A B; do
  dom=DOMAIN_$d user=USER_$d other=USER_B
  [ $d = A ] || other=USER_A
  w=$(worker_of "${!dom}")
  uid=$(id -u "${!user}")
  [ "$(sed -n 's/^Uid:[[:space:]]*//p' "/proc/$w/status")" = "$uid	$uid	$uid	$uid" ] ||
    fail "domain ${!dom}'s worker $w: uids $(sed -n 's/^Uid:[[:space:]]*//p' "/proc/$w/status")," \
      "expected ${!user} ($uid)"
  for dir in "$TMP/state/${!dom}" "$TMP/cache/${!dom}"; do
    [ "$(stat -c '%U %a' "$dir")" = "${!user} 700" ] ||
      fail "$dir: $(stat -c '%U %a' "$dir"), expected ${!user} 700"
    as_user "${!other}" ls "$dir" >/dev/null 2>&1 && fail "${!other} can list $dir"
    as_user "${!other}" touch "$dir/intruder" 2>/dev/null && fail "${!other} can write into $dir"
    as_user "${!user}" ls "$dir" >/dev/null || fail "${!user} cannot list its own $dir"
  done
  as_user "${!other}" kill -0 "$w" 2>/dev/null && fail "${!other} can signal ${!dom}'s worker $w"
  as_user "${!user}" kill -0 "$w" || fail "${!user} cannot signal its own worker $w"
  log "domain ${!dom}: worker $w runs as ${!user}; its state and cache directories are" \
    "${!user}'s (0700), closed to ${!other}, as is the worker"
done

wait "$CLIENT_A" || fail "domain A's client failed: $(tail -3 "$TMP/client-A.log")"
wait "$CLIENT_B" || fail "domain B's client failed: $(tail -3 "$TMP/client-B.log")"
wait_field "$DOMAIN_A" clients 0 20 # the workers saved their models on exit
wait_field "$DOMAIN_B" clients 0 20
for d in A B; do
  dom=DOMAIN_$d user=USER_$d
  model=$TMP/state/${!dom}/${!dom}.sgd.state
  [ -s "$model" ] && [ "$(head -c 27 "$model")" != "a model of the layout before" ] ||
    fail "domain ${!dom}'s worker saved no model in $model"
  [ "$(stat -c %U "$model")" = "${!user}" ] || fail "$model does not belong to ${!user}"
done
[ -z "$(find "$TMP/state" -maxdepth 1 -type f)" ] ||
  fail "models outside the domains' directories: $(find "$TMP/state" -maxdepth 1 -type f)"
gm_assert_mediatord_alive
log "each worker saved its model in its domain's directory"
log "PASS"
