#!/bin/bash
# SPDX-License-Identifier: MIT
# Overhead benchmark: what does going through mediatord cost an unmodified
# GL ES client, compared with virglrenderer's own vtest server?
#
# Runs glmark2-es2 --off-screen (scenes build, shading, texture) through
#   vts    virgl_test_server --use-egl-surfaceless (one process per client,
#          like mediatord's workers)
#   fifo0  mediatord, policy = fifo, max_inflight = 0 (unlimited)
#   fifo1  mediatord, policy = fifo, max_inflight = 1
#   normal mediatord at its defaults (policy budget, max_inflight 1, the
#          domain's worker_nice default), the client in a normal domain
#   safety the same, the client in a safety domain (budget 4 ms a period)
# REPS times, rotating the order of the five each repetition to spread
# drifts of the machine over all of them, then prints per scene the median
# FPS of each and its ratio to vts (issue 29: >= 0.97 in either domain
# class at the default config), the same for the glmark2 score, and mediatord's own CPU time per command group (utime +
# stime of the mediatord process across a run, divided by the groups that
# mediatorctl show-budgets counted in that run).
#
# Environment: REPS (default 3), DURATION seconds per scene (default 10),
# SCENES (default "build shading texture"; "all": glmark2's whole default
# run, every scene at glmark2's own duration), CONFIGS (default "vts fifo0
# fifo1 normal safety": a subset runs only those), BUILD_DIR (default
# build/), KEEP_TMP=1 keeps the logs.
#
# Every mediatord run is checked for workers killed by their system-call
# filter or by a signal (issue 30): their count is printed per run, and
# the exit status is 1 when there was one; a run that does not render
# every scene vts rendered fails too.
set -euo pipefail

cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
REPS=${REPS:-3}
DURATION=${DURATION:-10}
read -r -a SCENES <<<"${SCENES:-build shading texture}"
[ "${SCENES[*]}" != all ] || SCENES=()
read -r -a CONFIGS <<<"${CONFIGS:-vts fifo0 fifo1 normal safety}"
for c in "${CONFIGS[@]}"; do
  case $c in vts | fifo0 | fifo1 | normal | safety) ;; *)
    echo "bench/overhead: unknown configuration '$c' in CONFIGS" >&2
    exit 2
    ;;
  esac
done
GM_NAME=bench
source scripts/lib/gm-common.sh

gm_require_cmd Xvfb xvfb
gm_require_cmd glmark2-es2 glmark2-es2-x11
gm_require_cmd virgl_test_server virgl-server
gm_require_cmd jq jq
gm_ensure_built "$MEDIATORD" "$MEDIATOR_EXEC"
CLK_TCK=$(getconf CLK_TCK)

gm_tmpdir gm-bench
CONTROL=$TMP/control.sock
server_pid=
gm_start_xvfb 1024x768x24

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

