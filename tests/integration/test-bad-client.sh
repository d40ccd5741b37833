#!/bin/bash
# SPDX-License-Identifier: MIT
# A hostile client in one domain cannot hurt another domain: while
# glmark2-es2 renders in domain B, vtest-poke sends domain A garbage, a
# truncated message, a huge length, an unknown command and never-created
# resource handles. B's client finishes and scores, mediatord stays up and
# answers show-budgets, and domain A still serves a fresh client.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
setup_rendering budget 1

start_glmark b "$SOCK_B" $((12 + GLMARK_SLACK_S)) \
  -b build:duration=4 -b shading:duration=4 -b texture:duration=4
# Let B get going before the attack.
wait_field "$DOMAIN_B" clients 1 30

for mode in garbage truncated huge-length unknown-cmd bad-handle "garbage 7" "garbage 42"; do
  # shellcheck disable=SC2086 # "garbage 7" is mode and seed
  timeout -k 5 60 "$VTEST_POKE" "$SOCK_A" $mode >"$TMP/poke.out" 2>&1 && rc=0 || rc=$?
  sed "s/^/  vtest-poke $mode: /" "$TMP/poke.out" >&2
  [ "$rc" -eq 0 ] || fail "vtest-poke $mode: status $rc (the server misbehaved)"
  gm_assert_mediatord_alive
done
kill -0 "${CLIENT_PID[b]}" 2>/dev/null ||
  log "warning: B's client finished before the attack did (slow machine?)"

wait_glmark b
gm_assert_mediatord_alive
budgets_json >/dev/null
wait_field "$DOMAIN_A" clients 0 15
timeout -k 5 30 "$VTEST_POKE" "$SOCK_A" handshake >&2 ||
  fail "domain $DOMAIN_A does not serve a fresh client after the attack"
log "ok"
