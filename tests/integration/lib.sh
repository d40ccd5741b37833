#!/bin/bash
# SPDX-License-Identifier: MIT
# What the integration tests share beyond scripts/lib/gm-common.sh (the
# library of the demo, the benchmarks and the tests, which this file
# sources: its gm_* functions are the tests' too). Each test sources this
# file, which
#  - checks the real prerequisites (exit 77, naming what is missing: the
#    common library's gm_missing skips here, its gm_die fails the test),
#  - makes a private temp dir $TMP holding the config, every socket, the
#    control socket, logs and traces (never an installed instance's paths),
#  - stops everything the test started at exit (the common library's
#    cleanups) and, when the test fails, prints the end of its logs.
#
# meson sets MEDIATORD, MEDIATORCTL, MEDIATOR_WORKER, MEDIATOR_EXEC,
# VTEST_POKE, TESTS_SRCDIR and the other programs' paths (tests/meson.build).
# Run by hand, they default to the binaries of $BUILD_DIR (default: build/
# at the top of the source tree). KEEP_TMP=1 keeps $TMP.
#
# Domains of the default config: "cluster" (safety) on $SOCK_A and
# "infotainment" (normal) on $SOCK_B.
#
# GM_CLIENT_MESA=25 runs the test clients (start_glmark, client_env) on Mesa
# 25 from bookworm-backports, unpacked beside the system's Mesa by
# scripts/mesa25-beside.sh into $GM_MESA25_DIR (default: that script's); the
# daemon and its workers keep the system's Mesa. Unset or 22: the system's.

set -euo pipefail

TEST_NAME=$(basename -- "$0" .sh)
GM_NAME=$TEST_NAME
TESTS_SRCDIR=${TESTS_SRCDIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)}
SRCROOT=$(cd -- "$TESTS_SRCDIR/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$SRCROOT/build}
# shellcheck source=scripts/lib/gm-common.sh
source "$SRCROOT/scripts/lib/gm-common.sh"

# Seconds a glmark2 run may take beyond its scenes before it counts as hung.
GLMARK_SLACK_S=${GLMARK_SLACK_S:-90}

# log MSG...: a timestamped line on stderr.
log() {
  gm_log "$@"
}

# skip MSG...: a real prerequisite is missing: exit 77 (meson's skip), saying which.
skip() {
  echo "SKIP: $TEST_NAME: $*" >&2
  exit 77
}

# fail MSG...: the test fails (exit 1).
fail() {
  FAIL_MESSAGE="FAIL: $TEST_NAME: $*"
  echo "$FAIL_MESSAGE" >&2
  exit 1
}

# The common library's errors fail the test; its missing prerequisites skip it.
gm_die() {
  fail "$@"
}
gm_missing() {
  skip "$@"
}

# require_cmd COMMAND PACKAGE: skip when a real prerequisite is missing.
require_cmd() {
  gm_require_cmd "$@"
}

# require_built: fails unless the programs every test may run are built.
require_built() {
  local f
  for f in "$MEDIATORD" "$MEDIATORCTL" "$MEDIATOR_WORKER" "$MEDIATOR_EXEC" "$VTEST_POKE"; do
    [ -x "$f" ] || fail "not built: $f"
  done
}

# The prerequisites of tests that render: a display server, a GL ES client
# and jq. start_xvfb also checks that mediator-exec can create a mount
# namespace (Mesa 22 has no setting for the vtest socket path).
require_rendering() {
  require_cmd Xvfb xvfb
  require_cmd glmark2-es2 glmark2-es2-x11
  require_cmd jq jq
  require_cmd pgrep procps
}

require_built

# CLIENT_ENV: NAME=value words for env(1) that select the clients' Mesa.
declare -a CLIENT_ENV=()
CLIENT_MESA_DIR=
case "${GM_CLIENT_MESA:-}" in
  "" | 22) ;;
  25)
    CLIENT_MESA_DIR=${GM_MESA25_DIR:-/var/cache/gpu-mediator/mesa-25}
    gm_mesa25_env "$CLIENT_MESA_DIR" ||
      skip "no Mesa 25 client libraries (scripts/mesa25-beside.sh needs the" \
        "bookworm-backports apt source and network once): $GM_MESA25_ERR"
    CLIENT_ENV=("${GM_MESA25_ENV[@]}")
    ;;
  *) fail "GM_CLIENT_MESA is '$GM_CLIENT_MESA': 22 (the system's) or 25" ;;