# scene_fps LOG: "SCENE FPS" per scene glmark2 rendered; for its whole
# default run (SCENES=all) the scene is named with its options
# ("build:use-vbo=false"), since a scene runs there with several.
scene_fps() {
  if [ ${#SCENES[@]} -gt 0 ]; then
    sed -n 's/^\[\([a-z0-9-]*\)\].*FPS: \([0-9.]*\).*/\1 \2/p' "$1"
  else
    sed -n 's/^\[\([a-z0-9-]*\)\] \(.*\): FPS: \([0-9.]*\).*/\1:\2 \3/p' "$1" |
      awk '{ fps = $NF; $NF = ""; gsub(/ /, ""); print $0, fps }'
  fi
}

# run_one CONFIG REP: one glmark2 run; appends "CONFIG REP SCENE FPS" lines
# to $TMP/fps and, for mediatord, "CONFIG REP CPU_US GROUPS" to $TMP/cpu.
run_one() {
  local cfg=$1 rep=$2 sock=$TMP/$1.sock log=$TMP/$1-$2.log args=() s
  local cpu0 cpu1 groups0 groups1
  rm -f "$sock" "$CONTROL"
  case $cfg in
  vts)
    virgl_test_server --use-egl-surfaceless --socket-path="$sock" \
      >"$TMP/server-$cfg-$rep.log" 2>&1 &
    server_pid=$!
    gm_track "$server_pid"
    gm_wait_path -S "$sock" 10 "$server_pid" virgl_test_server "$TMP/server-$cfg-$rep.log"
    ;;
  fifo0 | fifo1)
    gm_write_config "$TMP/$cfg.conf" \
      "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" policy=fifo \
      max_inflight="${cfg#fifo}" renderer=egl-surfaceless \
      "[domain bench]" class=normal period_us=16667 vtest_socket="$sock"
    gm_start_mediatord "$TMP/$cfg.conf" "$TMP/server-$cfg-$rep.log"
    server_pid=$MEDIATORD_PID
    ;;
  normal | safety)
    # The defaults: only what a domain must say.
    gm_write_config "$TMP/$cfg.conf" \
      "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" renderer=egl-surfaceless \
      "[domain bench]" class="$cfg" period_us=16667 budget_us=$([ "$cfg" = safety ] && echo 4000 || echo 12000) \
      vtest_socket="$sock"
    gm_start_mediatord "$TMP/$cfg.conf" "$TMP/server-$cfg-$rep.log"
    server_pid=$MEDIATORD_PID
    ;;
  esac
  for s in "${SCENES[@]}"; do
    args+=(-b "$s:duration=$DURATION")
  done

  if [ "$cfg" != vts ]; then
    cpu0=$(cpu_us "$server_pid")
    groups0=$(gm_budgets_sum groups)
  fi
  # mediator-exec: Mesa 22's vtest client always connects to /tmp/.virgl_test.
  # glmark2's whole run: about 33 scenes of 10 s each.
  local limit=$((${#SCENES[@]} * DURATION + 120))
  [ ${#SCENES[@]} -gt 0 ] || limit=900
  gm_client --timeout "$limit" "$sock" \
    glmark2-es2 --off-screen "${args[@]}" >"$log" 2>&1 ||
    gm_die "glmark2-es2 through $cfg failed (rep $rep); see $log$(tail -n 5 "$log")"
  if [ "$cfg" != vts ]; then
    # The worker's last records arrive as it exits; wait until it is gone.
    for _ in $(seq 100); do
      [ "$(gm_budgets_sum clients)" = 0 ] && break
      sleep 0.1
    done
    cpu1=$(cpu_us "$server_pid")
    groups1=$(gm_budgets_sum groups)
    echo "$cfg $rep $((cpu1 - cpu0)) $((groups1 - groups0))" >>"$TMP/cpu"
  fi
  local killed=''
  if [ "$cfg" = vts ]; then
    kill -TERM "$server_pid"
    wait "$server_pid" || true
  else
    gm_stop_mediatord || true
    killed=$(grep -c -E 'killed by its filter|killed by signal' "$TMP/server-$cfg-$rep.log" || :)
    echo "$cfg $rep $killed" >>"$TMP/killed"
  fi
  server_pid=

  scene_fps "$log" |
    while read -r scene fps; do echo "$cfg $rep $scene $fps"; done >>"$TMP/fps"
  score=$(sed -n 's/.*glmark2 Score: \([0-9]*\).*/\1/p' "$log")
  [ -n "$score" ] || gm_die "no glmark2 score in $log"
  echo "$cfg $rep score $score" >>"$TMP/fps"
  printf '  rep %d %-6s score %5s, %d scenes%s  (%s)\n' "$rep" "$cfg" "$score" \
    "$(grep -c 'FPS:' "$log")" "${killed:+, workers killed $killed}" \
    "$(scene_fps "$log" | paste -sd, -)"
  echo "$cfg $rep $(grep -c 'FPS:' "$log")" >>"$TMP/scenes"
}

echo "gpu-mediator overhead benchmark"
echo "  $(nproc) CPUs, $(uname -r), $(glmark2-es2 --version 2>/dev/null | head -n 1 || true)"
if [ ${#SCENES[@]} -gt 0 ]; then
  echo "  scenes: ${SCENES[*]}, ${DURATION} s each; $REPS repetitions; display $DISPLAY"
else
  echo "  glmark2's whole default run; $REPS repetitions; display $DISPLAY"
fi
echo "  configurations: ${CONFIGS[*]}"
echo
: >"$TMP/fps"
: >"$TMP/cpu"
: >"$TMP/killed"
: >"$TMP/scenes"
for rep in $(seq 1 "$REPS"); do
  for i in "${!CONFIGS[@]}"; do
    run_one "${CONFIGS[$(((i + rep - 1) % ${#CONFIGS[@]}))]}" "$rep"
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
printf '%-10s %9s %9s %9s %9s %9s %10s %10s %11s %11s\n' scene vts fifo0 fifo1 normal \
  safety fifo0/vts fifo1/vts normal/vts safety/vts
keys=("${SCENES[@]}")
[ ${#keys[@]} -gt 0 ] || mapfile -t keys < <(awk '$1 == "vts" && $3 != "score" { print $3 }' "$TMP/fps" | awk '!seen[$0]++')
for key in "${keys[@]}" score; do
  v=$(median vts "$key")
  f0=$(median fifo0 "$key")
  f1=$(median fifo1 "$key")
  nn=$(median normal "$key")
  sf=$(median safety "$key")
  printf '%-10s %9s %9s %9s %9s %9s %10s %10s %11s %11s\n' "$key" "$v" "$f0" "$f1" "$nn" \
    "$sf" "$(ratio "$f0" "$v")" "$(ratio "$f1" "$v")" "$(ratio "$nn" "$v")" "$(ratio "$sf" "$v")"
done
# Per repetition: the score ratios of the same run.
echo
echo "Score ratio to vts per repetition (the same run each):"
for rep in $(seq 1 "$REPS"); do
  v=$(awk -v r="$rep" '$1 == "vts" && $2 == r && $3 == "score" { print $4 }' "$TMP/fps")
  line="  rep $rep:"
  for cfg in "${CONFIGS[@]}"; do
    [ "$cfg" != vts ] || continue
    c=$(awk -v r="$rep" -v c="$cfg" '$1 == c && $2 == r && $3 == "score" { print $4 }' "$TMP/fps")
    line+=" $cfg $(ratio "$c" "$v")"
  done
  echo "$line"
done

echo
echo "mediatord CPU time per command group (utime+stime of mediatord / groups):"
for cfg in "${CONFIGS[@]}"; do
  [ "$cfg" != vts ] || continue
  awk -v c="$cfg" '$1 == c { cpu += $3; groups += $4; n++ }
    END {
      if (groups > 0)
        printf "  %-6s %d runs: %.0f us CPU over %d groups = %.2f us/group\n", c, n, cpu, groups, cpu / groups
      else
        printf "  %-6s no groups counted\n", c
    }' "$TMP/cpu"
done
echo "  (CPU time resolution is 1/$CLK_TCK s per run)"

# Issue 30: no worker killed, every scene rendered in every run.
status=0
killed_total=$(awk '{ n += $3 } END { print n + 0 }' "$TMP/killed")
echo
echo "workers killed by their filter or by a signal, all mediatord runs: $killed_total"
[ "$killed_total" = 0 ] || status=1
vts_scenes=$(awk '$1 == "vts" { print $3; exit }' "$TMP/scenes")
if [ -n "$vts_scenes" ]; then
  short=$(awk -v n="$vts_scenes" '$3 != n { printf " %s rep %s: %s", $1, $2, $3 }' "$TMP/scenes")
  if [ -n "$short" ]; then
    echo "runs that rendered other than vts's $vts_scenes scenes:$short"
    status=1
  fi
fi
exit $status
