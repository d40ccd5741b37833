#!/bin/bash
# SPDX-License-Identifier: MIT
# es2gears renders to an X window, so unlike glmark2 --off-screen it reads
# its frames back through TRANSFER_GET2 to present them: it must run
# through mediatord without any client error, and its groups are measured.
# The domain socket lives under /tmp, which mediator-exec's private /tmp
# hides: the client must still find it, on either Mesa. With
# GM_CLIENT_MESA=25 (a Mesa that reads VTEST_SOCKET_NAME) it runs a second
# time without mediator-exec, the variable alone naming the socket.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
# Debian installs it with an architecture suffix.
gears=$(compgen -G '/usr/bin/es2gears_x11*' | head -n 1) ||
  skip "es2gears_x11 is not installed (package mesa-utils-bin)"
setup_rendering budget 1

# es2gears runs until killed: 4 s of it, then timeout's status 124.
client_env GALLIUM_DRIVER=virpipe VTEST_SOCKET_NAME="$SOCK_A" \
  timeout -k 5 4 "$MEDIATOR_EXEC" --socket "$SOCK_A" -- "$gears" \
  >"$TMP/gears.log" 2>&1 &
gears_pid=$!
sleep 2
assert_client_mesa "$gears_pid"
wait "$gears_pid" && rc=0 || rc=$?
[ "$rc" -eq 124 ] || fail "es2gears ended with status $rc before it was stopped: $(tail -5 "$TMP/gears.log")"
wait_field "$DOMAIN_A" clients 0 10
! grep -q "closing the connection" "$MEDIATORD_LOG" ||
  fail "the worker refused es2gears: $(grep 'closing the connection' "$MEDIATORD_LOG")"
groups=$(domain_field "$DOMAIN_A" groups)
[ "$groups" -gt 100 ] || fail "only $groups groups from 4 s of es2gears"
log "ok: $groups groups"

if [ -n "$CLIENT_MESA_DIR" ]; then
  client_env GALLIUM_DRIVER=virpipe VTEST_SOCKET_NAME="$SOCK_A" \
    timeout -k 5 3 "$gears" >"$TMP/gears-direct.log" 2>&1 && rc=0 || rc=$?
  [ "$rc" -eq 124 ] ||
    fail "es2gears with VTEST_SOCKET_NAME alone ended with status $rc: $(tail -5 "$TMP/gears-direct.log")"
  wait_field "$DOMAIN_A" clients 0 10
  more=$(domain_field "$DOMAIN_A" groups)
  [ "$more" -gt $((groups + 50)) ] ||
    fail "es2gears with VTEST_SOCKET_NAME alone: $((more - groups)) groups in 3 s"
  ! grep -q "closing the connection" "$MEDIATORD_LOG" ||
    fail "the worker refused es2gears: $(grep 'closing the connection' "$MEDIATORD_LOG")"
  log "ok: $((more - groups)) groups with VTEST_SOCKET_NAME alone"
fi
