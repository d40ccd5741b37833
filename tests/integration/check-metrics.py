#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Checks `mediatorctl metrics` (Prometheus text format) against the trace
of the same run and show-budgets: the text parses (prometheus_client's
parser, Debian's python3-prometheus-client); per domain, the group GPU time
histogram holds exactly the trace's groups (count, sum and every bucket),
the grant wait histogram their waits, the frame latency histogram the
finished frames; the counters and gauges equal show-budgets' figures.

    check-metrics.py METRICS.txt TRACE.jsonl BUDGETS.json
"""
import json
import sys

from prometheus_client.parser import text_string_to_metric_families


def fail(msg):
    print("check-metrics: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    text, trace_path, budgets_path = sys.argv[1:4]
    try:
        families = {f.name: f for f in text_string_to_metric_families(open(text).read())}
    except Exception as e:  # the parser's own errors
        fail("not Prometheus text format: %s" % e)
    budgets = json.load(open(budgets_path))
    groups, frames = {}, {}
    for line in open(trace_path):
        r = json.loads(line)
        if r.get("type") == "frame":
            if r["end_ns"]:
                frames.setdefault(r["domain"], []).append(max(r["end_ns"] - r["release_ns"], 0))
        elif "type" not in r:
            g = groups.setdefault(r["domain"], {"time": [], "wait": []})
            g["time"].append(r["end_ns"] - r["start_ns"])
            g["wait"].append(max(r["dispatch_ns"] - r.get("request_ns", r["dispatch_ns"]), 0))

    def histogram(name, domain):
        fam = families.get(name)
        if fam is None or fam.type != "histogram":
            fail("no histogram %s" % name)
        buckets, count, total = {}, None, None
        for s in fam.samples:
            if s.labels.get("domain") != domain:
                continue
            if s.name == name + "_bucket":
                buckets[s.labels["le"]] = s.value
            elif s.name == name + "_count":
                count = s.value
            elif s.name == name + "_sum":
                total = s.value
        return buckets, count, total

    def check_histogram(name, domain, values):
        buckets, count, total = histogram(name, domain)
        if count != len(values):
            fail("%s{domain=%s}: count %s, the trace has %d" % (name, domain, count, len(values)))
        if abs(total - sum(values) / 1e9) > 1e-6:
            fail("%s{domain=%s}: sum %s, the trace's %s" % (name, domain, total, sum(values) / 1e9))
        for le, n in buckets.items():
            bound = float("inf") if le == "+Inf" else round(float(le) * 1e9)
            want = sum(1 for v in values if v <= bound)
            if n != want:
                fail("%s{domain=%s,le=%s}: %s, the trace has %d" % (name, domain, le, n, want))
        return len(values)

    checked = []
    for d in budgets["domains"]:
        name = d["name"]
        g = groups.get(name, {"time": [], "wait": []})
        n = check_histogram("gpu_mediator_group_gpu_seconds", name, g["time"])
        check_histogram("gpu_mediator_grant_wait_seconds", name, g["wait"])
        f = check_histogram("gpu_mediator_frame_latency_seconds", name, frames.get(name, []))
        for metric, member, scale in (("gpu_mediator_groups", "groups", 1),
                                      ("gpu_mediator_gpu_seconds", "used_us", 1e-6),
                                      ("gpu_mediator_frames", "frames", 1),
                                      ("gpu_mediator_deadline_misses", "deadline_misses", 1),
                                      ("gpu_mediator_budget_seconds", "budget_us", 1e-6),
                                      ("gpu_mediator_clients", "clients", 1)):
            fam = families.get(metric)
            if fam is None:
                fail("no metric %s" % metric)
            samples = [s for s in fam.samples if s.labels.get("domain") == name]
            if member not in d:
                continue
            if len(samples) != 1 or abs(samples[0].value - d[member] * scale) > 1e-6:
                fail("%s{domain=%s}: %s, show-budgets says %s" %
                     (metric, name, [s.value for s in samples], d[member]))
            if samples[0].labels.get("class") != d["class"]:
                fail("%s{domain=%s}: class label %s" % (metric, name, samples[0].labels))
        checked.append("%s: %d groups, %d frames" % (name, n, f))
    # The invariants' counters: one series each, as show-budgets counts them.
    inv = {s.labels["invariant"]: s.value
           for s in families["gpu_mediator_invariant_violations"].samples} \
        if "gpu_mediator_invariant_violations" in families else None
    if inv != {k: float(v) for k, v in budgets["invariant_violations"].items()}:
        fail("gpu_mediator_invariant_violations_total: %s, show-budgets says %s" %
             (inv, budgets["invariant_violations"]))
    info = families.get("gpu_mediator_build_info")
    if info is None or len(info.samples) != 1 or not info.samples[0].labels.get("version"):
        fail("no gpu_mediator_build_info with a version")
    checked.append("%d invariants, build %s" % (len(inv), info.samples[0].labels["version"]))
    print("check-metrics: %d families parse; %s: as in the trace and show-budgets" %
          (len(families), "; ".join(checked)))


if __name__ == "__main__":
    main()
