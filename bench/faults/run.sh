#!/bin/bash
# SPDX-License-Identifier: MIT
# Faults benchmark (not a test): what a hostile client in the infotainment
# domain costs the cluster (issue 22's attacks), measured against a run
# with no attack in the same invocation.
#
# Per ATTACK (ATTACKS, default all of them), a fresh mediatord (policy
# budget, max_inflight 1) with two domains:
#   cluster       safety, 60 Hz: guest-shim/cluster-client over vtest,
#                 SECONDS (default 30) of frames, alone for the first 2 s;
#   infotainment  normal, vtest and vhost-user sockets; the attack runs
#                 against it from the cluster's third second to its end:
#     none           nothing (the baseline: the host's own noise);
#     stop           long-draws (~9 ms groups), its worker stopped
#                    (SIGSTOP) while it holds work, again for each new
#                    client: a worker that never completes its grant;
#     slow-get       vtest: TRANSFER_GET of 64 MiB read at a trickle;
#     truncate       vtest: a RESOURCE_CREATE2 memfd truncated, then
#                    TRANSFER_PUT2 into it;
#     resources      vtest: resources and shared memory until refused;
#     display-flood  vhost-user: one kick of a SUBMIT_3D and 30,000
#                    GET_DISPLAY_INFO chains on one 16 MiB buffer;
#     ring-num       vhost-user: SET_VRING_NUM on a started ring, then a
#                    request (the out-of-bounds write of the review);
#     backing        vhost-user: resources attaching 262,144 backing
#                    entries each on the same pages, until refused;
#     destroy-busy   vhost-user: one kick of an expensive SUBMIT_3D (16
#                    blits of 2048x2048) and CTX_DESTROY of its context;
#     kill           long-draws, its worker killed (SIGKILL) while it
#                    draws; recovered when a new client is served;
#     quota          vtest: 64 textures of 64 MiB, cleared, until the
#                    domain's resource_memory_mb (512 MiB here) refuses;
#     deceive        long-draws --deceive 1000: a quad 1/1000 of the
#                    size its vertex shader draws it at, so its groups
#                    run far over what their commands predict;
#     cycles         vtest connect/handshake/close cycles, 250 a round;
#     restart        mediatord itself killed (SIGKILL) every 4 s and
#                    started again 100 ms later (as systemd's Restart=
#                    would), a long-draws client in infotainment
#                    throughout; recovered when the new one answers;
#   and issue 29's classes, a plain GL ES client each (no exploit):
#     escalating     long-draws whose trip count is a uniform (every
#                    group's stream alike), each group 4x the last, a new
#                    connection every 20 s round (so also reconnecting);
#     sustained      the same, 100 cheap groups, then ~1.2 s groups back
#                    to back, a new connection every 20 s round;
#     long-groups    honest long groups: long-draws, 8 draws of 960x540
#                    a group, 12 iterations (several periods a group
#                    here), which workers cut into pieces;
#     single-draws   honest single draws of ~1.5 periods: one full-screen
#                    draw a group, 8 iterations (~24 ms here), which
#                    workers cut into scissor tiles;
#     uncut-draws    the same inside an occlusion query (--query
#                    any-samples), which may not be cut: refused by the
#                    default oversize = refuse-untiled once past its
#                    young groups;
#     conn-flood     300 idle vtest connections to infotainment held for
#                    20 s a round (its max_clients, 16 here, refuses the
#                    rest);
#     mem-flood      8 infotainment clients each holding 6 textures of 64
#                    MiB (cleared) for 20 s a round;
#   and issue 30's compromised worker: attacker's code loaded into every
#   infotainment worker (tests/tools/worker-attack.c, LD_PRELOAD) acts
#   once its filter is on, while long-draws (1920x1080, 12 iterations)
#   renders through it, a new client each round:
#     worker-honest  no attack (the baseline for worker-lie);
#     worker-forge   writes its grant board (huge bounds, forged offers);
#     worker-claim   takes its board's offers and never reports them;
#     worker-hour    asks every group young with an hour's bound;
#     worker-lie     reports every group as 1 us (prediction, bound,
#                    measured time, not young);
#     worker-flood   sends valid records as fast as its channel takes them;
#     worker-tiocsti pushes a command line into every terminal it can reach;
#     worker-wx      makes memory writable and executable at once.
#   Each attack is repeated until the cluster's last frame.
# Prints per attack: cluster frames, misses (the client's count and
# mediatord's), frame latency p99 and max, the cluster's longest grant
# wait (request to dispatch, from the trace), the attack's rounds and their
# outcome (the attacker's most frequent report line, mediatord's watchdog
# lines, infotainment workers that died of a signal, warnings its workers
# logged), and mediatord's RSS and open descriptors before the attack and
# after it.
#
# Environment: SECONDS_PER_ATTACK (default 30), ATTACKS, CLUSTER_NICE (the
# cluster's worker_nice; default: the domain's default), BUILD_DIR (default
# build/), OUT (default bench-faults-out/: per attack the cluster's JSON,
# mediatord's log, the attacker's output and mediatord's trace of every
# group, NAME-trace.jsonl, to see where a late frame's time went).
set -euo pipefail

cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
SRCROOT=$PWD
SECONDS_PER_ATTACK=${SECONDS_PER_ATTACK:-30}
ATTACKS=${ATTACKS:-none stop kill slow-get truncate resources quota display-flood ring-num backing destroy-busy deceive cycles restart escalating sustained long-groups single-draws uncut-draws conn-flood mem-flood worker-honest worker-forge worker-claim worker-hour worker-lie worker-flood worker-tiocsti worker-wx}
OUT=${OUT:-$SRCROOT/bench-faults-out}
GM_NAME=bench
source scripts/lib/gm-common.sh
WORKER_ATTACK=${WORKER_ATTACK:-$BUILD_DIR/tests/libworker-attack.so}
HOST_PAUSES=${HOST_PAUSES:-$BUILD_DIR/bench/host-pauses}

gm_require_cmd jq jq
gm_ensure_built "$CLUSTER_CLIENT"
gm_ensure_built "$LONG_DRAWS"
gm_ensure_built "$VTEST_POKE"
gm_ensure_built "$VHOST_USER_FRONTEND"
gm_ensure_built "$HOST_PAUSES"

gm_tmpdir gm-faults
mkdir -p "$OUT"
CONTROL=$TMP/run/control.sock
IVI_VTEST=$TMP/run/ivi.vtest
IVI_VHOST=$TMP/run/ivi.vhost

start_mediatord() {
  rm -rf "$TMP/run" && mkdir -p "$TMP/run"
  gm_write_config "$TMP/run/mediatord.conf" \
    "[mediator]" "worker_pass_environment=LD_PRELOAD GM_WORKER_ATTACK*" \
    control_socket="$CONTROL" state_dir="$TMP/run/state" policy=budget \
    max_inflight=1 \
    "[domain cluster]" class=safety period_us=16667 budget_us=5000 \
    ${CLUSTER_NICE:+worker_nice=$CLUSTER_NICE} vtest_socket="$TMP/run/cluster.vtest" \
    "[domain infotainment]" class=normal period_us=16667 budget_us=11000 \
    vtest_socket="$IVI_VTEST" vhost_user_socket="$IVI_VHOST" worker_memory_mb=1024
  if [ "${ATTACK#worker-}" != "$ATTACK" ]; then
    # Attacker's code in every infotainment worker; the round says which attack.
    [ -e "$WORKER_ATTACK" ] || gm_die "not built: $WORKER_ATTACK"
    : >"$TMP/run/worker-attack"
    LD_PRELOAD=$WORKER_ATTACK GM_WORKER_ATTACK_FILE=$TMP/run/worker-attack \
      GM_WORKER_ATTACK_DOMAIN=infotainment gm_start_mediatord "$TMP/run/mediatord.conf" \
      "$TMP/run/mediatord.log"
  else
    gm_start_mediatord "$TMP/run/mediatord.conf" "$TMP/run/mediatord.log"
  fi
  echo "$MEDIATORD_PID" >"$TMP/run/mediatord.pid"
  gm_ctl trace start "$TMP/run/trace.jsonl" >/dev/null
}

# usage PID: "RSS kB, N fds" of process PID.
usage() {
  echo "$(awk '/^VmRSS:/ { print $2 }' "/proc/$1/status") kB, $(find "/proc/$1/fd" -mindepth 1 | wc -l) fds"
}

# The newest infotainment worker's pid, from mediatord's log.
ivi_worker() {
  sed -n 's/.*domain infotainment: client [0-9]* accepted, worker \([0-9]*\).*/\1/p' \
    "$TMP/run/mediatord.log" | tail -n 1
}

# ms_since T0: milliseconds from T0 (date +%s%N) to now.
ms_since() {
  echo $((($(date +%s%N) - $1) / 1000000))
}