esac

# client_env COMMAND...: runs COMMAND with the clients' Mesa (GM_CLIENT_MESA).
client_env() {
  env ${CLIENT_ENV[@]+"${CLIENT_ENV[@]}"} "$@"
}

# assert_client_mesa PID: with GM_CLIENT_MESA=25, fails unless the running
# client PID has loaded its Mesa from the beside directory (a wrong
# environment would silently test the system's Mesa instead).
assert_client_mesa() {
  [ -n "$CLIENT_MESA_DIR" ] || return 0
  local pid=$1 child
  local -a todo=("$pid")
  # PID may be timeout's, and mediator-exec forks the client: look at it
  # and all its descendants.
  while [ ${#todo[@]} -gt 0 ]; do
    child=${todo[0]}
    todo=("${todo[@]:1}")
    grep -q "$CLIENT_MESA_DIR/.*libgallium" "/proc/$child/maps" 2>/dev/null && return 0
    mapfile -t -O ${#todo[@]} todo < <(pgrep -P "$child")
  done
  fail "client pid $pid has not loaded Mesa from $CLIENT_MESA_DIR"
}

gm_tmpdir "gm-$TEST_NAME"
SOCK_A=$TMP/cluster.vtest
SOCK_B=$TMP/ivi.vtest
CONTROL=$TMP/control.sock
CONFIG=$TMP/mediatord.conf
DOMAIN_A=cluster
DOMAIN_B=infotainment
MEDIATORD_LOG=$TMP/mediatord.log
declare -A CLIENT_PID=()
declare -A CLIENT_LOG=()

# show_logs: at exit, when the test fails, the end of mediatord's log and of
# every log in $TMP (cleanups run last in, first out: this one after
# everything the test started has stopped, before $TMP goes).
show_logs() {
  gm_failed || return 0
  gm_tail_logs 40 "$MEDIATORD_LOG" "$TMP"/*.log
  # Again after the logs: meson shows only a long log's last lines.
  [ -z "${FAIL_MESSAGE:-}" ] || echo "$FAIL_MESSAGE (repeated after the logs)" >&2
}
gm_on_exit show_logs

# no_filter_kills: at exit, a test that passed fails when a worker was
# killed by its system-call filter (the filter must let honest renderers
# live: issue 30); a test that makes one on purpose sets
# EXPECT_FILTER_KILL=1. Runs after the test's own cleanups, before
# show_logs.
no_filter_kills() {
  local line
  [ "$GM_EXIT_STATUS" -eq 0 ] && [ -z "${EXPECT_FILTER_KILL:-}" ] && [ -f "$MEDIATORD_LOG" ] ||
    return 0
  line=$(grep -m1 'killed by its filter' "$MEDIATORD_LOG") || return 0
  FAIL_MESSAGE="FAIL: $TEST_NAME: a worker was killed by its system-call filter: $line"
  echo "$FAIL_MESSAGE" >&2
  GM_EXIT_STATUS=1
}
gm_on_exit no_filter_kills

# worker_files_mark: notes the time from which worker_files_unchanged looks.
worker_files_mark() {
  WORKER_FILES_MARK=$TMP/worker-files.mark
  : >"$WORKER_FILES_MARK"
}

# worker_files_unchanged USER WHAT: fails when, since worker_files_mark, a
# file outside $TMP changed (its content, or its owner or mode) that a
# worker running as USER could have changed: one owned by USER, or a
# regular file anybody may write. A worker reaches nothing else, and its
# own files (its shader cache, its models) are in $TMP: the tests give
# mediatord a cache_dir and a state_dir there. Searches the root file
# system and the writable temporary ones (issue 30: "nothing outside the
# worker's own files changes").
worker_files_unchanged() {
  local uid changed
  uid=$(id -u "$1") || fail "$2: no user $1"
  changed=$(find / /tmp /var/tmp /dev/shm /run -xdev \
    \( -path "$TMP" -o -path /proc -o -path /sys \) -prune -o \
    \( -uid "$uid" -o \( -type f -perm -0002 \) \) \
    \( -newer "$WORKER_FILES_MARK" -o -cnewer "$WORKER_FILES_MARK" \) -print 2>/dev/null |
    sort -u | head -n 20)
  [ -z "$changed" ] || fail "$2: files outside the worker's own changed: $(echo $changed)"
  log "$2: no file outside $TMP that user $1 could write changed"
}

# keeper_pids: the keeper of this test's mediatord (its command line is mediatord's).
keeper_pids() {
  local p
  for p in $(pgrep -x mediatord-keep); do
    ! grep -qF -- "$CONFIG" "/proc/$p/cmdline" 2>/dev/null || echo "$p"
  done
}

# stop_keeper: kills this test's keeper (a cleanup for tests that restart mediatord).
stop_keeper() {
  local -a k=()
  mapfile -t k < <(keeper_pids)
  [ ${#k[@]} -eq 0 ] || kill -KILL "${k[@]}" 2>/dev/null || :
}

# start_xvfb: starts Xvfb on a free display (it picks one itself with
# -displayfd) and exports DISPLAY.
start_xvfb() {
  gm_start_xvfb 1024x768x24
  log "Xvfb pid $XVFB_PID on $DISPLAY"
  _probe_mediator_exec "/tmp/.X11-unix/X${DISPLAY#:}"
}

# _probe_mediator_exec SOCKET: mediator-exec needs a mount namespace; where
# the kernel or a container forbids one, that is a missing prerequisite.
_probe_mediator_exec() {
  local out rc
  [ -S "$1" ] || return 0
  out=$("$MEDIATOR_EXEC" --socket "$1" -- true 2>&1) && rc=0 || rc=$?
  if [ $rc -eq 125 ] && grep -q 'cannot create a mount namespace' <<<"$out"; then
    skip "no mount namespace for mediator-exec (needs root with CAP_SYS_ADMIN," \
      "or unprivileged user namespaces): $out"
  fi
  [ $rc -eq 0 ] || fail "mediator-exec --socket $1 -- true: status $rc: $out"
}

# write_config [POLICY [MAX_INFLIGHT]]: two domains, every path in $TMP
# (the shader caches too: a test starts cold, whatever other installs
# left in /var/cache/gpu-mediator).
write_config() {
  gm_write_config "$CONFIG" \
    "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" cache_dir="$TMP/cache" \
    policy="${1:-budget}" \
    max_inflight="${2:-1}" renderer=egl-surfaceless \
    "[domain $DOMAIN_A]" class=safety period_us=16667 budget_us="$(safety_budget_us)" \
    vtest_socket="$SOCK_A" \
    "[domain $DOMAIN_B]" class=normal period_us=16667 budget_us=12000 vtest_socket="$SOCK_B"
}

# start_mediatord: starts it on $CONFIG and waits until all its sockets
# exist; fails when it exits instead.
start_mediatord() {
  gm_start_mediatord "$CONFIG" "$MEDIATORD_LOG"
  log "mediatord pid $MEDIATORD_PID ready"
}

# setup_rendering POLICY MAX_INFLIGHT: what most client tests start with:
# their prerequisites, Xvfb, the two domains' config, mediatord.
setup_rendering() {
  require_rendering
  start_xvfb
  write_config "$1" "$2"
  start_mediatord
}

# ctl ARGS...: mediatorctl on this test's control socket, bounded in time.
ctl() {
  gm_ctl "$@"
}

# start_glmark NAME SOCKET SECONDS ARGS...: starts glmark2-es2 --off-screen
# with ARGS as a client of SOCKET in the background, killed after SECONDS.
# The pid is timeout's, which passes signals on to the client (mediator-exec
# execs it). VTEST_SOCKET_NAME names the socket's real path, as a user of a
# Mesa that reads it would set it: mediator-exec must point it at the socket
# in its private /tmp, which may hide that path.
start_glmark() {
  local name=$1 sock=$2 secs=$3
  shift 3
  CLIENT_LOG[$name]=$TMP/glmark-$name.log
  client_env GALLIUM_DRIVER=virpipe VTEST_SOCKET_NAME="$sock" \
    timeout -k 5 "$secs" "$MEDIATOR_EXEC" --socket "$sock" -- glmark2-es2 --off-screen "$@" \
    >"${CLIENT_LOG[$name]}" 2>&1 &
  CLIENT_PID[$name]=$!
  gm_track "$!"
  log "glmark2 '$name' pid $! on $(basename -- "$sock"): $*"
}

# wait_glmark NAME: waits for it; fails unless it exited 0 and printed a score.
wait_glmark() {
  local name=$1 rc
  wait "${CLIENT_PID[$name]}" && rc=0 || rc=$?
  [ $rc -eq 0 ] || fail "glmark2 '$name' exited with status $rc (log below)"
  grep -Eq 'glmark2 Score: [0-9]+' "${CLIENT_LOG[$name]}" ||
    fail "glmark2 '$name' printed no score"
  if [ -n "$CLIENT_MESA_DIR" ]; then
    grep -q 'GL_VERSION:.* Mesa 25\.' "${CLIENT_LOG[$name]}" ||
      fail "glmark2 '$name' did not run on Mesa 25: $(grep GL_VERSION "${CLIENT_LOG[$name]}")"
  fi
  log "glmark2 '$name': $(grep -Eo 'glmark2 Score: [0-9]+' "${CLIENT_LOG[$name]}")"
}

# run_glmark NAME SOCKET SECONDS ARGS...: in the foreground, must succeed.
run_glmark() {
  start_glmark "$@"
  wait_glmark "$1"
}

# budgets_json: the show-budgets --json object, checked to be valid JSON
# with every documented member (doc/protocols.md, "show-budgets").
budgets_json() {
  local out
  out=$(ctl show-budgets --json) || fail "mediatorctl show-budgets --json failed"
  jq -e '
    (.policy | type == "string") and (.domains | type == "array") and
    all(.domains[];
      (.name | type == "string") and (.class | type == "string") and
      ([.period_us, .budget_us, .deadline_us, .remaining_us, .used_us,
        .used_last_period_us, .predicted_us, .debt_us, .utilization, .clients,
        .contexts, .groups, .overruns, .deadline_misses]
       | all(type == "number")) and
      has("throttled") and has("timestamp_source"))' <<<"$out" >/dev/null ||
    fail "show-budgets --json is not the documented object: $out"
  printf '%s\n' "$out"
}

# domain_field DOMAIN FIELD: one member of one domain of show-budgets --json.
domain_field() {
  local json v
  json=$(budgets_json) || fail "show-budgets --json failed"
  v=$(gm_budgets_field "$1" "$2" "$json") || fail "jq failed"
  [ -n "$v" ] || fail "show-budgets has no domain '$1' or no field '$2'"
  printf '%s\n' "$v"
}

# wait_field DOMAIN FIELD VALUE SECONDS: waits until the field equals VALUE.
wait_field() {
  local deadline=$((SECONDS + $4)) v
  while :; do
    v=$(domain_field "$1" "$2")
    [ "$v" = "$3" ] && return 0
    [ $SECONDS -lt $deadline ] || fail "$1.$2 is $v, not $3, after $4 s"
    sleep 0.2
  done
}

# rss_kib PID: resident set size in KiB.
rss_kib() {
  awk '/^VmRSS:/ {print $2}' "/proc/$1/status"
}

fd_count() {
  find "/proc/$1/fd" -mindepth 1 -maxdepth 1 | wc -l
}

# assert_busy_measured ATTACK TRACE: the expensive group of the hostile
# tools' ATTACK (tests/tools/busy_blits.h: 16 blits) of domain B, whose
# context ended right after submitting it, was measured when the GPU was
# done (TRACE has it), not released unmeasured (mediatord's log).
assert_busy_measured() {
  local attack=$1 trace=$2 busy_us
  ! grep -q "released unmeasured" "$MEDIATORD_LOG" ||
    fail "$attack: a group was released unmeasured: $(grep 'released unmeasured' "$MEDIATORD_LOG")"
  busy_us=$(jq -s --arg d "$DOMAIN_B" \
    '[.[] | select((has("type") | not) and .domain == $d and (.cmds.blit // 0) == 16) |
     .measured_ns] | (max // 0) / 1000 | floor' "$trace")
  [ "$busy_us" -gt 0 ] ||
    fail "$attack: no measured group of 16 blits of $DOMAIN_B in the trace (abandoned unmeasured?)"
  log "$attack: the group of the ended context measured ${busy_us} us"
}

# traced_two_domain_run TRACE: with a trace started to TRACE, the 60 Hz
# cluster client (120 frames) in domain A and long-draws (2 s) in domain B,
# both to their end, and until their workers are gone (every record in).
# The trace stays open.
traced_two_domain_run() {
  local cluster
  ctl trace start "$1" >&2 || fail "trace start failed"
  gm_in_domain --timeout 60 "$SOCK_A" "$CLUSTER_CLIENT" --frames 120 >"$TMP/cluster.log" 2>&1 &
  cluster=$!
  gm_track "$cluster"
  gm_in_domain --timeout 60 "$SOCK_B" "$LONG_DRAWS" --seconds 2 >"$TMP/draws.log" 2>&1 ||
    fail "long-draws failed: $(tail -3 "$TMP/draws.log")"
  wait "$cluster" || fail "cluster-client failed: $(tail -3 "$TMP/cluster.log")"
  wait_field "$DOMAIN_A" clients 0 15
  wait_field "$DOMAIN_B" clients 0 15
}


# worker_sanitized: true when the worker under test is an AddressSanitizer
# build (its own code runs 2-3 times slower and holds more memory).
worker_sanitized() {
  # Not `ldd | grep -q`: grep -q leaves at the first match, and ldd,
  # still writing, gets SIGPIPE; under pipefail the pipeline then fails
  # (an ASan CI-like run, 2026-11-28: test-isolation judged frames there).
  [[ "$(ldd "$MEDIATOR_WORKER" 2>/dev/null)" == *libasan* ]]
}

# judged_here WHAT: true when this run judges verdicts that rest on the
# GPU times measured (WHAT names them: the cluster's missed frames, a MAPE
# ratio, scissor tiles cut); false for an AddressSanitizer build, whose run
# reports them (logged once per WHAT) and judges everything else. Its
# workers make each large allocation
# a fresh mapping and unmap it when freed (6.5 mmap, 8 munmap and 5.8
# madvise calls a glmark2 group, against 1, 3 and 0 in the plain build;
# 20 % of the host's CPU time in their page faults), and on these
# paravirtualized hosts that stalls the other processes too: the
# cluster's own groups, with no other domain's group on the GPU, took 22
# to 44 ms every half second while a normal domain's worker started
# (test-uncut-draw, 2026-11-28; 1.2 ms median, 5 ms at most in the plain
# build's run). No scheduling of GPU work changes that; the plain build's
# run judges them.
declare -A NOT_JUDGED_LOGGED=()
judged_here() {
  worker_sanitized || return 0
  [ -n "${NOT_JUDGED_LOGGED[$1]:-}" ] ||
    log "AddressSanitizer build: $1 reported, not judged (judged_here in lib.sh);" \
      "the plain build's run judges them"
  NOT_JUDGED_LOGGED[$1]=1
  return 1
}

# frames_judged: judged_here for the cluster's missed frames.
frames_judged() {
  judged_here "the cluster's missed frames"
}

# safety_budget_us: the safety domain's budget in the tests' configs: 4 ms
# a 16.7 ms period, what cluster-client's frames take with room to spare
# (its groups beside test-pieces' blits: median 1.4 ms, 90th percentile
# 3.1 ms). An AddressSanitizer worker takes 2.5 times as long for the same
# frames (3.5 and 6.2 ms, 2026-11-28), so a 4 ms budget would put the
# cluster past its entitlement, and a safety domain past it loses its
# frames' protection (doc/design.md): 10 ms there, the same margin.
safety_budget_us() {
  if worker_sanitized; then echo 10000; else echo 4000; fi
}

# steal_ticks: CPU time the hypervisor gave to other guests so far, and all
# CPU time (jiffies), for steal_percent.
steal_ticks() {
  awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print $9, t }' /proc/stat
}

# steal_percent BEFORE AFTER: the share (%) of CPU time taken for other
# guests between two steal_ticks.
steal_percent() {
  awk -v a="$1" -v b="$2" 'BEGIN { split(a, x); split(b, y);
    printf "%d", 100 * (y[1] - x[1]) / (y[2] - x[2] > 0 ? y[2] - x[2] : 1) }'
}

# safety_misses BEFORE AFTER: $DOMAIN_A's deadline misses by mediatord's
# count between two show-budgets --json answers.
safety_misses() {
  echo $(($(gm_budgets_field "$DOMAIN_A" deadline_misses "$2") -
    $(gm_budgets_field "$DOMAIN_A" deadline_misses "$1")))
}

# cluster_beside LABEL FN: a 60 Hz cluster client (cluster-client) in the
# safety domain, past its start-up; FN runs beside it, traced; then, once
# the normal domain has no client left, as long again with nothing beside
# it. Sets, by mediatord's count: flood_misses (the cluster's misses while
# FN ran), quiet_misses (in as long after it), frames (the cluster's
# frames while FN ran), took (FN's seconds), wait_us (the cluster's
# longest grant wait while FN ran, from the trace), beside_j0 and
# beside_j1 (show-budgets --json before and after FN). Keeps
# $TMP/cluster-LABEL.{json,log} and $TMP/trace-LABEL.jsonl.
cluster_beside() {
  local label=$1 fn=$2 t0 j2 j3 pid
  gm_in_domain --timeout 300 "$SOCK_A" "$CLUSTER_CLIENT" --seconds 250 \
    --json /dev/fd/3 3>"$TMP/cluster-$label.json" >"$TMP/cluster-$label.log" 2>&1 &
  pid=$!
  gm_track "$pid"
  sleep 2 # past the cluster's start-up (shader compilation)
  ctl trace start "$TMP/trace-$label.jsonl" >&2 || fail "trace start failed"
  beside_j0=$(budgets_json)
  t0=$SECONDS
  "$fn"
  took=$((SECONDS - t0))
  beside_j1=$(budgets_json)
  ctl trace stop >&2 || fail "trace stop failed"
  wait_field "$DOMAIN_B" clients 0 30
  j2=$(budgets_json)
  sleep "$took"
  j3=$(budgets_json)
  gm_stop 5 "$pid"
  wait "$pid" 2>/dev/null || :
  flood_misses=$(safety_misses "$beside_j0" "$beside_j1")
  quiet_misses=$(safety_misses "$j2" "$j3")
  frames=$(($(gm_budgets_field "$DOMAIN_A" frames "$beside_j1") -
    $(gm_budgets_field "$DOMAIN_A" frames "$beside_j0")))
  wait_us=$(jq -s '[.[] | select(.domain == "'"$DOMAIN_A"'" and .type == null)
    | (.dispatch_ns - .request_ns)] | max // 0 | . / 1000 | floor' "$TMP/trace-$label.jsonl")
}

# beside_noise ATTEMPTS FN ALLOWANCE: runs FN 1, FN 2, ... until one
# returns 0. Each FN N sets flood_misses (the safety domain's misses during
# the attack) and quiet_misses (in as long right after it, the host's own
# noise measured the same way, as test-restart does) and returns non-zero
# when the attack cost more than the noise plus ALLOWANCE. The noise comes
# in bursts (another guest, another test run on the shared cores), so an
# attempt that fails is run again; after ATTEMPTS failures the test fails.
# Where frames are not judged (frames_judged), FN runs once and its misses
# are logged. Sets attempt_n, the number of attempts run.
beside_noise() {
  local attempts=$1 fn=$2 allowance=$3
  if ! frames_judged; then
    attempt_n=1
    "$fn" 1 ||
      log "attempt 1: the cluster missed $flood_misses frames by mediatord's count during" \
        "the attack, $quiet_misses in as long after it: not judged in this build"
    return 0
  fi
  for attempt_n in $(seq "$attempts"); do
    "$fn" "$attempt_n" && return 0
    [ "$attempt_n" -lt "$attempts" ] ||
      fail "the cluster missed $flood_misses frames by mediatord's count during the attack," \
        "$quiet_misses in as long after it (allowed $allowance more), in all $attempts attempts"
    log "attempt $attempt_n: more misses during the attack than after it: again"
  done
}

# start_stamped_cluster SECS: cluster-client in domain A for SECS seconds in
# the background (CLUSTER_PID), a progress line a second, each stamped with
# the time it was read into $TMP/cluster.log ($TMP/cluster.json: its summary).
start_stamped_cluster() {
  gm_in_domain --timeout $(($1 + 60)) "$SOCK_A" "$CLUSTER_CLIENT" --seconds "$1" \
    --progress-s 1 --json /dev/fd/3 3>"$TMP/cluster.json" 2>"$TMP/cluster.err" |
    while IFS= read -r line; do printf '%s %s\n' "$EPOCHREALTIME" "$line"; done >"$TMP/cluster.log" &
  CLUSTER_PID=$!
  gm_track "$CLUSTER_PID"
}

# cluster_window A B: "frames misses seconds" of start_stamped_cluster's
# progress between its last line at or before time A and its first at or after B.
cluster_window() {
  awk -v a="$1" -v b="$2" '
    / GM-CLUSTER progress / {
      for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      if ($1 <= a) { f0 = v["frames"]; m0 = v["misses"]; t0 = $1 }
      if ($1 >= b && !f1) { f1 = v["frames"]; m1 = v["misses"]; t1 = $1 }
    }
    END { printf "%d %d %.2f\n", f1 - f0, m1 - m0, t1 - t0 }' "$TMP/cluster.log"
}

# start_flood NAME SIZE SECS: long-draws in domain B in the background,
# one draw of one iteration per group at SIZE for SECS seconds
# (FLOOD_PID; $TMP/NAME.json, $TMP/NAME.log).
start_flood() {
  gm_in_domain --timeout $(($3 + 60)) "$SOCK_B" "$LONG_DRAWS" --iterations 1 --size "$2" \
    --seconds "$3" --json /dev/fd/3 3>"$TMP/$1.json" >"$TMP/$1.log" 2>&1 &
  FLOOD_PID=$!
  gm_track "$FLOOD_PID"
}

# assert_stopped WHEN WORKER...: within 5 s the WORKERs are gone, and within
# 5 s more this test's keeper; fails naming WHEN ("after mediatord stopped").
assert_stopped() {
  local when=$1 w
  shift
  gm_wait_gone 5 "$@"
  for w in "$@"; do
    ! gm_alive "$w" || fail "worker $w still runs $when"
  done
  for _ in $(seq 50); do [ -n "$(keeper_pids)" ] || break; sleep 0.1; done
  [ -z "$(keeper_pids)" ] || fail "the keeper still runs $when"
}
