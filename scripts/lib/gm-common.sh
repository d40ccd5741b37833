# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034 # its variables are for the sourcing scripts
# scripts/lib/gm-common.sh: what the demo, the benchmarks and the integration
# tests share: where the build and its programs are, a temp dir and the
# cleanups that run at exit, a virtual X display, mediatord started on a
# config and waited for, GL clients run in a domain, show-budgets' JSON,
# messages. scripts/demo.sh, bench/*/run.sh and tests/integration/lib.sh
# source it (bash). Sourcing defines variables and functions and starts
# nothing; everything works under set -euo pipefail.
#
# Programs: BUILD_DIR (default build/ at the top of the source tree, or what
# the environment or the sourcing script set before) and MEDIATORD,
# MEDIATORCTL, MEDIATOR_WORKER (exported: mediatord runs it),
# MEDIATOR_EXEC, MEDIATOR_SIM, MEDIATOR_CALIBRATE, VTEST_POKE,
# VHOST_USER_FRONTEND, CLUSTER_CLIENT, LONG_DRAWS, VM_GPU (the back-end
# libvirt starts per VM, gpu-mediator-vm-gpu): each the one in
# BUILD_DIR unless the environment names it (meson's test environment
# does: tests/meson.build).
#
# Messages start with GM_NAME (default: the script's file name without
# .sh). Errors go through gm_die (the message on stderr, exit 1) and
# missing prerequisites through gm_missing (gm_die, pointing at
# scripts/install-deps.sh): a script may redefine either, as the tests do
# (fail, and skip with exit status 77).
#
# Cleanups: gm_on_exit registers a command for the script's exit (the first
# call traps EXIT, TERM and INT); they run last in, first out, so that what
# was started last stops first and the temp dir goes last. gm_tmpdir,
# gm_track, gm_start_xvfb and gm_start_mediatord register theirs.

[ -z "${GM_COMMON_SOURCED:-}" ] || return 0
GM_COMMON_SOURCED=1

GM_SRCROOT=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd)
GM_NAME=${GM_NAME:-$(basename -- "$0" .sh)}

BUILD_DIR=${BUILD_DIR:-$GM_SRCROOT/build}
MEDIATORD=${MEDIATORD:-$BUILD_DIR/mediator/daemon/mediatord}
MEDIATORCTL=${MEDIATORCTL:-$BUILD_DIR/mediator/tools/mediatorctl}
MEDIATOR_WORKER=${MEDIATOR_WORKER:-$BUILD_DIR/mediator/worker/mediator-worker}
MEDIATOR_EXEC=${MEDIATOR_EXEC:-$BUILD_DIR/mediator/tools/mediator-exec}
MEDIATOR_SIM=${MEDIATOR_SIM:-$BUILD_DIR/mediator/tools/mediator-sim}
MEDIATOR_CALIBRATE=${MEDIATOR_CALIBRATE:-$BUILD_DIR/mediator/tools/calibrate/mediator-calibrate}
VTEST_POKE=${VTEST_POKE:-$BUILD_DIR/tests/vtest-poke}
VHOST_USER_FRONTEND=${VHOST_USER_FRONTEND:-$BUILD_DIR/tests/vhost-user-frontend}
CLUSTER_CLIENT=${CLUSTER_CLIENT:-$BUILD_DIR/guest-shim/cluster-client}
LONG_DRAWS=${LONG_DRAWS:-$BUILD_DIR/guest-shim/long-draws}
VM_GPU=${VM_GPU:-$BUILD_DIR/mediator/launcher/gpu-mediator-vm-gpu}
export MEDIATOR_WORKER

TMP=${TMP:-}
CONTROL=${CONTROL:-}
MEDIATORD_PID=
XVFB_PID=
GM_EXIT_STATUS=0
declare -a GM_CLEANUPS=()
declare -a GM_PIDS=()
declare -a GM_MESA25_ENV=()
GM_MESA25_ERR=

# --- messages ----------------------------------------------------------------

# gm_say MSG...: MSG on stderr, after the script's name.
gm_say() {
  echo "$GM_NAME: $*" >&2
}

# gm_log MSG...: gm_say with the time of day in front.
gm_log() {
  echo "[$(date +%T)] $GM_NAME: $*" >&2
}

# gm_die MSG...: says MSG and exits 1 (a sourcing script may redefine it).
gm_die() {
  gm_say "$@"
  exit 1
}

# gm_missing MSG...: a prerequisite is missing: gm_die (the tests redefine it to skip).
gm_missing() {
  gm_die "$*; scripts/install-deps.sh installs what is missing"
}