# long_draws SECONDS ARGS...: a long-draws client of infotainment in the background ($! its pid).
long_draws() {
  local secs=$1
  shift
  GALLIUM_DRIVER=virpipe EGL_PLATFORM=surfaceless "$MEDIATOR_EXEC" --socket "$IVI_VTEST" -- \
    "$LONG_DRAWS" --seconds "$secs" "$@" >>"$TMP/run/attack.out" 2>&1 &
}

# A round of restart: mediatord killed, started again 100 ms later; recovered when it answers.
restart_once() {
  local pid t0 n
  [ -e "$TMP/run/ivi-client" ] || { long_draws "$SECONDS_PER_ATTACK" --iterations 2 && touch "$TMP/run/ivi-client"; }
  sleep 3
  pid=$(cat "$TMP/run/mediatord.pid")
  t0=$(date +%s%N)
  kill -KILL "$pid" 2>/dev/null || return 0
  gm_wait_gone 5 "$pid"
  sleep 0.1
  "$MEDIATORD" --config "$TMP/run/mediatord.conf" >>"$TMP/run/mediatord.log" 2>&1 &
  echo "$!" >"$TMP/run/mediatord.pid"
  for _ in $(seq 500); do
    "$MEDIATORCTL" --socket "$CONTROL" status >/dev/null 2>&1 && break
    sleep 0.01
  done
  n=$(ls "$TMP/run"/trace.jsonl* | wc -l)
  "$MEDIATORCTL" --socket "$CONTROL" trace start "$TMP/run/trace.jsonl.$n" >/dev/null 2>&1 || true
  echo "attack restart: serving again $(ms_since "$t0") ms after the kill," \
    "$(grep -c 'took over [0-9]* workers of' "$TMP/run/mediatord.log") restarts took workers over" \
    >>"$TMP/run/attack.out"
}

