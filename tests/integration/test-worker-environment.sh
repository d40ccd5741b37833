#!/bin/bash
# SPDX-License-Identifier: MIT
# Workers start with a clean environment (issue 32;
# mediator/daemon/worker_env.h). mediatord started from a shell that
# exported a client's variables (GALLIUM_DRIVER=virpipe and
# VTEST_SOCKET_NAME, as the README's client instructions make easy) serves
# a client all the same, and its worker's environment holds what it always
# gets and what worker_pass_environment names (a name, a PREFIX*), nothing
# else of mediatord's. A worker that ends before its renderer is up is
# said so in the log, with where to look: here a config that passes
# GALLIUM_DRIVER on, whose workers' Mesa then cannot start.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
require_rendering
[ -x "$CLUSTER_CLIENT" ] || fail "not built: cluster-client (CLUSTER_CLIENT)"

# What a worker may hold: what it always gets (worker_env.h), what the
# config passes, and the shader cache's directory it sets itself.
ALLOWED='^(ASAN_OPTIONS|UBSAN_OPTIONS|LSAN_OPTIONS|MEDIATOR_FEATURE_DUMP|MEDIATOR_WORKER_TRY_FORBIDDEN|MESA_SHADER_CACHE_DIR|GM_PASSED|GM_PREFIX_[A-Z]*)='

# client_worker DOMAIN: the pid of the worker mediatord started last for DOMAIN (its log).
client_worker() {
  sed -n "s/^mediatord: info: domain $1: client [0-9]* accepted, worker \([0-9]*\)$/\1/p" \
    "$MEDIATORD_LOG" | tail -n 1
}

write_config budget 1
sed -i '/^\[mediator\]$/a worker_pass_environment = GM_PASSED GM_PREFIX_*' "$CONFIG"
GALLIUM_DRIVER=virpipe VTEST_SOCKET_NAME=$SOCK_A GM_SECRET=not-for-workers GM_PASSED=1 \
  GM_PASSEDX=2 GM_PREFIX_A=3 GM_PREFIX_B=4 start_mediatord
gm_in_domain --timeout 60 "$SOCK_A" "$CLUSTER_CLIENT" --frames 240 \
  --json /dev/fd/3 3>"$TMP/cluster.json" >"$TMP/cluster.log" 2>&1 &
CLUSTER_PID=$!
gm_track "$CLUSTER_PID"
wait_field "$DOMAIN_A" clients 1 30
worker=$(client_worker "$DOMAIN_A")
[ -n "$worker" ] || fail "no worker of $DOMAIN_A in the log"
tr '\0' '\n' <"/proc/$worker/environ" >"$TMP/worker.env" || fail "cannot read worker $worker's environment"
log "worker $worker's environment: $(cut -d= -f1 "$TMP/worker.env" | sort | tr '\n' ' ')"
! grep -Ev "$ALLOWED" "$TMP/worker.env" ||
  fail "worker $worker holds variables of mediatord's it was not given (above)"
for v in GM_PASSED=1 GM_PREFIX_A=3 GM_PREFIX_B=4; do
  grep -qx "$v" "$TMP/worker.env" || fail "worker $worker lacks $v, which worker_pass_environment names"
done
if worker_sanitized; then
  grep -q '^ASAN_OPTIONS=' "$TMP/worker.env" || fail "a sanitizer build's worker lacks ASAN_OPTIONS"
fi
wait "$CLUSTER_PID" || fail "cluster-client failed beside mediatord's GALLIUM_DRIVER: $(tail -3 "$TMP/cluster.log")"
[ "$(jq .frames "$TMP/cluster.json")" = 240 ] || fail "the cluster rendered $(jq .frames "$TMP/cluster.json") of 240 frames"
groups=$(domain_field "$DOMAIN_A" groups)
[ "$groups" -gt 200 ] || fail "only $groups groups of $DOMAIN_A"
log "a client rendered 240 frames ($groups groups) though mediatord had GALLIUM_DRIVER=virpipe"

# The same variable passed on: the worker ends before its renderer is up,
# and the log says so and where to look.
gm_stop_mediatord || fail "mediatord did not stop cleanly"
write_config budget 1
sed -i '/^\[mediator\]$/a worker_pass_environment = GALLIUM_DRIVER' "$CONFIG"
: >"$MEDIATORD_LOG"
GALLIUM_DRIVER=virpipe VTEST_SOCKET_NAME=$TMP/nosuch.sock start_mediatord
gm_in_domain --timeout 60 "$SOCK_B" "$CLUSTER_CLIENT" --frames 30 >"$TMP/doomed.log" 2>&1 && rc=0 || rc=$?
[ "$rc" -ne 0 ] || fail "a client rendered though its worker's Mesa was told to be virpipe"
wait_field "$DOMAIN_B" clients 0 15
grep -E "domain $DOMAIN_B: client [0-9]+: worker [0-9]+ ended before its renderer was up; its own lines above say why" \
  "$MEDIATORD_LOG" >&2 || fail "no log line says the worker ended before its renderer was up"
gm_assert_mediatord_alive
log "ok"