# gm_require_cmd COMMAND PACKAGE: gm_missing unless COMMAND is on PATH.
gm_require_cmd() {
  command -v "$1" >/dev/null 2>&1 || gm_missing "'$1' not found (Debian package $2)"
}

# gm_tail_logs LINES FILE...: the last LINES lines of each non-empty FILE, once each, on stderr.
gm_tail_logs() {
  local lines=$1 f
  local -A seen=()
  shift
  for f in "$@"; do
    if [ ! -s "$f" ] || [ -n "${seen[$f]:-}" ]; then
      continue
    fi
    seen[$f]=1
    echo "----- $f (last $lines lines) -----" >&2
    tail -n "$lines" -- "$f" >&2
  done
}

# --- exit and cleanups -------------------------------------------------------

# gm_on_exit COMMAND [ARGS...]: runs COMMAND at exit, before the cleanups registered earlier.
gm_on_exit() {
  local line
  printf -v line '%q ' "$@"
  GM_CLEANUPS+=("$line")
  if [ -z "${_gm_trapped:-}" ]; then
    _gm_trapped=1
    trap _gm_exit EXIT
    trap 'exit 143' TERM
    trap 'exit 130' INT
  fi
}

# _gm_exit: the EXIT trap: runs the cleanups (errors ignored), keeps the exit status.
_gm_exit() {
  GM_EXIT_STATUS=$?
  set +eu
  local i
  for ((i = ${#GM_CLEANUPS[@]} - 1; i >= 0; i--)); do
    eval "${GM_CLEANUPS[i]}"
  done
  exit "$GM_EXIT_STATUS"
}

# gm_failed: in a cleanup, true when the script exits with a failure (not 0, not 77: a skip).
gm_failed() {
  [ "$GM_EXIT_STATUS" -ne 0 ] && [ "$GM_EXIT_STATUS" -ne 77 ]
}

# gm_tmpdir NAME [--keep-on-failure]: TMP=/tmp/NAME.XXXXXX, removed at exit unless KEEP_TMP=1 (or, with the option, the script fails).
gm_tmpdir() {
  # Socket paths must fit sun_path (108 bytes): keep TMP short.
  TMP=$(mktemp -d "/tmp/$1.XXXXXX")
  # Workers run as the worker user (doc/design.md, "Workers' rights"): the
  # state directories and traces under TMP must be within their reach.
  chmod 0755 "$TMP"
  gm_on_exit _gm_remove_tmp "$TMP" "${2:-}"
}

# gm_state_dir DIR: creates mediatord's state directory DIR as a package
# would: owned by the worker user, where workers keep their learned models
# (mediatord leaves a state directory it did not create as it is).
gm_state_dir() {
  mkdir -p -- "$1"
  if [ "$(id -u)" = 0 ] && getent passwd gpu-mediator >/dev/null; then
    chown gpu-mediator: -- "$1"
  fi
}

# gm_worker_dir DIR: creates DIR where workers, which run as the worker
# user, may write (feature dumps: MEDIATOR_FEATURE_DUMP).
gm_worker_dir() {
  mkdir -p "$1"
  chmod 0777 "$1"
}

_gm_remove_tmp() {
  if [ "${KEEP_TMP:-0}" = 1 ] || { [ "$2" = --keep-on-failure ] && gm_failed; }; then
    gm_say "kept $1"
  else
    rm -rf -- "$1"
  fi
}

# --- processes ---------------------------------------------------------------

# gm_alive PID: true while PID runs (a zombie counts as gone).
gm_alive() {
  local state
  kill -0 "$1" 2>/dev/null || return 1
  state=$(awk '/^State:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
  [ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# gm_wait_gone SECONDS PID...: waits until no PID runs, SECONDS at most in all.
gm_wait_gone() {
  local deadline=$((SECONDS + $1)) pid
  shift
  for pid in "$@"; do
    while gm_alive "$pid" && [ $SECONDS -lt $deadline ]; do
      sleep 0.1
    done
  done
}

# gm_tree PID: PID and its descendants, one a line, parents first.
gm_tree() {
  local child
  echo "$1"
  for child in $(pgrep -P "$1" 2>/dev/null); do
    gm_tree "$child"
  done
}

# gm_stop SECONDS PID...: SIGTERM to each PID and its descendants, SIGKILL to those left after SECONDS.
gm_stop() {
  local secs=$1 pid
  local -a all=()
  shift
  for pid in "$@"; do
    mapfile -t -O ${#all[@]} all < <(gm_tree "$pid")
  done
  [ ${#all[@]} -gt 0 ] || return 0
  # kill fails when every pid is gone already: not an error here (set -e).
  kill -TERM "${all[@]}" 2>/dev/null || :
  gm_wait_gone "$secs" "${all[@]}"
  kill -KILL "${all[@]}" 2>/dev/null || :
  return 0
}

# gm_track PID...: stops each PID (a background job of this shell) with its descendants at exit, if it still runs.
gm_track() {
  if [ -z "${_gm_tracking:-}" ]; then
    _gm_tracking=1
    gm_on_exit _gm_stop_jobs 5 GM_PIDS
  fi
  GM_PIDS+=("$@")
}

# _gm_stop_jobs SECONDS ARRAY: gm_stop on those pids of the array named ARRAY that are still running jobs of this shell.
# (A job that has ended is out of `jobs -p`: its pid, maybe reused by now, is left alone.)
_gm_stop_jobs() {
  local -n _pids=$2
  local pid
  local -a running=() live=()
  mapfile -t running < <(jobs -p)
  for pid in ${_pids[@]+"${_pids[@]}"}; do
    [[ " ${running[*]} " == *" $pid "* ]] && live+=("$pid")
  done
  [ ${#live[@]} -eq 0 ] || gm_stop "$1" "${live[@]}"
}

# gm_wait_path TEST PATH SECONDS [PID NAME [LOG]]: waits until [ TEST PATH ] (-S: a socket); dies after SECONDS, or when PID (NAME, output in LOG) exits first.
gm_wait_path() {
  local op=$1 path=$2 secs=$3 pid=${4:-} name=${5:-} log=${6:-} rc
  local deadline=$((SECONDS + secs))
  while ! test "$op" "$path"; do
    if [ -n "$pid" ] && ! gm_alive "$pid"; then
      wait "$pid" 2>/dev/null && rc=0 || rc=$?
      gm_die "$name exited with status $rc before creating $path$(_gm_output_end "$log")"
    fi
    [ $SECONDS -lt $deadline ] ||
      gm_die "${name:-nothing} did not create $path within $secs s$(_gm_output_end "$log")"
    sleep 0.1
  done
}

# _gm_output_end [LOG]: "; its output ends:" and LOG's last lines, for a message; nothing without LOG.
_gm_output_end() {
  [ -n "${1:-}" ] && [ -s "$1" ] || return 0
  echo "; its output ends:"
  tail -n 5 -- "$1" | sed 's/^/  /'
}

# --- build -------------------------------------------------------------------

# gm_build [--quiet]: sets BUILD_DIR up unless it has a build.ninja, and builds it (--quiet: no ninja progress).
gm_build() {
  [ -f "$BUILD_DIR/build.ninja" ] || meson setup "$BUILD_DIR" >/dev/null
  if [ "${1:-}" = --quiet ]; then
    ninja -C "$BUILD_DIR" >/dev/null
  else
    ninja -C "$BUILD_DIR"
  fi
}

# gm_ensure_built FILE...: gm_build --quiet when a FILE is not there (executable) yet.
gm_ensure_built() {
  local f
  for f in "$@"; do
    [ -x "$f" ] && continue
    gm_say "building in $BUILD_DIR"
    gm_build --quiet
    return
  done
}

# gm_qemu_major: the major version of qemu-system-x86_64; empty when there is none.
gm_qemu_major() {
  qemu-system-x86_64 --version 2>/dev/null |
    sed -n 's/^QEMU emulator version \([0-9]*\)\..*/\1/p'
}

# gm_mesa25_env DIR: GM_MESA25_ENV=(NAME=value...) giving a client Mesa 25 from DIR (scripts/mesa25-beside.sh --env); else returns 1, its output in GM_MESA25_ERR.
gm_mesa25_env() {
  local out word assignment
  GM_MESA25_ENV=()
  out=$("$GM_SRCROOT/scripts/mesa25-beside.sh" --env "$1" 2>&1) || {
    GM_MESA25_ERR=$out
    return 1
  }
  # Lines "export NAME='value'": keep NAME=value.
  while read -r word assignment; do
    [ "$word" = export ] || continue
    assignment=${assignment/=\'/=}
    GM_MESA25_ENV+=("${assignment%\'}")
  done <<<"$out"
  [ ${#GM_MESA25_ENV[@]} -gt 0 ] || {
    GM_MESA25_ERR="mesa25-beside.sh --env printed no environment: $out"
    return 1
  }
}

# --- X display ---------------------------------------------------------------

# gm_start_xvfb SCREEN: Xvfb with screen SCREEN (WxHxDEPTH) on a display it finds free (-displayfd), log $TMP/xvfb.log; exports DISPLAY.
gm_start_xvfb() {
  local fifo=$TMP/xvfb.displayfd n=
  mkfifo "$fifo"
  Xvfb -displayfd 5 -nolisten tcp -noreset -screen 0 "$1" \
    5>"$fifo" >"$TMP/xvfb.log" 2>&1 &
  XVFB_PID=$!
  gm_on_exit _gm_stop_jobs 5 XVFB_PID
  if ! read -r -t 15 n <"$fifo" || [ -z "$n" ]; then
    gm_die "Xvfb did not report a display within 15 s"
  fi
  rm -f -- "$fifo"
  export DISPLAY=":$n"
}

# --- mediatord ---------------------------------------------------------------

# gm_write_config FILE WORD...: a mediatord config: WORD "[SECTION]" starts a section, "KEY=VALUE" adds "KEY = VALUE"; makes the state_dir.
gm_write_config() {
  local file=$1 word first=1
  shift
  for word in "$@"; do
    case $word in
    \[*\])
      [ $first = 1 ] || echo
      first=0
      echo "$word"
      ;;
    *=*)
      echo "${word%%=*} = ${word#*=}"
      [ "${word%%=*}" != state_dir ] || gm_state_dir "${word#*=}"
      ;;
    *) gm_die "gm_write_config: '$word' is neither [SECTION] nor KEY=VALUE" ;;
    esac
  done >"$file"
}

# gm_config_sockets CONFIG: the paths of every socket CONFIG names that
# mediatord opens (control, vtest, vhost-user; vm_socket where a domain lists vms), one a line.
gm_config_sockets() {
  sed -n 's/^[[:space:]]*\(control\|vtest\|vhost_user\)_socket[[:space:]]*=[[:space:]]*\([^;#]*[^;#[:space:]]\).*/\2/p' "$1"
  ! grep -Eq '^[[:space:]]*vms[[:space:]]*=' "$1" ||
    sed -n 's/^[[:space:]]*vm_socket[[:space:]]*=[[:space:]]*\([^;#]*[^;#[:space:]]\).*/\1/p' "$1"
}

# gm_start_mediatord CONFIG LOG: $MEDIATORD on CONFIG, output to LOG, MEDIATORD_PID set, every socket of CONFIG there within 20 s.
gm_start_mediatord() {
  local config=$1 log=$2 sock
  local -a socks=()
  # Appending: a keeper and restarted mediatords write to the same log (bench/faults).
  : >"$log"
  "$MEDIATORD" --config "$config" >>"$log" 2>&1 &
  MEDIATORD_PID=$!
  if [ -z "${_gm_mediatord_registered:-}" ]; then
    _gm_mediatord_registered=1
    gm_on_exit gm_kill_mediatord
  fi
  mapfile -t socks < <(gm_config_sockets "$config")
  for sock in "${socks[@]}"; do
    gm_wait_path -S "$sock" 20 "$MEDIATORD_PID" mediatord "$log"
  done
  # A socket file may be a killed mediatord's, left behind (a restart):
  # ready means its control socket answers.
  _gm_wait_control "$(gm_config_control "$config")" 20 "$log"
}

# gm_config_control CONFIG: the control socket CONFIG names (empty: none).
gm_config_control() {
  sed -n 's/^[[:space:]]*control_socket[[:space:]]*=[[:space:]]*\([^;#]*[^;#[:space:]]\).*/\1/p' "$1"
}

# _gm_wait_control SOCKET SECS LOG: waits until $MEDIATORD_PID answers
# mediatorctl status on SOCKET; dies when it exits or SECS pass first.
_gm_wait_control() {
  local control=$1 secs=$2 log=$3 rc
  local deadline=$((SECONDS + secs))
  [ -n "$control" ] || return 0
  until "$MEDIATORCTL" --socket "$control" status >/dev/null 2>&1; do
    if ! gm_alive "$MEDIATORD_PID"; then
      wait "$MEDIATORD_PID" 2>/dev/null && rc=0 || rc=$?
      gm_die "mediatord exited with status $rc before answering on $control$(_gm_output_end "$log")"
    fi
    [ $SECONDS -lt $deadline ] ||
      gm_die "mediatord did not answer on $control within $secs s$(_gm_output_end "$log")"
    sleep 0.1
  done
}

# gm_stop_mediatord: SIGTERM to mediatord; returns its exit status (0 expected); dies if it still runs 15 s later.
gm_stop_mediatord() {
  local pid=$MEDIATORD_PID rc
  [ -n "$pid" ] || gm_die "mediatord is not running"
  kill -TERM "$pid" 2>/dev/null || true
  gm_wait_gone 15 "$pid"
  ! gm_alive "$pid" || gm_die "mediatord did not exit within 15 s of SIGTERM"
  MEDIATORD_PID=
  wait "$pid" && rc=0 || rc=$?
  return $rc
}

# gm_kill_mediatord: stops mediatord (SIGTERM, SIGKILL after 10 s) and then its workers, if it runs; at exit too.
gm_kill_mediatord() {
  local -a workers=()
  [ -n "$MEDIATORD_PID" ] && gm_alive "$MEDIATORD_PID" || return 0
  # Not a pid the system has given to another program since.
  [ "$(cat "/proc/$MEDIATORD_PID/comm" 2>/dev/null)" = mediatord ] || return 0
  mapfile -t workers < <(pgrep -P "$MEDIATORD_PID" 2>/dev/null)
  kill -TERM "$MEDIATORD_PID" 2>/dev/null || :
  gm_wait_gone 10 "$MEDIATORD_PID"
  kill -KILL "$MEDIATORD_PID" 2>/dev/null || :
  [ ${#workers[@]} -eq 0 ] || kill -KILL "${workers[@]}" 2>/dev/null || :
  return 0
}

# gm_assert_mediatord_alive: gm_die unless mediatord still runs.
gm_assert_mediatord_alive() {
  [ -n "$MEDIATORD_PID" ] || gm_die "mediatord is gone"
  gm_alive "$MEDIATORD_PID" || gm_die "mediatord has exited"
}

# gm_ctl ARGS...: mediatorctl on $CONTROL, killed after 20 s.
gm_ctl() {
  timeout -k 5 20 "$MEDIATORCTL" --socket "$CONTROL" "$@"
}

# --- clients -----------------------------------------------------------------

# gm_client [--timeout S] SOCKET COMMAND...: the GL program COMMAND as a vtest client of SOCKET's domain (virpipe, through mediator-exec), killed after S s.
# mediator-exec makes /tmp/.virgl_test, where Mesa 22 always connects, the
# domain's socket, in a private /tmp; VTEST_SOCKET_NAME names the socket's
# real path as a user of a Mesa that reads it would (mediator-exec points
# it at the private one). In the background, $! is a subshell's: gm_stop and
# gm_track stop it with its descendants.
gm_client() {
  local -a limit=()
  if [ "$1" = --timeout ]; then
    limit=(timeout -k 5 "$2")
    shift 2
  fi
  local sock=$1
  shift
  GALLIUM_DRIVER=virpipe VTEST_SOCKET_NAME=$sock \
    "${limit[@]}" "$MEDIATOR_EXEC" --socket "$sock" -- "$@"
}

# gm_in_domain [--timeout S] SOCKET COMMAND...: gm_client without a display (EGL surfaceless) and LeakSanitizer off; reports go out through fd 3.
# mediator-exec gives COMMAND a private /tmp, hence --json /dev/fd/3 3>FILE.
# LeakSanitizer (ASan builds): what it finds at a GL client's exit is
# allocated inside Mesa's driver (dlopen'ed, "unknown module").
gm_in_domain() {
  ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 EGL_PLATFORM=surfaceless \
    gm_client "$@"
}

# --- show-budgets' JSON ------------------------------------------------------

# gm_budgets: mediatorctl show-budgets --json of the daemon on $CONTROL.
gm_budgets() {
  gm_ctl show-budgets --json
}

# gm_budgets_sum FIELD [JSON]: FIELD summed over the domains of JSON (default: gm_budgets now).
gm_budgets_sum() {
  local json
  if [ $# -ge 2 ]; then json=$2; else json=$(gm_budgets); fi
  jq --arg f "$1" '[.domains[][$f]] | add' <<<"$json"
}

# gm_budgets_field DOMAIN FIELD [JSON]: FIELD of DOMAIN in JSON (default: gm_budgets now); nothing when there is no such domain.
gm_budgets_field() {
  local json
  if [ $# -ge 3 ]; then json=$3; else json=$(gm_budgets); fi
  jq -r --arg d "$1" --arg f "$2" '.domains[] | select(.name == $d) | .[$f]' <<<"$json"
}