# attack_once NAME: one round of attack NAME against infotainment; returns when it is over.
attack_once() {
  case $1 in
  none) sleep 1 ;;
  stop)
    local client before
    before=$(ivi_worker)
    GALLIUM_DRIVER=virpipe EGL_PLATFORM=surfaceless "$MEDIATOR_EXEC" --socket "$IVI_VTEST" -- \
      "$LONG_DRAWS" --seconds 30 --iterations 2 >>"$TMP/run/attack.out" 2>&1 &
    client=$!
    sleep 1
    local w
    w=$(ivi_worker)
    if [ -n "$w" ] && [ "$w" != "$before" ]; then
      local t0
      t0=$(date +%s%N)
      kill -STOP "$w" 2>/dev/null || true
      gm_wait_gone 10 "$w"
      if ! gm_alive "$w"; then
        echo "attack stop: the stopped worker was gone after" \
          "$((($(date +%s%N) - t0) / 100000000))00 ms" >>"$TMP/run/attack.out"
      else
        echo "attack stop: the stopped worker was still there after 10 s" >>"$TMP/run/attack.out"
        kill -KILL "$w" 2>/dev/null || true
      fi
    fi
    kill -TERM "$client" 2>/dev/null || true
    wait "$client" 2>/dev/null || true
    ;;
  kill)
    local client before w t0
    before=$(ivi_worker)
    long_draws 30 --iterations 2
    client=$!
    sleep 1
    w=$(ivi_worker)
    if [ -n "$w" ] && [ "$w" != "$before" ]; then
      t0=$(date +%s%N)
      kill -KILL "$w" 2>/dev/null || true
      wait "$client" 2>/dev/null || true
      if "$VTEST_POKE" "$IVI_VTEST" handshake >/dev/null 2>&1; then
        echo "attack kill: worker killed, its client ended, a new client served $(ms_since "$t0") ms later" \
          >>"$TMP/run/attack.out"
      else
        echo "attack kill: no new client served after the kill" >>"$TMP/run/attack.out"
      fi
    fi
    kill -TERM "$client" 2>/dev/null || true
    wait "$client" 2>/dev/null || true
    ;;
  slow-get | truncate | resources)
    "$VTEST_POKE" "$IVI_VTEST" --attack "$1" >>"$TMP/run/attack.out" 2>&1 || true
    ;;
  quota)
    "$VTEST_POKE" "$IVI_VTEST" --attack textures >>"$TMP/run/attack.out" 2>&1 || true
    ;;
  deceive)
    long_draws 5 --iterations 2 --deceive 1000
    wait $! 2>/dev/null || true
    echo "attack deceive: $(grep -o 'long-draws: [0-9]* groups[^;]*' "$TMP/run/attack.out" | tail -n 1)" \
      >>"$TMP/run/attack.out"
    ;;
  cycles)
    local t0
    t0=$(date +%s%N)
    if "$VTEST_POKE" "$IVI_VTEST" connect-close 250 >/dev/null 2>&1; then
      echo "attack cycles: 250 connect/close cycles in $(ms_since "$t0") ms" >>"$TMP/run/attack.out"
    else
      echo "attack cycles: connect-close failed" >>"$TMP/run/attack.out"
    fi
    ;;
  restart) restart_once ;;
  escalating)
    long_draws 20 --size 1920x1080 --escalate 4 --iterations 12
    wait $! 2>/dev/null || true
    echo "attack escalating: one connection, $(grep -c 'killing worker' "$TMP/run/mediatord.log") workers killed so far" \
      >>"$TMP/run/attack.out"
    ;;
  sustained)
    long_draws 20 --size 1920x1080 --cheap 100 --iterations 400
    wait $! 2>/dev/null || true
    echo "attack sustained: one connection, $(grep -c 'killing worker' "$TMP/run/mediatord.log") workers killed so far" \
      >>"$TMP/run/attack.out"
    ;;
  long-groups | single-draws | uncut-draws)
    local args=(--draws 8 --size 960x540 --iterations 12)
    [ "$1" = long-groups ] || args=(--draws 1 --size 1920x1080 --iterations 8)
    [ "$1" != uncut-draws ] || args+=(--query any-samples)
    long_draws "$SECONDS_PER_ATTACK" "${args[@]}"
    wait $! 2>/dev/null || true
    echo "attack $1: $(grep -o 'long-draws: [0-9]* groups[^;]*' "$TMP/run/attack.out" | tail -n 1 || echo 'refused')" \
      >>"$TMP/run/attack.out"
    ;;
  conn-flood)
    timeout -k 5 20 "$VTEST_POKE" "$IVI_VTEST" hold-idle 300 >>"$TMP/run/attack.out" 2>&1 || true
    ;;
  mem-flood)
    local pokes=()
    for _ in $(seq 8); do
      timeout -k 5 20 "$VTEST_POKE" "$IVI_VTEST" hold-textures 6 >>"$TMP/run/attack.out" 2>&1 &
      pokes+=($!)
    done
    for p in "${pokes[@]}"; do wait "$p" 2>/dev/null || :; done
    echo "attack mem-flood: 8 clients of 6 x 64 MiB textures held" >>"$TMP/run/attack.out"
    ;;
  worker-*)
    # honest and lie render through the whole row (their groups and charge
    # compare); the others a new client every 10 s (a stopped worker's
    # client ends).
    local what=${1#worker-} secs=$((SECONDS_PER_ATTACK - 2))
    case $what in
    honest) what= ;;
    forge | claim | flood | tiocsti | wx) secs=10 ;;
    esac
    echo "${what:+$what:$((secs + 30))}" >"$TMP/run/worker-attack"
    long_draws "$secs" --size 1920x1080 --iterations 12
    wait $! 2>/dev/null || true
    echo "attack $1: $(grep -o 'long-draws: [0-9]* groups[^;]*' "$TMP/run/attack.out" | tail -n 1 || echo 'ended')" \
      >>"$TMP/run/attack.out"
    ;;
  display-flood | ring-num | backing | destroy-busy)
    "$VHOST_USER_FRONTEND" "$IVI_VHOST" --attack "$1" >>"$TMP/run/attack.out" 2>&1 || true
    ;;
  *) gm_die "unknown attack $1" ;;
  esac
}

# attack_loop NAME: attack_once NAME again and again until SIGTERM.
attack_loop() {
  trap 'exit 0' TERM
  while :; do
    attack_once "$1"
    sleep 0.2
  done
}

