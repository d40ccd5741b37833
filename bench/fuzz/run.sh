#!/bin/bash
# SPDX-License-Identifier: MIT
# Fuzzing of every guest-facing parser (not a test; too long for CI).
#
# Builds the libFuzzer targets of tests/fuzz/ with clang, AddressSanitizer
# and UndefinedBehaviorSanitizer (BUILD_DIR, default build-fuzz/), and runs
# each for RUNS inputs (default 10^7) from a seed corpus (the recorded Mesa
# vtest sessions for the vtest parser and the decoder; empty for the
# others), one after the other. Prints per target: inputs run, seconds,
# inputs per second, coverage (libFuzzer's cov: and ft: of its last
# report), corpus size, and whether it found a crash (a crash stops that
# target; its input is kept in OUT). The parsers:
#   fuzz-vtest-parser   a vtest client's bytes (mediator/worker/vtest/vtest_parser.c)
#   fuzz-predict-ctx    a command buffer through decoder and state tracker
#   fuzz-vhost-user     vhost-user messages and virtio-gpu requests
#   fuzz-virtqueue      a guest's ring (mediator/worker/vhost-user/virtqueue.c)
#   fuzz-virtio-gpu     virtio-gpu requests in guest memory
#   fuzz-wire           a worker's packets to mediatord (mediator/common/wire.c)
#   fuzz-pieces         where a group is cut into pieces and scissor tiles
#                       (mediator/worker/pieces.c, tile_cmds.c)
#
# Environment: RUNS (default 10000000), TARGETS (default all of them),
# BUILD_DIR (default build-fuzz/), OUT (corpora and crashes, default
# bench-fuzz-out/), FUZZ_ARGS (more libFuzzer options for every target,
# e.g. -max_len=16384: the recorded sessions that seed the decoder are
# megabytes, and libFuzzer otherwise mutates inputs up to the largest).
set -euo pipefail

cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
SRCROOT=$PWD
RUNS=${RUNS:-10000000}
TARGETS=${TARGETS:-fuzz-vtest-parser fuzz-predict-ctx fuzz-vhost-user fuzz-virtqueue fuzz-virtio-gpu fuzz-wire fuzz-pieces}
BUILD_DIR=${BUILD_DIR:-$SRCROOT/build-fuzz}
OUT=${OUT:-$SRCROOT/bench-fuzz-out}
command -v clang >/dev/null || { echo "bench/fuzz: clang is missing (scripts/install-deps.sh)" >&2; exit 1; }

if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  CC=clang meson setup "$BUILD_DIR" -Dfuzzing=true -Db_sanitize=address,undefined \
    -Db_lundef=false >/dev/null
fi
mkdir -p "$OUT"
# shellcheck disable=SC2046 # one target per word
ninja -C "$BUILD_DIR" $(for t in $TARGETS; do echo "tests/fuzz/$t"; done) >"$OUT/build.log" 2>&1 ||
  { tail -20 "$OUT/build.log" >&2; echo "bench/fuzz: the build failed ($OUT/build.log)" >&2; exit 1; }

echo "gpu-mediator fuzzing benchmark: $RUNS inputs per target, $(nproc) CPUs${FUZZ_ARGS:+, libFuzzer options $FUZZ_ARGS}"
for t in $TARGETS; do
  corpus=$OUT/$t/corpus
  mkdir -p "$corpus" "$OUT/$t/crashes"
  case $t in
  fuzz-vtest-parser | fuzz-predict-ctx) cp -n tests/data/vtest/*.vtest "$corpus/" ;;
  esac
  start=$(date +%s.%N)
  rc=0
  # shellcheck disable=SC2086 # FUZZ_ARGS: one option per word
  ASAN_OPTIONS=detect_leaks=1 "$BUILD_DIR/tests/fuzz/$t" -runs="$RUNS" -print_final_stats=1 ${FUZZ_ARGS:-} \
    -artifact_prefix="$OUT/$t/crashes/" "$corpus" >"$OUT/$t/log" 2>&1 || rc=$?
  end=$(date +%s.%N)
  python3 - "$t" "$OUT/$t/log" "$start" "$end" "$rc" "$corpus" <<'PY'
import os, re, sys
name, log, start, end, rc, corpus = sys.argv[1:7]
text = open(log, errors="replace").read()
runs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", text)
cov = re.findall(r"cov: (\d+) ft: (\d+)", text)
secs = float(end) - float(start)
n = int(runs[-1]) if runs else 0
print("%-18s %10d inputs in %7.1f s (%8.0f/s), cov %s ft %s, corpus %d, %s" % (
    name, n, secs, n / secs if secs else 0, cov[-1][0] if cov else "?",
    cov[-1][1] if cov else "?", len(os.listdir(corpus)),
    "no crash" if rc == "0" else "FOUND A CRASH (exit %s, see %s)" % (rc, log)))
PY
done
