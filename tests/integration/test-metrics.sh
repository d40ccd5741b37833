#!/bin/bash
# SPDX-License-Identifier: MIT
# `mediatorctl metrics`: Prometheus' text exposition format
# (mediator/tools/metrics_text.h). A run traced from mediatord's start (the 60 Hz
# cluster client in the safety domain, long-draws in the other); once
# every frame closed, the metrics are checked against that trace and
# show-budgets by check-metrics.py: the text parses (Debian's
# python3-prometheus-client), each domain's group GPU time, grant wait and
# frame latency histograms hold exactly the trace's groups and frames
# (count, sum, every bucket), its counters and gauges are show-budgets'.
# mediatord unreachable: exit status 3 and nothing on standard output.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3
"$PY" -c 'import prometheus_client.parser' 2>/dev/null ||
  fail "python3-prometheus-client is missing (scripts/install-deps.sh)"
setup_rendering budget 1

traced_two_domain_run "$TMP/trace.jsonl"
sleep 1 # the last frame closes after its idle gap
ctl metrics >"$TMP/metrics.txt" || fail "mediatorctl metrics failed"
budgets_json >"$TMP/budgets.json" || fail "show-budgets failed"
ctl trace stop >&2 || fail "trace stop failed"
"$PY" "$TESTS_SRCDIR/integration/check-metrics.py" "$TMP/metrics.txt" "$TMP/trace.jsonl" \
  "$TMP/budgets.json" >&2 || fail "the metrics do not match the trace: $(head -40 "$TMP/metrics.txt")"
grep -q '^gpu_mediator_frame_latency_seconds_bucket{domain="'"$DOMAIN_A"'",class="safety",le="0.016667"} [1-9]' \
  "$TMP/metrics.txt" || fail "no cluster frame within 16.667 ms in the frame latency histogram"

gm_stop_mediatord || fail "mediatord did not stop cleanly"
ctl metrics >"$TMP/none.txt" 2>"$TMP/none.err" && rc=0 || rc=$?
[ $rc = 3 ] && [ ! -s "$TMP/none.txt" ] ||
  fail "metrics without mediatord: exit status $rc, output '$(head -3 "$TMP/none.txt")'"
log "metrics: $(grep -c '^gpu_mediator_' "$TMP/metrics.txt") samples; without mediatord: exit 3"
log "PASS"
