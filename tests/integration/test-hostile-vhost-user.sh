#!/bin/bash
# SPDX-License-Identifier: MIT
# A hostile VM cannot stop the other domains' GPU nor take its worker's
# memory (issue 22). Domain "infotainment" serves a vhost-user "VM" played
# by tests/tools/vhost-user-frontend in its --attack modes while a
# well-behaved glmark2-es2 renders in the safety domain "cluster" over
# vtest. For each attack:
#  - display-flood: one kick of a SUBMIT_3D and 30,000 GET_DISPLAY_INFO
#    chains in one 16 MiB buffer; every chain answered, the floods refused;
#  - ring-num: SET_VRING_NUM on a started ring; the connection is closed
#    and the worker exits by itself (no signal), logged;
#  - backing: resources of 262,144 entries naming the same pages until
#    refused with ERR_OUT_OF_MEMORY; the device answers afterwards;
#  - huge-resources: textures of 64 MiB until refused with
#    ERR_OUT_OF_MEMORY at the domain's resource_memory_mb (B_RESOURCE_MB:
#    the fifth), logged; the device answers afterwards;
#  - contexts: guest contexts until refused with ERR_OUT_OF_MEMORY at the
#    domain's max_contexts_per_client (B_MAX_CONTEXTS), logged; a destroyed
#    context's place is given back;
#  - destroy-busy: an expensive SUBMIT_3D (16 blits of 2048x2048) and
#    CTX_DESTROY in one kick; the group is measured when the GPU is done
#    (the trace has it with its blits), not released unmeasured;
# and each time: mediatord keeps running; the safety domain's groups keep
# growing during the attack; none of its groups waited more than
# MAX_GRANT_WAIT_MS for its grant (the trace's dispatch_ns - request_ns);
# the attacked worker's VmRSS stays under MAX_WORKER_RSS_KIB (plus the
# quota's B_RESOURCE_MB for huge-resources).
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
[ -x "$VHOST_USER_FRONTEND" ] || fail "not built: $VHOST_USER_FRONTEND"
require_rendering

# A grant of the safety domain may wait for a period's budget and for the
# one group on the GPU: 1 s is 60 periods of 16.7 ms, far above either,
# and far below the 27 s one flood stalled every domain for.
MAX_GRANT_WAIT_MS=${MAX_GRANT_WAIT_MS:-1000}
# A worker with Mesa loaded is about 70-100 MiB; the backing limits let a
# VM add at most 32 MiB of entries and iovecs (vgpu_limits.h), its largest
# request 4 MiB more. 256 MiB leaves room for Mesa's variance, and is far
# below the 593 MiB the unlimited worker reached at 64 resources.
MAX_WORKER_RSS_KIB=${MAX_WORKER_RSS_KIB:-262144}
# Under ASan the shadow memory and quarantine double a worker's RSS (a
# measured 227 MiB at the backing attack's peak, 116 MiB without ASan).
if worker_sanitized; then
  MAX_WORKER_RSS_KIB=$((MAX_WORKER_RSS_KIB * 2))
fi

VHOST_B=$TMP/ivi.vhost
# Domain B's resource_memory_mb: four of attack huge-resources' 64 MiB textures.
B_RESOURCE_MB=256
# Domain B's max_contexts_per_client: far under a VM's table of 64.
B_MAX_CONTEXTS=4
start_xvfb
write_config budget 1
sed -i "s|^vtest_socket = $SOCK_B\$|&\nvhost_user_socket = $VHOST_B\nresource_memory_mb = $B_RESOURCE_MB\nmax_contexts_per_client = $B_MAX_CONTEXTS|" "$CONFIG"
grep -q "vhost_user_socket = $VHOST_B" "$CONFIG" || fail "config without the vhost socket"
start_mediatord
ctl trace start "$TMP/trace.jsonl" >&2 || fail "mediatorctl trace start failed"

# The safety domain's client renders for the whole test.
start_glmark safety "$SOCK_A" 600 --run-forever -b build
wait_groups_above() {
  local deadline=$((SECONDS + 30))
  until [ "$(domain_field "$DOMAIN_A" groups)" -gt "$1" ]; do
    [ $SECONDS -lt $deadline ] || fail "$DOMAIN_A renders no groups"
    sleep 0.2
  done
}
wait_groups_above 20

# The worker serving the attacking VM (a child of mediatord for domain B).
attacked_worker() {
  local pid
  for pid in $(pgrep -P "$MEDIATORD_PID" 2>/dev/null); do
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "--domain $DOMAIN_B .*vhost-user"; then
      echo "$pid"
      return 0
    fi
  done
  return 1
}

