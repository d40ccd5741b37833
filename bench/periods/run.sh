#!/bin/bash
# SPDX-License-Identifier: MIT
# The learned period on a loaded host (issue 33; not a test). Runs
# build/bench/period-replay (period-replay.c says what it does):
#  - on its model of a cluster client starved of the CPU, at 60, 30 and
#    60 Hz, at three loads: LOADS, each "LATE_SHARE WAKE_MS WORK_MS"
#    (default: "0.02 1 3", about CI's host on 2026-11-29, whose
#    cluster-client skipped 6 to 8 % of its frames by its own count with a
#    median latency of 5 to 6 ms; "0.03 1.5 3"; "0.05 1.5 3", a client
#    skipping 12 %), SEEDS runs each (default 20);
#  - on the cluster's releases in each TRACE given (mediatorctl trace, as
#    test-learned-period keeps with KEEP_TMP=1 or bench/displays writes),
#    whose true periods come from CLUSTER_LOG (cluster-client's output:
#    its "GM-CLUSTER start" and "GM-CLUSTER rate" lines).
# Each prints how many releases the followed period was more than 2 % off
# from the tenth period after each change on, and, as the baseline in the
# same run, how many a domain judged by its shortest configured period
# (16.67 ms) would be.
#
# Usage: bench/periods/run.sh [TRACE CLUSTER_LOG]...
# Environment: LOADS, SEEDS, DOMAIN (the traces' safety domain, default
# cluster), BUILD_DIR (default build/).
set -euo pipefail

cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
BUILD_DIR=${BUILD_DIR:-build}
REPLAY=$BUILD_DIR/bench/period-replay
SEEDS=${SEEDS:-20}
DOMAIN=${DOMAIN:-cluster}
LOADS=${LOADS:-"0.02 1 3;0.03 1.5 3;0.05 1.5 3"}

die() {
  echo "bench/periods: $*" >&2
  exit 1
}

[ -x "$REPLAY" ] || die "$REPLAY not built (meson setup $BUILD_DIR && ninja -C $BUILD_DIR)"
[ $(($# % 2)) -eq 0 ] || die "usage: $0 [TRACE CLUSTER_LOG]..."
command -v jq >/dev/null || [ $# -eq 0 ] || die "jq is needed to read traces (apt-get install jq)"

IFS=';' read -r -a loads <<<"$LOADS"
for load in "${loads[@]}"; do
  # shellcheck disable=SC2086 # a load is three words
  "$REPLAY" model "$SEEDS" $load | sed -n '1p;$p'
done

# releases TRACE LOG: "release_ns true_period_ns" for each of DOMAIN's
# frames in TRACE, the true period from LOG's rate lines.
releases() {
  awk '
    BEGIN { n = 0 }
    FNR == NR {
      if ($1 == "GM-CLUSTER" && ($2 == "start" || $2 == "rate")) {
        for (i = 3; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
        if ($2 == "start") first = v["period_us"] * 1000
        else { at[n] = v["release_ns"] + 0; p[n] = v["period_us"] * 1000; n++ }
      }
      next
    }
    {
      q = first
      for (i = 0; i < n; i++) if ($1 + 0 >= at[i]) q = p[i]
      print $1, q
    }' "$2" <(jq -r --arg d "$DOMAIN" 'select(.type == "frame" and .domain == $d) | .release_ns' "$1")
}

while [ $# -gt 0 ]; do
  [ -r "$1" ] || die "cannot read the trace $1"
  grep -q '^GM-CLUSTER start ' "$2" 2>/dev/null || die "$2 has no GM-CLUSTER start line"
  printf '%s: ' "$1"
  releases "$1" "$2" | "$REPLAY" replay
  shift 2
done
