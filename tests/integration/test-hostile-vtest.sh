#!/bin/bash
# SPDX-License-Identifier: MIT
# A vtest client that attacks its own worker cannot stop another domain's
# GPU work (issue 22). While glmark2-es2 renders in the safety domain A,
# vtest-poke --attack runs against domain B's socket, one attack at a time:
#  - slow-get: SUBMIT_CMD, then a refused 64 MiB TRANSFER_GET read at a
#    trickle: the worker must go on reporting its completions (mediatord
#    waits for them before it grants again), send only zeros, and drop the
#    client once it takes nothing for VTEST_OUTBUF_STALL_MS (on a Unix
#    socket a 4 KiB/s reader frees send space only once it has read a whole
#    queued skb, so the worker usually sees no progress for 10 s and drops
#    it while it still trickles: either end is fine);
#  - truncate: the memfd of RESOURCE_CREATE2 cannot be truncated (sealed),
#    and TRANSFER_PUT2 after the attempt is served;
#  - resources: shared memory and resource count are refused at their limits
#    (vtest_limits.h);
#  - close-busy: an expensive SUBMIT_CMD (16 blits of 2048x2048) and the
#    connection closed at once: the group is measured when the GPU is done
#    (the trace has it with its blits), not released unmeasured;
#  - textures: 64 textures of 64 MiB without shared memory, each cleared
#    (4 GiB of host memory asked for): domain B's clients' resources may
#    take B_RESOURCE_MB (resource_memory_mb), so the texture past it is
#    refused (the worker's log names the quota, the connection closes at
#    texture B_RESOURCE_MB / 64 + 1), and B's worker's private memory
#    (VmData) grows by at most B_MEMORY_MB (worker_memory_mb, the
#    backstop; its RSS limit is that, not HOSTILE_RSS_LIMIT_MIB).
# For each: vtest-poke exits 0 (the attack was refused and a fresh client is
# served), mediatord keeps running, no worker of B dies of a signal (but
# for textures, where the host GL driver may fail on an allocation the
# limit refused: that worker's death is its own), A's
# group count grows during the attack, and B's workers' RSS stays under
# HOSTILE_RSS_LIMIT_MIB. Over all attacks, A's longest grant wait
# (dispatch_ns - request_ns in the trace) stays under HOSTILE_MAX_WAIT_MS.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"

# Seconds the slow reader trickles before it stops reading altogether.
SLOW_GET_S=${HOSTILE_SLOW_GET_S:-20}
# A worker with llvmpipe and a client's context measures ~150 MiB; the
# attacks may add the 1 GiB of shared memory only if the client writes it,
# which they do not: 512 MiB is their cost plus a wide margin.
RSS_LIMIT_MIB=${HOSTILE_RSS_LIMIT_MIB:-512}
# Domain B's worker_memory_mb: what a worker needs (~150 MiB) and the
# attacks' buffers, with room for AddressSanitizer's allocator (its
# quarantine alone keeps up to 256 MiB of freed memory).
B_MEMORY_MB=768
# Domain B's resource_memory_mb: four of the attack's 64 MiB textures.
B_RESOURCE_MB=256
# Longest grant wait of the safety domain: before the fix, 59.5 s.
MAX_WAIT_MS=${HOSTILE_MAX_WAIT_MS:-1000}

require_rendering
start_xvfb
write_config budget 1
sed -i "/^\[domain $DOMAIN_B\]/a worker_memory_mb = $B_MEMORY_MB\nresource_memory_mb = $B_RESOURCE_MB" "$CONFIG"
start_mediatord
trace=$TMP/trace.jsonl
ctl trace start "$trace" >&2 || fail "mediatorctl trace start failed"

# The safety domain renders through every attack (slow-get takes SLOW_GET_S
# plus the server's 10 s stall time; the others seconds).
glmark_s=$((SLOW_GET_S + 60))
start_glmark a "$SOCK_A" $((glmark_s + GLMARK_SLACK_S)) -b build:duration=$glmark_s
wait_field "$DOMAIN_A" clients 1 30

# b_workers: the pids of domain B's live workers.
b_workers() {
  pgrep -P "$MEDIATORD_PID" -f -- "--domain $DOMAIN_B( |$)" || true
}

# sample_rss OUT: until killed, writes the largest VmRSS (KiB) of B's
# workers to OUT, and the growth of a worker's VmData (KiB, from its first
# sample in its sandbox) to OUT.data.
sample_rss() {
  local out=$1 max=0 grown=0 pid rss data
  local -A first=()
  echo 0 >"$out.data"
  while :; do
    for pid in $(b_workers); do
      rss=$(rss_kib "$pid" 2>/dev/null) || continue
      [ -n "$rss" ] && [ "$rss" -gt "$max" ] && max=$rss && echo "$max" >"$out"
      # From its first sample in its sandbox (NoNewPrivs 1, set right after
      # its RLIMIT_DATA, which counts on top of what it had mapped then, a
      # sanitizer's shadow too: sandbox.c); a sample taken before the
      # sanitizer mapped its shadow counted TiBs of growth (an ASan CI run).
      data=$(awk '/^VmData:/ { d = $2 } /^NoNewPrivs:/ { n = $2 } END { if (n == 1) print d }' \
        "/proc/$pid/status" 2>/dev/null) || continue
      [ -n "$data" ] || continue
      first[$pid]=${first[$pid]:-$data}
      [ $((data - first[$pid])) -gt "$grown" ] && grown=$((data - first[$pid])) &&
        echo "$grown" >"$out.data"
    done
    sleep 0.1
  done
}