# one_attack NAME: the cluster under attack NAME; writes $OUT/NAME.json.
one_attack() {
  local name=$1 cluster_pid attack_pid stalls_pid before after
  ATTACK=$name
  start_mediatord
  : >"$TMP/run/attack.out"
  "$HOST_PAUSES" "$((SECONDS_PER_ATTACK + 10))" >"$OUT/$name-stalls.jsonl" &
  stalls_pid=$!
  gm_in_domain "$TMP/run/cluster.vtest" "$CLUSTER_CLIENT" --seconds "$SECONDS_PER_ATTACK" \
    --json /dev/fd/3 3>"$OUT/$name-cluster.json" >"$TMP/run/cluster.out" 2>&1 &
  cluster_pid=$!
  sleep 2
  before=$(usage "$MEDIATORD_PID")
  attack_loop "$name" &
  attack_pid=$!
  gm_track "$attack_pid"
  wait "$cluster_pid" || gm_die "$name: cluster-client failed: $(tail -3 "$TMP/run/cluster.out")"
  kill -TERM "$attack_pid" "$stalls_pid" 2>/dev/null || true
  wait "$attack_pid" "$stalls_pid" 2>/dev/null || true
  # restart replaced mediatord: the one running now is the last one started.
  MEDIATORD_PID=$(cat "$TMP/run/mediatord.pid")
  after=$(usage "$MEDIATORD_PID")
  gm_budgets >"$TMP/run/budgets.json"
  gm_ctl trace stop >/dev/null
  # Each mediatord's trace (a killed one's last line may be cut).
  cat "$TMP/run"/trace.jsonl* | jq -c -R 'fromjson? // empty' >"$OUT/$name-trace.jsonl"
  gm_assert_mediatord_alive
  gm_stop_mediatord || true
  rm -f "$TMP/run/ivi-client"
  cp "$TMP/run/mediatord.log" "$OUT/$name-mediatord.log"
  cp "$TMP/run/attack.out" "$OUT/$name-attack.out"
  local log=$OUT/$name-mediatord.log
  # The attacker's outcome: its most frequent "attack ..." line (each round prints one).
  local outcome
  outcome=$(grep '^attack [a-z-]*:' "$OUT/$name-attack.out" | sort | uniq -c | sort -rn | head -n 1 | sed 's/^ *//') || true
  jq -n --arg name "$name" --arg before "$before" --arg after "$after" --arg outcome "${outcome:--}" \
    --slurpfile c "$OUT/$name-cluster.json" --slurpfile b "$TMP/run/budgets.json" \
    --argjson rounds "$(grep -c '^attack [a-z-]*:' "$OUT/$name-attack.out" || true)" \
    --argjson watchdog "$(grep -c 'watchdog' "$log" || true)" \
    --argjson signalled "$(sed '/signal 15: shutting down/q' "$log" | grep -c 'domain infotainment: client [0-9]*: worker [0-9]* killed by signal' || true)" \
    --argjson warnings "$(grep -c 'mediator-worker: \(warning\|error\): domain infotainment' "$log" || true)" \
    --argjson md_misses "$(jq -s '[.[] | select(.type == "frame" and .domain == "cluster" and .missed and (.startup | not))] | length' "$OUT/$name-trace.jsonl")" \
    --argjson md_startup "$(jq -s '[.[] | select(.type == "frame" and .domain == "cluster" and .startup)] | length' "$OUT/$name-trace.jsonl")" \
    --argjson md_misses_before "$(jq -s '([.[] | select((has("type") | not) and .domain == "infotainment") | .request_ns] | min // infinite) as $first |
      [.[] | select(.type == "frame" and .domain == "cluster" and .missed and (.startup | not) and .release_ns < $first)] | length' "$OUT/$name-trace.jsonl")" \
    --argjson md_misses_stalled "$(jq -s --slurpfile s "$OUT/$name-stalls.jsonl" '[$s[]] as $p |
      [.[] | select(.type == "frame" and .domain == "cluster" and .missed and (.startup | not)) |
        ([.end_ns, .deadline_ns] | max) as $e | .release_ns as $r | select([$p[] | select(.start_ns < $e and .end_ns > $r)] | length > 0)] | length' "$OUT/$name-trace.jsonl")" \
    --argjson stalls "$(jq -s '{n: length, longest_ms: ([.[] | (.end_ns - .start_ns) / 1e6] | max // 0 | floor),
      system_pct: (if (map(.ticks) | add // 0) > 0 then (100 * (map(.system_ticks) | add) / (map(.ticks) | add) | floor) else 0 end)}' "$OUT/$name-stalls.jsonl")" \
    --argjson wait_us "$(jq -s '[.[] | select((has("type") | not) and .domain == "cluster") | (.dispatch_ns - .request_ns)] | max // 0 | . / 1000 | floor' "$OUT/$name-trace.jsonl")" \
    --argjson ivi_used_us "$(jq '[.domains[] | select(.name == "infotainment") | .used_us] | first // 0' "$TMP/run/budgets.json")" \
    --argjson underreported "$(jq '[.domains[] | select(.name == "infotainment") | .underreported // 0] | first // 0' "$TMP/run/budgets.json")" \
    --argjson cluster_killed "$(grep -c 'domain cluster: client [0-9]*: worker [0-9]* killed by signal [^1]' "$log" || true)" \
    --argjson over "$(jq -s '[.[] | select((has("type") | not) and .domain == "infotainment" and .bound_ns > 0)] |
      {groups: length, over_bound: ([.[] | select(.end_ns - .start_ns > .bound_ns)] | length)}' "$OUT/$name-trace.jsonl")" \
    '{attack: $name, frames: $c[0].frames, client_misses: $c[0].misses,
      mediatord_misses: $md_misses, mediatord_startup_frames: $md_startup, mediatord_misses_before_attack: $md_misses_before, mediatord_misses_in_host_stalls: $md_misses_stalled, host_stalls: $stalls.n, longest_host_stall_ms: $stalls.longest_ms, host_stalls_system_pct: $stalls.system_pct, max_grant_wait_us: $wait_us, ivi_groups: $over.groups, ivi_over_bound: $over.over_bound,
      p99_latency_us: $c[0].p99_latency_us, max_latency_us: $c[0].max_latency_us,
      ivi_used_us: $ivi_used_us, ivi_underreported: $underreported, cluster_workers_killed: $cluster_killed,
      rounds: $rounds, outcome: $outcome, watchdog_lines: $watchdog,
      ivi_workers_signalled: $signalled, ivi_worker_warnings: $warnings,
      mediatord_before: $before, mediatord_after: $after}' >"$OUT/$name.json"
}

echo "gpu-mediator faults benchmark ($(nproc) CPUs, llvmpipe): cluster at 60 Hz for ${SECONDS_PER_ATTACK} s per attack, policy budget"
printf '%-14s %6s %10s %7s %7s %7s %6s %8s %8s  %s\n' attack frames misses p99_ms max_ms wait_ms rounds watchdog signals \
  "mediatord RSS, fds: before -> after the attack"
for a in $ATTACKS; do
  one_attack "$a"
  jq -r '"\(.attack) \(.frames) \(.client_misses)/\(.mediatord_misses) \(.p99_latency_us / 1000 * 10 | floor / 10) \(.max_latency_us / 1000 * 10 | floor / 10) \(.max_grant_wait_us / 1000 * 10 | floor / 10) \(.rounds) \(.watchdog_lines) \(.ivi_workers_signalled) \(.mediatord_before) -> \(.mediatord_after)"' "$OUT/$a.json" |
    awk '{ printf "%-14s %6s %10s %7s %7s %7s %6s %8s %8s  ", $1, $2, $3, $4, $5, $6, $7, $8, $9;
      for (i = 10; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : "\n") }'
  jq -r '"  outcome: \(.outcome); infotainment worker warnings/errors logged: \(.ivi_worker_warnings); infotainment groups over their bound: \(.ivi_over_bound) of \(.ivi_groups)"' "$OUT/$a.json"
  jq -r '"  infotainment charged \(.ivi_used_us / 1000 | floor) ms for \(.ivi_groups) groups (reported short: \(.ivi_underreported)); cluster workers killed: \(.cluster_workers_killed)"' "$OUT/$a.json"
  jq -r '"  of mediatord'"'"'s misses, before the attacker'"'"'s first group: \(.mediatord_misses_before_attack); the cluster'"'"'s start-up frames, not judged: \(.mediatord_startup_frames)"' "$OUT/$a.json"
  jq -r '"  the host stalled a nice-0 probe \(.host_stalls) times (longest \(.longest_host_stall_ms) ms, \(.host_stalls_system_pct) % of their CPU time in the kernel); mediatord'"'"'s misses whose frame a stall overlapped: \(.mediatord_misses_in_host_stalls)"' "$OUT/$a.json"
done
echo "misses: the cluster client's own count / mediatord's (its traces' missed frames but the cluster's start-up: late frames alone in its first 30 periods, which its client does not time either); wait_ms: the cluster's longest grant wait; rounds: attacks made; signals: infotainment workers that died of a signal"
echo "host stalls: bench/host-pauses, a nice-0 process (the cluster client's priority) waking every 2 ms, woke over 30 ms late: for that long nothing of the cluster's priority ran"
echo "kept: $OUT/ATTACK{.json,-cluster.json,-mediatord.log,-attack.out,-trace.jsonl,-stalls.jsonl}"
