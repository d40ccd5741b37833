#!/bin/bash
# SPDX-License-Identifier: MIT
# GL ES conformance through mediatord against the reference vtest server.
#
#   bench/conformance/run.sh [--mesa 22|25|both] [--list quick|full|FILE] [--timeout S]
#                            [--piece-us US] [--class normal|safety] [--every N]
#
# Runs piglit's GL ES tests as vtest clients (GALLIUM_DRIVER=virpipe, EGL
# surfaceless, -auto -fbo), each test twice in the same run: once through
# virglrenderer's own virgl_test_server (the reference: one process per
# client, like mediatord's workers) and once through mediatord (one domain,
# policy fifo). With --mesa both (the default) it does so for the system's
# Mesa and for Mesa 25 unpacked beside it (scripts/mesa25-beside.sh): Mesa 22
# reaches a server only through mediator-exec (it always connects to
# /tmp/.virgl_test), Mesa 25 through VTEST_SOCKET_NAME alone.
#
# --class gives mediatord's domain that class (default normal: its worker at
# the domain's nice value and idle priority until its first group completes;
# safety: nice 0, every group a frame's).
#
# --piece-us US gives mediatord's domain that piece length (default 0: groups
# are not cut): with 1, nearly every group after a context's first is cut
# into pieces, its long draws into scissor tiles (doc/design.md "Pieces"),
# and piglit's probes check that the pictures are the same. Workers cut
# only while a safety domain is active, so a 60 Hz cluster-client renders
# in a safety domain of its own meanwhile.
#
# --every N runs only every Nth test of the list (the 1st, the N+1st, ...):
# a shorter run that still covers the list's kinds of test.
#
# Lists: `quick` (bench/conformance/gles-quick.list, about two minutes on 2
# cores: what CI runs through tests/integration/test-conformance.sh), `full`
# (every GL ES test of piglit's opengl profile: the _gles2/_gles3 programs
# and the OES extensions' tests; and the GLSL ES 1.00 and 3.00 shader tests
# piglit ships, through shader_runner_gles2 and _gles3), or a FILE with one piglit command per line
# (program and arguments, '#' starts a comment).
#
# Prints one line per test and Mesa (result through the reference, result
# through mediatord), then per Mesa how many tests passed through the
# reference and how many of those through mediatord, and how many workers
# their system-call filter killed. Exit status: 0 when every test that
# passes through the reference passes through mediatord and no worker was
# killed by its filter, 1 when one does not or one was (a regression), 2
# usage, 77 a missing prerequisite (named on stderr).
#
# Binaries: $MEDIATORD and $MEDIATOR_EXEC (meson's test environment sets
# them), else those of $BUILD_DIR (default build/). KEEP_TMP=1 keeps the
# run's directory (logs of every test under it).
set -euo pipefail

HERE=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
GM_NAME=conformance
# shellcheck source=scripts/lib/gm-common.sh
source "$HERE/../../scripts/lib/gm-common.sh"
PIGLIT_DIR=${PIGLIT_DIR:-/usr/lib/x86_64-linux-gnu/piglit}
MESA25_DIR=${GM_MESA25_DIR:-/var/cache/gpu-mediator/mesa-25}
# One test may take this long (a shader compile on llvmpipe, on a busy host).
DEFAULT_TEST_TIMEOUT_S=60

mesa=both
list=quick
test_timeout=$DEFAULT_TEST_TIMEOUT_S
piece_us=0
class=normal
every=1

usage() {
  sed -n '3,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
}

while [ $# -gt 0 ]; do
  case "$1" in
    --mesa) mesa=${2:-}; shift 2 ;;
    --list) list=${2:-}; shift 2 ;;
    --timeout) test_timeout=${2:-}; shift 2 ;;
    --piece-us) piece_us=${2:-}; shift 2 ;;
    --class) class=${2:-}; shift 2 ;;
    --every) every=${2:-}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
case "$mesa" in 22 | 25 | both) ;; *) usage >&2; exit 2 ;; esac
[[ "$test_timeout" =~ ^[1-9][0-9]*$ ]] || { usage >&2; exit 2; }
[[ "$piece_us" =~ ^[0-9]+$ ]] || { usage >&2; exit 2; }
[[ "$every" =~ ^[1-9][0-9]*$ ]] || { usage >&2; exit 2; }
case "$class" in normal | safety) ;; *) usage >&2; exit 2 ;; esac

skip() { gm_say "SKIP: $*"; exit 77; }
gm_missing() { skip "$@"; }

