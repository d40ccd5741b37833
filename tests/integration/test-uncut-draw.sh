#!/bin/bash
# SPDX-License-Identifier: MIT
# A long draw that no worker may cut into scissor tiles (issue 29, item 2:
# "where a draw cannot be cut, the default protects the safety domain and
# show-budgets says which context and why"). guest-shim/long-draws draws
# one full-screen quad per group, about two cluster periods long on these
# machines, inside an occlusion query (--query any-samples): tiles would
# count its samples once per tile, so the worker runs it whole and says so
# in its grant requests. A 60 Hz cluster client draws in the safety domain
# throughout, at the default config (pieces on, oversize =
# refuse-untiled). Asserts: mediatord refuses such a group once its
# context is past its young groups (the client is disconnected long before
# its 60 s, unschedulable counted), show-budgets names the domain, client,
# context and "a query is counting", and the cluster misses, by mediatord's
# count, at most 3 frames more than in as long with no such client right
# after (beside_noise); mediatord lives on. The same client without the
# query is cut into tiles and runs to its end, not refused.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering
require_cmd jq jq
[ -x "$CLUSTER_CLIENT" ] || fail "cluster-client not built"
[ -x "$LONG_DRAWS" ] || fail "long-draws not built"
ALLOWANCE=3
SECONDS_MAX=60

setup_rendering budget 1

# draw_long NAME SECONDS ARGS...: long-draws in the normal domain, one draw of
# two periods a group; its exit status in $NAME.rc.
draw_long() {
  local name=$1 seconds=$2 rc=0
  shift 2
  gm_in_domain --timeout $((seconds + 30)) "$SOCK_B" "$LONG_DRAWS" --seconds "$seconds" \
    --size 1920x1080 --draws 1 --iterations 12 "$@" >"$TMP/$name.log" 2>&1 || rc=$?
  echo "$rc" >"$TMP/$name.rc"
}

# uncut N: the uncut client, then show-budgets as it stands after it.
uncut() {
  draw_long "query-$UNCUT_N" "$SECONDS_MAX" --query any-samples
  ctl show-budgets >"$TMP/show-budgets-$UNCUT_N.txt" || fail "show-budgets failed"
}

# attempt N: the cluster draws beside the uncut client, then as long alone.
attempt() {
  local n=$1 refused
  UNCUT_N=$n
  cluster_beside "uncut-$n" uncut
  refused=$(($(gm_budgets_field "$DOMAIN_B" unschedulable "$beside_j1") -
    $(gm_budgets_field "$DOMAIN_B" unschedulable "$beside_j0")))
  log "attempt $n: the uncut client ran $took s (exit $(cat "$TMP/query-$n.rc")), $refused groups" \
    "refused; cluster missed $flood_misses of $frames frames by mediatord's count, $quiet_misses" \
    "in as long after"
  grep '^uncut:' "$TMP/show-budgets-$n.txt" | while read -r line; do log "show-budgets: $line"; done
  [ "$(cat "$TMP/query-$n.rc")" -ne 0 ] && [ "$took" -lt "$SECONDS_MAX" ] ||
    fail "the uncut client was not refused: it ran $took s, exit $(cat "$TMP/query-$n.rc")"
  [ "$refused" -ge 1 ] || fail "mediatord counted no unschedulable group"
  grep -Eq "^uncut: $DOMAIN_B: [0-9]+ groups .*last: client [0-9]+ context [0-9]+ .*a query is counting$" \
    "$TMP/show-budgets-$n.txt" || fail "show-budgets does not name the uncut context and why"
  gm_assert_mediatord_alive
  [ "$flood_misses" -le $((quiet_misses + ALLOWANCE)) ]
}

beside_noise 3 attempt "$ALLOWANCE"

# Without the query the same draws are cut into tiles: the client runs to its end.
gm_in_domain --timeout 200 "$SOCK_A" "$CLUSTER_CLIENT" --seconds 60 >"$TMP/cluster-tiles.log" 2>&1 &
CLUSTER_PID=$!
gm_track "$CLUSTER_PID"
sleep 2
u0=$(domain_field "$DOMAIN_B" unschedulable)
draw_long tiles 10
gm_stop 5 "$CLUSTER_PID"
wait "$CLUSTER_PID" 2>/dev/null || :
[ "$(cat "$TMP/tiles.rc")" -eq 0 ] || fail "long-draws without the query failed: $(tail -3 "$TMP/tiles.log")"
[ "$(domain_field "$DOMAIN_B" unschedulable)" -eq "$u0" ] ||
  fail "groups cut into tiles were refused as unschedulable"
gm_assert_mediatord_alive
log "ok"