# run_attack NAME: the attack against domain B while the safety domain
# renders; sets GROUPS_DURING and PEAK_RSS_KIB.
run_attack() {
  local name=$1 before after pid rss front
  before=$(domain_field "$DOMAIN_A" groups)
  PEAK_RSS_KIB=0
  mkfifo "$TMP/hold-$name"
  FRONTEND_HOLD=1 timeout -k 5 200 "$VHOST_USER_FRONTEND" "$VHOST_B" --attack "$name" \
    <"$TMP/hold-$name" >"$TMP/attack-$name.out" 2>"$TMP/attack-$name.log" &
  front=$!
  gm_track "$front"
  exec 8>"$TMP/hold-$name"
  # Until the attack is over (held or exited), sample the worker's memory.
  while kill -0 "$front" 2>/dev/null && ! grep -q holding "$TMP/attack-$name.log"; do
    if pid=$(attacked_worker); then
      rss=$(rss_kib "$pid" 2>/dev/null || echo 0)
      [ "${rss:-0}" -le "$PEAK_RSS_KIB" ] || PEAK_RSS_KIB=$rss
    fi
    sleep 0.1
  done
  if pid=$(attacked_worker); then
    rss=$(rss_kib "$pid" 2>/dev/null || echo 0)
    [ "${rss:-0}" -le "$PEAK_RSS_KIB" ] || PEAK_RSS_KIB=$rss
  fi
  after=$(domain_field "$DOMAIN_A" groups)
  exec 8>&-
  wait "$front" || { cat "$TMP/attack-$name.log" >&2; fail "attack $name: the back-end did not hold"; }
  GROUPS_DURING=$((after - before))
  gm_assert_mediatord_alive
  [ "$GROUPS_DURING" -gt 0 ] || fail "attack $name: $DOMAIN_A rendered no group during it"
  # huge-resources makes the renderer hold what the quota lets it.
  limit_kib=$MAX_WORKER_RSS_KIB
  [ "$name" != huge-resources ] || limit_kib=$((limit_kib + B_RESOURCE_MB * 1024))
  [ "$PEAK_RSS_KIB" -le "$limit_kib" ] ||
    fail "attack $name: the attacked worker reached $PEAK_RSS_KIB KiB (limit $limit_kib)"
  log "$(cat "$TMP/attack-$name.out"); $DOMAIN_A groups during it: $GROUPS_DURING;" \
    "attacked worker peak VmRSS ${PEAK_RSS_KIB} KiB"
  wait_field "$DOMAIN_B" clients 0 15
  wait_groups_above "$after"
}

run_attack display-flood
grep -q "GET_DISPLAY_INFO: request buffers far larger than the command needs" "$MEDIATORD_LOG" ||
  fail "no log line about the flood's refused requests"
run_attack ring-num
grep -q "vhost-user SET_VRING_NUM: the ring is started" "$MEDIATORD_LOG" ||
  fail "no log line about SET_VRING_NUM on a started ring"
! grep -Eq "worker .*(signal|SIGSEGV|SIGBUS)" "$MEDIATORD_LOG" ||
  fail "a worker died of a signal: $(grep -E 'signal|SIGSEGV|SIGBUS' "$MEDIATORD_LOG" | head -3)"
run_attack backing
grep -q "RESOURCE_ATTACH_BACKING: the VM's backings would pass VGPU_MAX_VM_BACKING_ENTRIES" \
  "$MEDIATORD_LOG" || fail "no log line about the refused backing"
run_attack huge-resources
grep -q "RESOURCE_CREATE_3D: the domain's host memory quota for resources" "$MEDIATORD_LOG" ||
  fail "no log line about the refused texture"
grep -q "attack huge-resources: $((B_RESOURCE_MB / 64)) textures of 64 MiB created" \
  "$TMP/attack-huge-resources.out" ||
  fail "attack huge-resources: not refused at the quota: $(cat "$TMP/attack-huge-resources.out")"
run_attack contexts
grep -q "attack contexts: $B_MAX_CONTEXTS contexts created, the next refused 0x1201" \
  "$TMP/attack-contexts.out" ||
  fail "attack contexts: not refused at max_contexts_per_client: $(cat "$TMP/attack-contexts.out")"
grep -q "the VM holds its domain's max_contexts_per_client contexts" "$MEDIATORD_LOG" ||
  fail "no log line about the refused context"

run_attack destroy-busy
ctl trace stop >&2 || fail "mediatorctl trace stop failed"
assert_busy_measured destroy-busy "$TMP/trace.jsonl"
max_wait_us=$(jq -s --arg d "$DOMAIN_A" \
  '[.[] | select((has("type") | not) and .domain == $d) | (.dispatch_ns - .request_ns)] |
   (max // 0) / 1000 | floor' "$TMP/trace.jsonl")
traced=$(jq -s --arg d "$DOMAIN_A" '[.[] | select((has("type") | not) and .domain == $d)] | length' \
  "$TMP/trace.jsonl")
[ "$traced" -gt 0 ] || fail "the trace has no group of $DOMAIN_A"
log "$DOMAIN_A: $traced groups traced, longest grant wait ${max_wait_us} us"
[ "$max_wait_us" -le $((MAX_GRANT_WAIT_MS * 1000)) ] ||
  fail "a group of $DOMAIN_A waited ${max_wait_us} us for its grant (limit ${MAX_GRANT_WAIT_MS} ms)"

# The attacked domain still serves a well-behaved VM.
timeout -k 5 120 "$VHOST_USER_FRONTEND" "$VHOST_B" scenario 2>"$TMP/frontend-after.log" ||
  { cat "$TMP/frontend-after.log" >&2; fail "$DOMAIN_B no longer serves VMs after the attacks"; }
gm_assert_mediatord_alive
kill -0 "${CLIENT_PID[safety]}" 2>/dev/null || fail "the safety domain's glmark2 stopped"
gm_stop 5 "${CLIENT_PID[safety]}"
gm_stop_mediatord || fail "mediatord exited with an error"
log "ok"