{ [ -x "$MEDIATORD" ] && [ -x "$MEDIATOR_EXEC" ]; } || skip "not built: $MEDIATORD, $MEDIATOR_EXEC"
# The tests run in piglit's directory.
MEDIATORD=$(realpath -- "$MEDIATORD")
MEDIATOR_EXEC=$(realpath -- "$MEDIATOR_EXEC")
[ -d "$PIGLIT_DIR/bin" ] || skip "piglit is not installed (Debian package piglit)"
gm_require_cmd virgl_test_server virgl-server

# The test commands, one per line.
commands=()
case "$list" in
  quick) list_file=$HERE/gles-quick.list ;;
  full) list_file= ;;
  *) list_file=$list ;;
esac
if [ -n "$list_file" ]; then
  [ -r "$list_file" ] || { gm_say "cannot read $list_file"; exit 2; }
  mapfile -t commands < <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$list_file")
else
  # piglit's opengl profile lists every test with its command; the GL ES
  # ones are the programs built for ES 2/3 and the OES extensions' tests.
  mapfile -t commands < <(zcat "$PIGLIT_DIR/tests/opengl.xml.gz" | python3 -c '
import ast, re, sys, xml.etree.ElementTree as ET
for test in ET.parse(sys.stdin).getroot():
    for option in test:
        if option.get("name") != "command":
            continue
        cmd = ast.literal_eval(option.get("value"))
        prog = cmd[0]
        if re.search(r"_gles[23]$", prog) or (prog.startswith("oes_") and
                                               not prog.endswith(("_gles1", "_gl"))):
            print(" ".join(cmd))
')
  # The GLSL ES shader tests piglit ships (its opengl profile does not list
  # them): GLSL ES 1.00 through shader_runner_gles2, 3.00 through _gles3.
  for v in 1.00:gles2 3.00:gles3; do
    for f in "$PIGLIT_DIR"/tests/spec/glsl-es-"${v%%:*}"/*/*.shader_test; do
      [ -e "$f" ] && commands+=("shader_runner_${v##*:} ${f#"$PIGLIT_DIR"/}")
    done
  done
fi
if [ "$every" -gt 1 ]; then
  mapfile -t commands < <(printf '%s\n' "${commands[@]}" | awk -v n="$every" '(NR - 1) % n == 0')
fi
[ ${#commands[@]} -gt 0 ] || { gm_say "no tests in list '$list'"; exit 2; }
for c in "${commands[@]}"; do
  prog=${c%% *}
  [ -x "$PIGLIT_DIR/bin/$prog" ] || skip "piglit has no program $prog ($c)"
done

mesas=()
case "$mesa" in
  22) mesas=(22) ;;
  25) mesas=(25) ;;
  both) mesas=(22 25) ;;
esac
if [[ " ${mesas[*]} " == *" 25 "* ]]; then
  gm_mesa25_env "$MESA25_DIR" ||
    skip "no Mesa 25 client libraries (scripts/mesa25-beside.sh): $GM_MESA25_ERR"
fi

gm_tmpdir gm-conformance --keep-on-failure
REF_SOCK=$TMP/ref.vtest
MED_SOCK=$TMP/med.vtest
CONTROL=$TMP/control.sock

# The reference forks one process per client (without --multi-clients).
virgl_test_server --use-egl-surfaceless --socket-path="$REF_SOCK" >"$TMP/reference.log" 2>&1 &
gm_track "$!"
gm_wait_path -S "$REF_SOCK" 20 "$!" virgl_test_server "$TMP/reference.log"

gm_write_config "$TMP/mediatord.conf" \
  "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" policy=fifo max_inflight=1 \
  renderer=egl-surfaceless \
  "[domain conformance]" class="$class" period_us=16667 budget_us=16667 vtest_socket="$MED_SOCK" \
  piece_us="$piece_us"
# The cluster is there only so that mediatord cuts: workers cut while a
# safety domain is protected, and one past its budget is not (doc/design.md).
# 10 ms: room for its frames under an AddressSanitizer worker too, which
# takes 2.5 times as long for them (2026-11-28; 4 ms cut nothing there).
if [ "$piece_us" != 0 ]; then
  gm_write_config "$TMP/cluster.conf" "[domain cluster]" class=safety period_us=16667 \
    budget_us=10000 vtest_socket="$TMP/cluster.vtest"
  cat "$TMP/cluster.conf" >>"$TMP/mediatord.conf"
fi
gm_start_mediatord "$TMP/mediatord.conf" "$TMP/mediatord.log"
if [ "$piece_us" != 0 ]; then
  gm_ensure_built "$CLUSTER_CLIENT"
  GALLIUM_DRIVER=virpipe EGL_PLATFORM=surfaceless "$MEDIATOR_EXEC" --socket "$TMP/cluster.vtest" \
    -- "$CLUSTER_CLIENT" --frames 1000000 >"$TMP/cluster.log" 2>&1 &
  gm_track "$!"
  "$MEDIATORCTL" --socket "$CONTROL" trace start "$TMP/trace.jsonl" >/dev/null ||
    { gm_say "cannot start a trace"; exit 1; }
fi

# run_test MESA SOCKET LOG COMMAND: prints the test's piglit result (pass,
# fail, skip, warn, crash) or "timeout" / "noresult".
run_test() {
  local mesa=$1 sock=$2 log=$3 rc result
  shift 3
  local -a cmd
  read -r -a cmd <<<"$*"
  cmd[0]=$PIGLIT_DIR/bin/${cmd[0]}
  if [ "$mesa" = 25 ]; then
    cmd=(env "${GM_MESA25_ENV[@]}" VTEST_SOCKET_NAME="$sock" "${cmd[@]}")
  else
    cmd=("$MEDIATOR_EXEC" --socket "$sock" -- "${cmd[@]}")
  fi
  (cd "$PIGLIT_DIR" && GALLIUM_DRIVER=virpipe PIGLIT_PLATFORM=surfaceless_egl \
    timeout -k 5 "$test_timeout" "${cmd[@]}" -auto -fbo) >"$log" 2>&1 && rc=0 || rc=$?
  result=$(sed -n 's/.*PIGLIT: {"result": "\([a-z]*\)".*/\1/p' "$log" | tail -n 1)
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    echo timeout
  elif [ -n "$result" ]; then
    echo "$result"
  else
    echo noresult
  fi
}

