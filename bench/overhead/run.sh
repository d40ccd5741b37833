#!/bin/bash
# Overhead benchmark: what does going through mediatord cost an unmodified
# GL ES client, compared with virglrenderer's own vtest server?
#
# Runs glmark2-es2 --off-screen (scenes build, shading, texture) through
#   vts    virgl_test_server --use-egl-surfaceless (one process per client,
#          like mediatord's workers)
#   fifo0  mediatord, policy = fifo, max_inflight = 0 (unlimited)
#   fifo1  mediatord, policy = fifo, max_inflight = 1
# REPS times, rotating the order of the three each repetition to spread
# drifts of the machine over all of them, then prints per scene the median
# FPS of each and the ratios fifo0/vts and fifo1/vts, the same for the
# glmark2 score, and mediatord's own CPU time per command group (utime +
# stime of the mediatord process across a run, divided by the groups that
# mediatorctl show-budgets counted in that run).
#
# Environment: REPS (default 3), DURATION seconds per scene (default 10),
# SCENES (default "build shading texture"), BUILD_DIR (default build/),
# KEEP_TMP=1 keeps the logs.
set -euo pipefail

cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
SRCROOT=$PWD
REPS=${REPS:-3}
DURATION=${DURATION:-10}
read -r -a SCENES <<<"${SCENES:-build shading texture}"
BUILD_DIR=${BUILD_DIR:-$SRCROOT/build}
CONFIGS=(vts fifo0 fifo1)

die() {
  echo "bench: $*" >&2
  exit 1
}

for cmd in Xvfb glmark2-es2 virgl_test_server jq; do
  command -v "$cmd" >/dev/null || die "'$cmd' is missing; run scripts/install-deps.sh"
done

if [ ! -x "$BUILD_DIR/daemon/mediatord" ] || [ ! -x "$BUILD_DIR/tools/mediator-exec" ]; then
  echo "bench: building in $BUILD_DIR"
  [ -f "$BUILD_DIR/build.ninja" ] || meson setup "$BUILD_DIR" >/dev/null
  ninja -C "$BUILD_DIR" >/dev/null
fi
MEDIATORD=$BUILD_DIR/daemon/mediatord
MEDIATORCTL=$BUILD_DIR/tools/mediatorctl
export MEDIATOR_WORKER=$BUILD_DIR/worker/mediator-worker
MEDIATOR_EXEC=$BUILD_DIR/tools/mediator-exec
CLK_TCK=$(getconf CLK_TCK)

TMP=$(mktemp -d /tmp/gm-bench.XXXXXX)
server_pid=
xvfb_pid=

