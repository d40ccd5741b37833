#!/bin/bash
# SPDX-License-Identifier: MIT
# `mediatorctl metrics`: Prometheus' text exposition format
# (mediator/tools/metrics_text.h). A run traced from mediatord's start (the 60 Hz
# cluster client in the safety domain, long-draws in the other); once
# every frame closed, the metrics are checked against that trace and
# show-budgets by check-metrics.py: the text parses (Debian's
# python3-prometheus-client), each domain's group GPU time, grant wait and
# frame latency histograms hold exactly the trace's groups and frames
# (count, sum, every bucket), its counters and gauges are show-budgets';
# Prometheus' promtool checks it without a warning.
# show-budgets --watch into a file and as JSON lines. mediatord
# unreachable: exit status 3 and nothing on standard output.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
PY=/usr/bin/python3
"$PY" -c 'import prometheus_client.parser' 2>/dev/null ||
  fail "python3-prometheus-client is missing (scripts/install-deps.sh)"
PROMTOOL=$(command -v promtool || echo /var/cache/gpu-mediator-tests/promtool)
[ -x "$PROMTOOL" ] ||
  skip "no promtool (scripts/install-deps.sh takes it out of Debian's prometheus package)"
setup_rendering budget 1

traced_two_domain_run "$TMP/trace.jsonl"
sleep 1 # the last frame closes after its idle gap
ctl metrics >"$TMP/metrics.txt" || fail "mediatorctl metrics failed"
budgets_json >"$TMP/budgets.json" || fail "show-budgets failed"
ctl trace stop >&2 || fail "trace stop failed"
"$PY" "$TESTS_SRCDIR/integration/check-metrics.py" "$TMP/metrics.txt" "$TMP/trace.jsonl" \
  "$TMP/budgets.json" >&2 || fail "the metrics do not match the trace: $(head -40 "$TMP/metrics.txt")"
# Prometheus' own checker: no error, no lint warning.
"$PROMTOOL" check metrics <"$TMP/metrics.txt" >"$TMP/promtool.txt" 2>&1 ||
  fail "promtool check metrics: $(cat "$TMP/promtool.txt")"
[ ! -s "$TMP/promtool.txt" ] || fail "promtool check metrics warns: $(cat "$TMP/promtool.txt")"
grep -q '^gpu_mediator_frame_latency_seconds_bucket{domain="'"$DOMAIN_A"'",class="safety",le="0.016667"} [1-9]' \
  "$TMP/metrics.txt" || fail "no cluster frame within 16.667 ms in the frame latency histogram"
# Each series' HELP is the text show-budgets --help gives for its member
# (one text, mediator/tools/budget_fields.h), but for the two series of
# mediatord itself.
"$MEDIATORCTL" show-budgets --help >"$TMP/show-budgets-help.txt" || fail "show-budgets --help failed"
"$PY" - "$TMP/metrics.txt" "$TMP/show-budgets-help.txt" <<'PY' >&2 || fail "metrics' help and the CLI's differ"
import sys
cli = " ".join(open(sys.argv[2]).read().split())
own = {"gpu_mediator_invariant_violations_total", "gpu_mediator_build_info"}
helps = [l[7:].rstrip("\n").split(" ", 1) for l in open(sys.argv[1]) if l.startswith("# HELP ")]
bad = [n for n, t in helps if n not in own and " ".join(t.split()) not in cli]
if bad or len(helps) < 20:
    print("HELP texts show-budgets --help does not give (of %d): %s" % (len(helps), bad))
    sys.exit(1)