declare -A WINDOW_START=() WINDOW_END=()
attack() {
  local name=$1 rc groups_before groups_after rss_kib sampler
  shift
  echo 0 >"$TMP/rss-$name"
  sample_rss "$TMP/rss-$name" &
  sampler=$!
  gm_track "$sampler"
  groups_before=$(domain_field "$DOMAIN_A" groups)
  timeout -k 5 $((SLOW_GET_S + 60)) "$VTEST_POKE" "$SOCK_B" --attack "$name" "$@" \
    >"$TMP/attack-$name.out" 2>&1 && rc=0 || rc=$?
  # vtest-poke prints its start and end on the trace's clock (CLOCK_MONOTONIC).
  read -r WINDOW_START[$name] WINDOW_END[$name] < <(awk '/^attack window ns:/ {print $4, $5}' \
    "$TMP/attack-$name.out") || fail "attack $name: vtest-poke printed no window"
  groups_after=$(domain_field "$DOMAIN_A" groups)
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  sed "s/^/  vtest-poke --attack $name: /" "$TMP/attack-$name.out" >&2
  gm_assert_mediatord_alive
  kill -0 "${CLIENT_PID[a]}" 2>/dev/null || fail "attack $name: A's client ended during it"
  [ "$groups_after" -gt "$groups_before" ] ||
    fail "attack $name: A's groups did not grow ($groups_before -> $groups_after)"
  [ "$rc" -eq 0 ] || fail "attack $name: vtest-poke status $rc (the server misbehaved)"
  rss_kib=$(cat "$TMP/rss-$name")
  # textures asks for memory on purpose: its bound is the memory limit (below).
  [ "$name" = textures ] || [ "$rss_kib" -lt $((RSS_LIMIT_MIB * 1024)) ] ||
    fail "attack $name: a worker of $DOMAIN_B reached $((rss_kib / 1024)) MiB RSS (limit $RSS_LIMIT_MIB)"
  if [ "$name" != textures ] &&
    grep -E "domain $DOMAIN_B: client [0-9]+: worker [0-9]+ killed by signal" "$MEDIATORD_LOG"; then
    fail "attack $name: a worker of $DOMAIN_B died of a signal"
  fi
  log "attack $name: A's groups $groups_before -> $groups_after" \
    "($(((groups_after - groups_before) * 1000000000 / (WINDOW_END[$name] - WINDOW_START[$name]))) /s);" \
    "B's largest worker RSS $((rss_kib / 1024)) MiB"
}

attack slow-get "$SLOW_GET_S"
grep -q "pending reply bytes for" "$MEDIATORD_LOG" ||
  fail "attack slow-get: no log line of the worker dropping the stalled client"
attack truncate
attack resources
grep -q "shared memory limit reached" "$MEDIATORD_LOG" ||
  fail "attack resources: no log line of the shared memory limit"
grep -q "resource limit reached" "$MEDIATORD_LOG" ||
  fail "attack resources: no log line of the resource limit"
attack close-busy
attack textures
grown=$(($(cat "$TMP/rss-textures.data") / 1024))
[ "$grown" -le "$B_MEMORY_MB" ] ||
  fail "attack textures: a worker of $DOMAIN_B grew by $grown MiB, its limit is $B_MEMORY_MB MiB"
# The quota refuses the fifth texture: the worker says so and closes the connection.
grep -q "would pass the domain's host memory quota (resource_memory_mb $B_RESOURCE_MB" \
  "$MEDIATORD_LOG" || fail "attack textures: no log line of the host memory quota"
closed_at=$(sed -n 's/^attack textures: connection closed at texture \([0-9]*\) .*/\1/p' \
  "$TMP/attack-textures.out")
[ "$closed_at" = $((B_RESOURCE_MB / 64 + 1)) ] ||
  fail "attack textures: the connection closed at texture '${closed_at}', not at $((B_RESOURCE_MB / 64 + 1)) (64 MiB each)"
log "attack textures: refused at texture $closed_at by the quota; B's worker grew by $grown MiB"

# Stop A's client: the attacks are over.
gm_stop 5 "${CLIENT_PID[a]}"
ctl trace stop >&2 || fail "mediatorctl trace stop failed"
gm_assert_mediatord_alive

# A's longest grant wait within each attack's window.
for name in slow-get truncate resources close-busy textures; do
  wait_ms=$(jq -s --arg d "$DOMAIN_A" --argjson t0 "${WINDOW_START[$name]}" \
    --argjson t1 "${WINDOW_END[$name]}" '
      [.[] | select((has("type") | not) and .domain == $d and .request_ns >= $t0
                    and .request_ns <= $t1) | (.dispatch_ns - .request_ns)]
      | if length == 0 then -1 else (max / 1000000) end' "$trace")
  [ "$wait_ms" != -1 ] || fail "attack $name: the trace has no group of $DOMAIN_A in its window"
  log "attack $name: A's longest grant wait ${wait_ms} ms"
  jq -e --argjson w "$wait_ms" --argjson m "$MAX_WAIT_MS" -n '$w < $m' >/dev/null ||
    fail "attack $name: A waited ${wait_ms} ms for a grant (limit $MAX_WAIT_MS ms)"
done

assert_busy_measured close-busy "$trace"

timeout -k 5 30 "$VTEST_POKE" "$SOCK_B" handshake >&2 ||
  fail "domain $DOMAIN_B does not serve a fresh client after the attacks"
log "ok"