cleanup() {
  local rc=$?
  set +e
  [ -n "$server_pid" ] && kill -TERM "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  [ -n "$xvfb_pid" ] && kill -TERM "$xvfb_pid" 2>/dev/null
  wait 2>/dev/null
  if [ "${KEEP_TMP:-0}" = 1 ]; then
    echo "bench: logs kept in $TMP" >&2
  else
    rm -rf -- "$TMP"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

mkfifo "$TMP/displayfd"
Xvfb -displayfd 5 -nolisten tcp -noreset -screen 0 1024x768x24 \
  5>"$TMP/displayfd" >"$TMP/xvfb.log" 2>&1 &
xvfb_pid=$!
read -r -t 15 display <"$TMP/displayfd" || die "Xvfb did not start"
export DISPLAY=":$display"

wait_socket() {
  local i
  for i in $(seq 200); do
    [ -S "$1" ] && return 0
    kill -0 "$server_pid" 2>/dev/null || die "server exited; see $2"
    sleep 0.05
  done
  die "no socket $1"
}

# cpu_us PID: utime + stime of PID in microseconds (fields 14 and 15 of
# /proc/PID/stat, counted after the ")" that ends the command name).
cpu_us() {
  local stat
  stat=$(<"/proc/$1/stat")
  stat=${stat##*) }
  # shellcheck disable=SC2086 # split the fields
  set -- $stat
  echo $((((${12} + ${13}) * 1000000) / CLK_TCK))
}

total_groups() {
  timeout 20 "$MEDIATORCTL" --socket "$TMP/control.sock" show-budgets --json |
    jq '[.domains[].groups] | add'
}

# run_one CONFIG REP: one glmark2 run; appends "CONFIG REP SCENE FPS" lines
# to $TMP/fps and, for mediatord, "CONFIG REP CPU_US GROUPS" to $TMP/cpu.
run_one() {
  local cfg=$1 rep=$2 sock=$TMP/$1.sock log=$TMP/$1-$2.log args=() s
  local cpu0 cpu1 groups0 groups1
  rm -f "$sock" "$TMP/control.sock"
  case $cfg in
  vts)
    virgl_test_server --use-egl-surfaceless --socket-path="$sock" \
      >"$TMP/server-$cfg-$rep.log" 2>&1 &
    server_pid=$!
    ;;
  fifo0 | fifo1)
    mkdir -p "$TMP/state"
    cat >"$TMP/$cfg.conf" <<EOF
[mediator]
control_socket = $TMP/control.sock
state_dir = $TMP/state
policy = fifo
max_inflight = ${cfg#fifo}
renderer = egl-surfaceless

[domain bench]
class = normal
period_us = 16667
vtest_socket = $sock
EOF
    "$MEDIATORD" --config "$TMP/$cfg.conf" >"$TMP/server-$cfg-$rep.log" 2>&1 &
    server_pid=$!
    wait_socket "$TMP/control.sock" "$TMP/server-$cfg-$rep.log"
    ;;
  esac
  wait_socket "$sock" "$TMP/server-$cfg-$rep.log"
  for s in "${SCENES[@]}"; do
    args+=(-b "$s:duration=$DURATION")
  done

  if [ "$cfg" != vts ]; then
    cpu0=$(cpu_us "$server_pid")
    groups0=$(total_groups)
  fi
  # mediator-exec: Mesa 22's vtest client always connects to /tmp/.virgl_test.
  GALLIUM_DRIVER=virpipe VTEST_SOCKET_NAME=$sock \
    timeout $((${#SCENES[@]} * DURATION + 120)) "$MEDIATOR_EXEC" --socket "$sock" -- \
    glmark2-es2 --off-screen "${args[@]}" >"$log" 2>&1 ||
    die "glmark2-es2 through $cfg failed (rep $rep); see $log$(tail -n 5 "$log")"
  if [ "$cfg" != vts ]; then
    # The worker's last records arrive as it exits; wait until it is gone.
    for _ in $(seq 100); do
      [ "$(timeout 20 "$MEDIATORCTL" --socket "$TMP/control.sock" show-budgets --json |
        jq '[.domains[].clients] | add')" = 0 ] && break
      sleep 0.1
    done
    cpu1=$(cpu_us "$server_pid")
    groups1=$(total_groups)
    echo "$cfg $rep $((cpu1 - cpu0)) $((groups1 - groups0))" >>"$TMP/cpu"
  fi
  kill -TERM "$server_pid"
  wait "$server_pid" || true
  server_pid=

  sed -n 's/^\[\([a-z-]*\)\].*FPS: \([0-9.]*\).*/\1 \2/p' "$log" |
    while read -r scene fps; do echo "$cfg $rep $scene $fps"; done >>"$TMP/fps"
  score=$(sed -n 's/.*glmark2 Score: \([0-9]*\).*/\1/p' "$log")
  [ -n "$score" ] || die "no glmark2 score in $log"
  echo "$cfg $rep score $score" >>"$TMP/fps"
  printf '  rep %d %-6s score %5s  (%s)\n' "$rep" "$cfg" "$score" \
    "$(sed -n 's/^\[\([a-z-]*\)\].*FPS: \([0-9.]*\).*/\1 \2/p' "$log" | paste -sd, -)"
}

echo "gpu-mediator overhead benchmark"
echo "  $(nproc) CPUs, $(uname -r), $(glmark2-es2 --version 2>/dev/null | head -n 1 || true)"
echo "  scenes: ${SCENES[*]}, ${DURATION} s each; $REPS repetitions; display $DISPLAY"
echo
: >"$TMP/fps"
: >"$TMP/cpu"
for rep in $(seq 1 "$REPS"); do
  for i in 0 1 2; do
    run_one "${CONFIGS[$(((i + rep - 1) % 3))]}" "$rep"
  done
done

# median CONFIG KEY: median of the values of CONFIG for KEY (a scene or "score").
median() {
  awk -v c="$1" -v k="$2" '$1 == c && $3 == k { print $4 }' "$TMP/fps" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
                             else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

ratio() {
  awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "n/a"; else printf "%.3f", a / b }'
}

echo
echo "Median over $REPS repetitions (FPS; score is glmark2's):"
printf '%-10s %10s %10s %10s %12s %12s\n' scene vts fifo0 fifo1 fifo0/vts fifo1/vts
for key in "${SCENES[@]}" score; do
  v=$(median vts "$key")
  f0=$(median fifo0 "$key")
  f1=$(median fifo1 "$key")
  printf '%-10s %10s %10s %10s %12s %12s\n' "$key" "$v" "$f0" "$f1" \
    "$(ratio "$f0" "$v")" "$(ratio "$f1" "$v")"
done

echo
echo "mediatord CPU time per command group (utime+stime of mediatord / groups):"
for cfg in fifo0 fifo1; do
  awk -v c="$cfg" '$1 == c { cpu += $3; groups += $4; n++ }
    END {
      if (groups > 0)
        printf "  %-6s %d runs: %.0f us CPU over %d groups = %.2f us/group\n", c, n, cpu, groups, cpu / groups
      else
        printf "  %-6s no groups counted\n", c
    }' "$TMP/cpu"
done
echo "  (CPU time resolution is 1/$CLK_TCK s per run)"