PY
# Into a file (what gpu-mediator-metrics.timer does): the same series,
# through a temporary file renamed over an old one, none left beside it;
# a directory it cannot write: an error, the old file untouched.
mkdir "$TMP/textfile"
echo stale >"$TMP/textfile/gpu-mediator.prom"
ctl metrics "$TMP/textfile/gpu-mediator.prom" || fail "mediatorctl metrics FILE failed"
[ "$(ls "$TMP/textfile")" = gpu-mediator.prom ] || fail "metrics FILE left: $(ls "$TMP/textfile")"
diff <(sed -n 's/^\(gpu_mediator_[a-z_]*\).*/\1/p' "$TMP/metrics.txt" | sort -u) \
  <(sed -n 's/^\(gpu_mediator_[a-z_]*\).*/\1/p' "$TMP/textfile/gpu-mediator.prom" | sort -u) >&2 ||
  fail "metrics FILE has other series than metrics on stdout"
"$PY" -c 'import sys, prometheus_client.parser as p; list(p.text_string_to_metric_families(open(sys.argv[1]).read()))' \
  "$TMP/textfile/gpu-mediator.prom" || fail "metrics FILE does not parse"
cp "$TMP/textfile/gpu-mediator.prom" "$TMP/textfile.before"
ctl metrics "$TMP/absent-dir/gpu-mediator.prom" 2>"$TMP/metrics-file.err" && fail "metrics into a missing directory succeeded"
grep -F "absent-dir" "$TMP/metrics-file.err" >/dev/null || fail "metrics FILE's error names no path: $(cat "$TMP/metrics-file.err")"
cmp -s "$TMP/textfile.before" "$TMP/textfile/gpu-mediator.prom" || fail "a failed metrics FILE changed the file"

# show-budgets --watch into a file (no terminal): plain refreshes appended,
# no terminal escapes, the header the same width every time, a rate
# column; with --json one object a line, each with its time and, from the
# second on, each domain's rates. SIGINT ends it with status 0.
timeout --preserve-status -s INT 3.5 "$MEDIATORCTL" --socket "$CONTROL" show-budgets --watch \
  >"$TMP/watch.txt" || fail "show-budgets --watch ended with status $?"
! grep -q $'\033' "$TMP/watch.txt" || fail "show-budgets --watch wrote terminal escapes into a file"
refreshes=$(grep -c '^DOMAIN ' "$TMP/watch.txt")
[ "$refreshes" -ge 3 ] || fail "show-budgets --watch: $refreshes refreshes in 3.5 s: $(cat "$TMP/watch.txt")"
[ "$(grep '^DOMAIN ' "$TMP/watch.txt" | sort -u | wc -l)" = 1 ] ||
  fail "show-budgets --watch: its header changed: $(grep '^DOMAIN ' "$TMP/watch.txt" | sort -u)"
grep -Eq '^DOMAIN .* GPU/S +GRP/S ' "$TMP/watch.txt" || fail "show-budgets --watch has no rate columns"
timeout --preserve-status -s INT 3.5 "$MEDIATORCTL" --socket "$CONTROL" show-budgets --watch --json \
  >"$TMP/watch.jsonl" || fail "show-budgets --watch --json ended with status $?"
jq -se 'length >= 3 and all(.[]; .time != null and (.domains | length) == 2) and
  all(.[1:][]; all(.domains[]; .gpu_share_1s >= 0 and .groups_1s >= 0))' "$TMP/watch.jsonl" >/dev/null ||
  fail "show-budgets --watch --json: $(head -c 600 "$TMP/watch.jsonl")"
log "show-budgets --watch: $refreshes plain refreshes into a file, $(wc -l <"$TMP/watch.jsonl") JSON lines"

gm_stop_mediatord || fail "mediatord did not stop cleanly"
ctl metrics >"$TMP/none.txt" 2>"$TMP/none.err" && rc=0 || rc=$?
[ $rc = 3 ] && [ ! -s "$TMP/none.txt" ] ||
  fail "metrics without mediatord: exit status $rc, output '$(head -3 "$TMP/none.txt")'"
log "metrics: $(grep -c '^gpu_mediator_' "$TMP/metrics.txt") samples; without mediatord: exit 3"
log "PASS"
