#!/bin/bash
# SPDX-License-Identifier: MIT
# A worker that dies (SIGKILL) takes down only its own client: glmark2-es2
# runs in both domains, domain A's worker is killed, B's client finishes and
# scores, mediatord stays up and domain A's client count drops back to 0.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
setup_rendering budget 1

scenes=(-b build:duration=4 -b shading:duration=4 -b texture:duration=4)
# A first, alone, so that mediatord's only worker is A's.
start_glmark a "$SOCK_A" $((12 + GLMARK_SLACK_S)) "${scenes[@]}"
wait_field "$DOMAIN_A" clients 1 30
mapfile -t workers < <(pgrep -P "$MEDIATORD_PID")
[ ${#workers[@]} -eq 1 ] ||
  fail "expected one worker process of mediatord, found ${#workers[@]}: ${workers[*]}"
worker_a=${workers[0]}
log "domain $DOMAIN_A worker: pid $worker_a ($(tr '\0' ' ' <"/proc/$worker_a/cmdline"))"

start_glmark b "$SOCK_B" $((12 + GLMARK_SLACK_S)) "${scenes[@]}"
wait_field "$DOMAIN_B" clients 1 30
sleep 2 # both rendering
kill -KILL "$worker_a"
log "killed worker $worker_a"

# A's client loses its server; it must end (with an error) rather than hang.
wait "${CLIENT_PID[a]}" && rc=0 || rc=$?
log "glmark2 'a' ended with status $rc after its worker was killed"
{ [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ]; } || fail "glmark2 'a' hung after its worker was killed"

wait_field "$DOMAIN_A" clients 0 10
gm_assert_mediatord_alive
wait_glmark b
gm_assert_mediatord_alive
budgets_json >/dev/null
# The killed worker was reaped: no zombie children.
sleep 0.5
# shellcheck disable=SC2009 # counts process states, not names
zombies=$(ps -o stat= --ppid "$MEDIATORD_PID" | grep -c '^Z' || true)
[ "$zombies" -eq 0 ] || fail "mediatord has $zombies zombie children"
timeout -k 5 30 "$VTEST_POKE" "$SOCK_A" handshake >&2 ||
  fail "domain $DOMAIN_A does not serve a new client after its worker died"
log "ok"
