#!/bin/bash
# SPDX-License-Identifier: MIT
# mediatord refuses a bad config with exit status 1 and a message naming the
# file, the line and the key; refuses a bad command line with status 2; and
# exits 3 when it cannot create its sockets. It never starts serving.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

good_mediator_section() {
  cat <<EOF
[mediator]
control_socket = $CONTROL
state_dir = $TMP/state
policy = budget
max_inflight = 1
EOF
}

# expect_config_error NAME KEY LINE_MIN LINE_MAX <<< CONFIG
# mediatord must exit 1 within 10 s, saying "FILE:LINE:" with LINE in
# [LINE_MIN, LINE_MAX] and naming KEY.
expect_config_error() {
  local name=$1 key=$2 lo=$3 hi=$4 conf=$TMP/$1.conf rc out line
  cat >"$conf"
  timeout -k 5 10 "$MEDIATORD" --config "$conf" >"$TMP/$name.out" 2>&1 && rc=0 || rc=$?
  out=$(cat "$TMP/$name.out")
  [ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "$name: mediatord did not exit (it started?)"
  [ $rc -eq 1 ] || fail "$name: exit status $rc, expected 1; output: $out"
  line=$(sed -n "s|.*$conf:\([0-9][0-9]*\):.*|\1|p" <<<"$out" | head -n 1)
  [ -n "$line" ] || fail "$name: message does not name '$conf:LINE:': $out"
  [ "$line" -ge "$lo" ] && [ "$line" -le "$hi" ] ||
    fail "$name: message names line $line, expected $lo..$hi: $out"
  grep -q -F "$key" <<<"$out" || fail "$name: message does not name key '$key': $out"
  [ ! -S "$SOCK_A" ] && [ ! -S "$CONTROL" ] || fail "$name: mediatord created sockets"
  log "$name: ok ($out)"
}

gm_state_dir "$TMP/state"

# Line numbers below count from 1 at the first line of each config.
{
  good_mediator_section # lines 1-5
  cat <<EOF
[domain a]
class = safety
period_us = 16667
colour = blue
vtest_socket = $SOCK_A
EOF
} | expect_config_error unknown-key colour 9 9

{
  good_mediator_section # lines 1-5
  cat <<EOF
[domain a]
class = safety
period_us = 16667
budget_us = 4000
EOF
} | expect_config_error missing-socket vtest_socket 6 9

{
  good_mediator_section # lines 1-5
  cat <<EOF
[domain a]
period_us = 16667
vtest_socket = $SOCK_A
[domain b]
period_us = 16667
vtest_socket = $SOCK_A
EOF
} | expect_config_error shared-socket vtest_socket 6 11

{
  good_mediator_section # lines 1-5
  cat <<EOF
[domain a]
class = safety
period_us = 16667
budget_us = 20000
vtest_socket = $SOCK_A
EOF
} | expect_config_error budget-over-period budget_us 6 10

{
  good_mediator_section # lines 1-5
  cat <<EOF
[domain a]
period_us = soon
vtest_socket = $SOCK_A
EOF
} | expect_config_error bad-number period_us 7 7

# A config file that does not exist: refused (status 1), naming the file.
timeout -k 5 10 "$MEDIATORD" --config "$TMP/absent.conf" >"$TMP/absent.out" 2>&1 && rc=0 || rc=$?
[ $rc -eq 1 ] || fail "absent config: exit status $rc, expected 1: $(cat "$TMP/absent.out")"
grep -q -F "$TMP/absent.conf" "$TMP/absent.out" ||
  fail "absent config: message does not name the file: $(cat "$TMP/absent.out")"
log "absent-config: ok"

# Bad command lines: status 2.
for args in "--bogus" "--config" "--config $CONFIG extra" ""; do
  # shellcheck disable=SC2086 # word splitting of $args is intended
  timeout -k 5 10 "$MEDIATORD" $args >"$TMP/usage.out" 2>&1 && rc=0 || rc=$?
  [ $rc -eq 2 ] || fail "mediatord $args: exit status $rc, expected 2: $(cat "$TMP/usage.out")"
  [ -s "$TMP/usage.out" ] || fail "mediatord $args: no message"
  log "usage '$args': ok ($(head -n 1 "$TMP/usage.out"))"
done

# A valid config whose socket cannot be created: status 3, nothing left behind.
{
  good_mediator_section
  cat <<EOF
[domain a]
vtest_socket = /dev/null/cannot-exist.vtest
EOF
} >"$TMP/unbindable.conf"
timeout -k 5 10 "$MEDIATORD" --config "$TMP/unbindable.conf" >"$TMP/unbindable.out" 2>&1 &&
  rc=0 || rc=$?
[ $rc -eq 3 ] || fail "unbindable socket: exit status $rc, expected 3: $(cat "$TMP/unbindable.out")"
[ ! -e "$CONTROL" ] || fail "unbindable socket: control socket left behind"
log "unbindable-socket: ok ($(head -n 1 "$TMP/unbindable.out"))"

# renderer = egl-gbm with a render node that is not there: status 3, named.
cat >"$TMP/gbm.conf" <<EOF
[mediator]
control_socket = $CONTROL
state_dir = $TMP/state
renderer = egl-gbm
render_node = $TMP/no-such-renderD128
[domain a]
vtest_socket = $SOCK_A
EOF
timeout -k 5 10 "$MEDIATORD" --config "$TMP/gbm.conf" >"$TMP/gbm.out" 2>&1 && rc=0 || rc=$?
[ $rc -eq 3 ] || fail "missing render node: exit status $rc, expected 3: $(cat "$TMP/gbm.out")"
grep -q -F "$TMP/no-such-renderD128" "$TMP/gbm.out" ||
  fail "missing render node: message does not name it: $(cat "$TMP/gbm.out")"
[ ! -e "$SOCK_A" ] || fail "missing render node: domain socket left behind"
log "missing-render-node: ok ($(head -n 1 "$TMP/gbm.out"))"

log "all bad configs refused"
