#!/bin/bash
# SPDX-License-Identifier: MIT
# Accuracy benchmark of the cost models (not a test).
#
# Runs, through mediatord (policy fifo, max_inflight 1, so every group
# runs alone), these unmodified workloads, each as its own client:
#   glmark2-es2 scenes build, shading, texture, buffer   (DURATION s each)
#   gl-clears random        1..500 random clears per group (Schnitzer et al.'s clearspd)
#   gl-clears two-contexts  640x480 / 1920x1080 alternating (Schnitzer et al. §VI-E)
#   gl-multipass            render to a texture, then sample it (2000 frames, random sizes)
# The workers dump every group's features and measured time
# (MEDIATOR_FEATURE_DUMP); predict-replay then runs every model over the
# same groups and prints, per workload and model: MAPE (groups >= 100 us,
# and their share), mean and p99 absolute error, share of groups over the
# bound, mean bound / mean measured, and CPU ns per predict+update. With
# gnuplot installed it writes one CDF plot (PNG) of the prediction error
# per workload, one curve per model, into OUT (default bench-accuracy-out/),
# and keeps the recorded groups in OUT/dumps/ for replaying them again
# (build/bench/accuracy/predict-replay NAME OUT/dumps/NAME.jsonl).
#
# Environment: DURATION (default 20), CLEAR_GROUPS (default 2000),
# BUILD_DIR (default build/), OUT.
set -euo pipefail

cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
SRCROOT=$PWD
DURATION=${DURATION:-20}
CLEAR_GROUPS=${CLEAR_GROUPS:-2000}
OUT=${OUT:-$SRCROOT/bench-accuracy-out}
GM_NAME=bench
source scripts/lib/gm-common.sh
B=$BUILD_DIR

gm_require_cmd Xvfb xvfb
gm_require_cmd glmark2-es2 glmark2-es2-x11
gm_ensure_built "$B/bench/accuracy/predict-replay"

gm_tmpdir gm-accuracy
mkdir -p "$OUT/dumps"
gm_worker_dir "$TMP/dump"
gm_start_xvfb 1920x1080x24

CONTROL=$TMP/control.sock
gm_write_config "$TMP/mediatord.conf" \
  "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" policy=fifo max_inflight=1 \
  "[domain bench]" vtest_socket="$TMP/bench.vtest"
MEDIATOR_FEATURE_DUMP=$TMP/dump gm_start_mediatord "$TMP/mediatord.conf" "$TMP/mediatord.log"

# run NAME COMMAND...: runs one workload as one client; its dump becomes NAME.jsonl
run() {
  local name=$1 before after
  shift
  before=$(find "$TMP/dump" -mindepth 1 -maxdepth 1 | wc -l)
  gm_client --timeout $((DURATION * 3 + 120)) "$TMP/bench.vtest" "$@" >"$TMP/$name.out" 2>&1 ||
    gm_die "$name failed: $(tail -5 "$TMP/$name.out")"
  sleep 0.5 # the worker writes its last records as it exits
  [ "$(find "$TMP/dump" -mindepth 1 -maxdepth 1 | wc -l)" -gt "$before" ] ||
    gm_die "$name left no feature dump"
  # The newest dump is this client's.
  after=$(find "$TMP/dump" -mindepth 1 -maxdepth 1 -printf '%T@ %p\n' | sort -n | tail -n 1)
  mv "${after#* }" "$TMP/$name.jsonl"
  cp "$TMP/$name.jsonl" "$OUT/dumps/$name.jsonl"
  echo "  $name: $(wc -l <"$TMP/$name.jsonl") groups"
}

echo "gpu-mediator accuracy benchmark ($(nproc) CPUs, llvmpipe)"
for scene in build shading texture buffer; do
  run "glmark2-$scene" glmark2-es2 --off-screen -b "$scene:duration=$DURATION"
done
run clears-random "$B/bench/accuracy/gl-clears" random "$CLEAR_GROUPS" 1
run clears-two-contexts "$B/bench/accuracy/gl-clears" two-contexts "$CLEAR_GROUPS"
run multipass "$B/bench/accuracy/gl-multipass" 2000 1

echo
printf '%-14s %-8s %7s %7s %8s %9s %9s %8s %8s %7s %8s\n' workload model groups big% mape \
  mae_us p99_us over% bound/m ns/op least/m
for w in glmark2-build glmark2-shading glmark2-texture glmark2-buffer clears-random \
  clears-two-contexts multipass; do
  "$B/bench/accuracy/predict-replay" --cdf "$OUT" "$w" "$TMP/$w.jsonl"
done

if command -v gnuplot >/dev/null; then
  for w in glmark2-build glmark2-shading glmark2-texture glmark2-buffer clears-random \
    clears-two-contexts multipass; do
    plot=""
    for f in "$OUT/$w"-*.dat; do
      m=${f##*/"$w"-}
      m=${m%.dat}
      plot+="${plot:+, }'$f' using 1:2 with lines title '$m'"
    done
    # x range: the 1st to 99th percentile of the learned models' errors
    # (history's can be orders of magnitude off and would flatten the rest).
    range=$(cat "$OUT/$w"-linear.dat "$OUT/$w"-sgd.dat "$OUT/$w"-rls.dat |
      awk '$2 >= 0.01 && $2 <= 0.99 { if (lo == "" || $1 < lo) lo = $1; if (hi == "" || $1 > hi) hi = $1 }
           END { printf "[%d:%d]", lo * 1.5 - 1, hi * 1.5 + 1 }')
    gnuplot -e "set terminal pngcairo size 900,600; set output '$OUT/$w-cdf.png'; set xrange $range;
      set title 'prediction error CDF: $w'; set xlabel 'predicted - measured (us)';
      set ylabel 'share of groups'; set grid; set key bottom right; plot $plot"
  done
  echo
  echo "CDF plots: $OUT/*-cdf.png"
else
  echo "gnuplot not installed: no CDF plots (data in $OUT/*.dat)"
fi
