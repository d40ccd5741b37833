#!/bin/bash
# Shared helpers of the integration tests. Each test sources this file, which
#  - checks the real prerequisites (exit 77, naming what is missing),
#  - makes a private temp dir $TMP holding the config, every socket, the
#    control socket, logs and traces (never an installed instance's paths),
#  - installs a cleanup trap that stops everything the test started.
#
# meson sets MEDIATORD, MEDIATORCTL, MEDIATOR_WORKER, MEDIATOR_EXEC,
# VTEST_POKE and TESTS_SRCDIR (tests/meson.build). Run by hand, they
# default to the binaries of $BUILD_DIR (default: build/ at the top of the
# source tree). KEEP_TMP=1 keeps $TMP.
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
TESTS_SRCDIR=${TESTS_SRCDIR:-$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)}
SRCROOT=$(cd -- "$TESTS_SRCDIR/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$SRCROOT/build}
MEDIATORD=${MEDIATORD:-$BUILD_DIR/daemon/mediatord}
MEDIATORCTL=${MEDIATORCTL:-$BUILD_DIR/tools/mediatorctl}
MEDIATOR_WORKER=${MEDIATOR_WORKER:-$BUILD_DIR/worker/mediator-worker}
MEDIATOR_EXEC=${MEDIATOR_EXEC:-$BUILD_DIR/tools/mediator-exec}
VTEST_POKE=${VTEST_POKE:-$BUILD_DIR/tests/vtest-poke}
export MEDIATOR_WORKER

# Seconds a glmark2 run may take beyond its scenes before it counts as hung.
GLMARK_SLACK_S=${GLMARK_SLACK_S:-90}

log() {
  echo "[$(date +%T)] $TEST_NAME: $*" >&2
}

skip() {
  echo "SKIP: $TEST_NAME: $*" >&2
  exit 77
}

fail() {
  echo "FAIL: $TEST_NAME: $*" >&2
  exit 1
}

# require_cmd COMMAND PACKAGE: skip when a real prerequisite is missing.
require_cmd() {
  command -v "$1" >/dev/null 2>&1 || skip "'$1' not found (Debian package $2)"
}

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
    _mesa_env=$("$SRCROOT/scripts/mesa25-beside.sh" --env "$CLIENT_MESA_DIR" 2>&1) ||
      skip "no Mesa 25 client libraries (scripts/mesa25-beside.sh needs the" \
        "bookworm-backports apt source and network once): $_mesa_env"
    while read -r _word _assignment; do
      [ "$_word" = export ] || continue
      _assignment=${_assignment/=\'/=}
      CLIENT_ENV+=("${_assignment%\'}")
    done <<<"$_mesa_env"
    [ ${#CLIENT_ENV[@]} -gt 0 ] || fail "mesa25-beside.sh --env printed no environment"
    unset _mesa_env _word _assignment
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
    todo+=($(pgrep -P "$child"))
  done
  fail "client pid $pid has not loaded Mesa from $CLIENT_MESA_DIR"
}

# Socket paths must fit sun_path (108 bytes): keep $TMP short.
TMP=$(mktemp -d /tmp/gm-"$TEST_NAME".XXXXXX)
SOCK_A=$TMP/cluster.vtest
SOCK_B=$TMP/ivi.vtest
CONTROL=$TMP/control.sock
CONFIG=$TMP/mediatord.conf
DOMAIN_A=cluster
DOMAIN_B=infotainment
MEDIATORD_PID=
MEDIATORD_LOG=$TMP/mediatord.log
XVFB_PID=
declare -a STARTED_PIDS=()
declare -A CLIENT_PID=()
declare -A CLIENT_LOG=()

_kill_pids() {
  local pid sig=$1
  shift
  for pid in "$@"; do
    kill "-$sig" "$pid" 2>/dev/null || true
  done
}

_wait_gone() {
  local pid deadline=$((SECONDS + $1))
  shift
  for pid in "$@"; do
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
      sleep 0.1
    done
  done
}

cleanup() {
  local rc=$? workers=() printed_mediatord=0
  set +e
  if [ ${#STARTED_PIDS[@]} -gt 0 ]; then
    _kill_pids TERM "${STARTED_PIDS[@]}"
    _wait_gone 5 "${STARTED_PIDS[@]}"
    _kill_pids KILL "${STARTED_PIDS[@]}"
  fi
  if [ -n "$MEDIATORD_PID" ] && kill -0 "$MEDIATORD_PID" 2>/dev/null; then
    mapfile -t workers < <(pgrep -P "$MEDIATORD_PID")
    kill -TERM "$MEDIATORD_PID"
    _wait_gone 10 "$MEDIATORD_PID"
    kill -KILL "$MEDIATORD_PID" 2>/dev/null
    [ ${#workers[@]} -gt 0 ] && _kill_pids KILL "${workers[@]}"
  fi
  if [ -n "$XVFB_PID" ]; then
    kill -TERM "$XVFB_PID" 2>/dev/null
    _wait_gone 5 "$XVFB_PID"
    kill -KILL "$XVFB_PID" 2>/dev/null
  fi
  wait 2>/dev/null
  if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
    local f
    for f in "$MEDIATORD_LOG" "$TMP"/*.log; do
      [ -s "$f" ] || continue
      [ "$f" != "$MEDIATORD_LOG" ] || [ "$printed_mediatord" = 0 ] || continue
      printed_mediatord=1
      echo "----- $f (last 40 lines) -----" >&2
      tail -n 40 "$f" >&2
    done
  fi
  if [ "${KEEP_TMP:-0}" = 1 ]; then
    echo "$TEST_NAME: kept $TMP" >&2
  else
    rm -rf -- "$TMP"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# start_xvfb: starts Xvfb on a free display (it picks one itself with
# -displayfd) and exports DISPLAY.
start_xvfb() {
  local fifo=$TMP/xvfb.displayfd n=
  mkfifo "$fifo"
  Xvfb -displayfd 5 -nolisten tcp -noreset -screen 0 1024x768x24 \
    5>"$fifo" >"$TMP/xvfb.log" 2>&1 &
  XVFB_PID=$!
  if ! read -r -t 15 n <"$fifo" || [ -z "$n" ]; then
    fail "Xvfb did not report a display within 15 s"
  fi
  export DISPLAY=":$n"
  log "Xvfb pid $XVFB_PID on $DISPLAY"
  _probe_mediator_exec "/tmp/.X11-unix/X$n"
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

# write_config [POLICY [MAX_INFLIGHT]]: two domains, every path in $TMP.
write_config() {
  local policy=${1:-budget} max_inflight=${2:-1}
  mkdir -p "$TMP/state"
  cat >"$CONFIG" <<EOF
[mediator]
control_socket = $CONTROL
state_dir = $TMP/state
policy = $policy
max_inflight = $max_inflight
renderer = egl-surfaceless

[domain $DOMAIN_A]
class = safety
period_us = 16667
budget_us = 4000
vtest_socket = $SOCK_A

[domain $DOMAIN_B]
class = normal
period_us = 16667
budget_us = 12000
vtest_socket = $SOCK_B
EOF
}

# start_mediatord: starts it on $CONFIG and waits until all its sockets
# exist; fails when it exits instead.
start_mediatord() {
  local deadline=$((SECONDS + 20)) s rc
  "$MEDIATORD" --config "$CONFIG" >"$MEDIATORD_LOG" 2>&1 &
  MEDIATORD_PID=$!
  for s in "$SOCK_A" "$SOCK_B" "$CONTROL"; do
    while [ ! -S "$s" ]; do
      if ! kill -0 "$MEDIATORD_PID" 2>/dev/null; then
        wait "$MEDIATORD_PID" && rc=0 || rc=$?
        MEDIATORD_PID=
        fail "mediatord exited with status $rc before creating $s"
      fi
      [ $SECONDS -lt $deadline ] || fail "mediatord did not create $s within 20 s"
      sleep 0.1
    done
  done
  log "mediatord pid $MEDIATORD_PID ready"
}

# stop_mediatord: SIGTERM, then returns its exit status (0 expected).
stop_mediatord() {
  local pid=$MEDIATORD_PID rc
  [ -n "$pid" ] || fail "mediatord is not running"
  kill -TERM "$pid"
  _wait_gone 15 "$pid"
  if kill -0 "$pid" 2>/dev/null; then
    fail "mediatord did not exit within 15 s of SIGTERM"
  fi
  MEDIATORD_PID=
  wait "$pid" && rc=0 || rc=$?
  return $rc
}

assert_mediatord_alive() {
  [ -n "$MEDIATORD_PID" ] && kill -0 "$MEDIATORD_PID" 2>/dev/null ||
    fail "mediatord is gone"
  # A zombie counts as gone, too.
  local state
  state=$(awk '/^State:/ {print $2}' "/proc/$MEDIATORD_PID/status" 2>/dev/null || echo X)
  [ "$state" != Z ] && [ "$state" != X ] || fail "mediatord has exited (state $state)"
}

# ctl ARGS...: mediatorctl on this test's control socket, bounded in time.
ctl() {
  timeout -k 5 20 "$MEDIATORCTL" --socket "$CONTROL" "$@"
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
  STARTED_PIDS+=("$!")
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
# with every documented member (DESIGN.md "Interfaces").
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
  local v
  v=$(budgets_json | jq -r --arg d "$1" --arg f "$2" \
    '.domains[] | select(.name == $d) | .[$f]') || fail "jq failed"
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