status=0
summary=()
for m in "${mesas[@]}"; do
  ref_pass=0 both_pass=0 regressions=()
  i=0
  for c in "${commands[@]}"; do
    i=$((i + 1))
    ref=$(run_test "$m" "$REF_SOCK" "$TMP/mesa$m-$i-reference.log" "$c")
    med=$(run_test "$m" "$MED_SOCK" "$TMP/mesa$m-$i-mediatord.log" "$c")
    printf 'mesa %s  reference %-8s mediatord %-8s %s\n' "$m" "$ref" "$med" "$c"
    [ "$ref" = pass ] || continue
    ref_pass=$((ref_pass + 1))
    if [ "$med" = pass ]; then
      both_pass=$((both_pass + 1))
    else
      regressions+=("$c ($med; log $TMP/mesa$m-$i-mediatord.log)")
    fi
  done
  summary+=("Mesa $m: ${#commands[@]} tests, $ref_pass pass through virgl_test_server, $both_pass of them through mediatord")
  if [ ${#regressions[@]} -gt 0 ]; then
    status=1
    for r in "${regressions[@]}"; do
      summary+=("  Mesa $m: passes through the reference, not through mediatord: $r")
    done
  fi
done
printf '%s\n' "${summary[@]}"
if [ "$piece_us" != 0 ]; then
  "$MEDIATORCTL" --socket "$CONTROL" trace stop >/dev/null || true
  # Groups cut, and draws cut into tiles (a draw's tiles are consecutive
  # records marked "tile", numbered from 1 within their group's pieces).
  jq -rs '[.[] | select(.piece)] as $p |
    "pieces: \([$p[] | select(.piece[0] == 1)] | length) groups cut into \($p | length) pieces, \([$p[] | select(.tile)] | length) of them scissor tiles"' \
    "$TMP/trace.jsonl"
fi
if grep -q "closing the connection" "$TMP/mediatord.log"; then
  gm_say "mediatord closed client connections:"
  grep "closing the connection" "$TMP/mediatord.log" | sort | uniq -c | head -20 >&2
fi
# A worker killed by its system-call filter is a failure, whatever the test's result (issue 30).
filter_kills=$(grep -c 'killed by its filter' "$TMP/mediatord.log" || :)
echo "domain class $class: workers killed by their system-call filter: $filter_kills"
if [ "$filter_kills" -gt 0 ]; then
  grep 'killed by its filter' "$TMP/mediatord.log" | sort | uniq -c >&2
  status=1
fi
exit $status
