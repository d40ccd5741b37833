#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Plots of a bench/isolation run (gnuplot, PNG), from what it keeps in OUT:

  LOAD-frame-latency.png  each cluster frame's latency (release to end, ms)
                          over the run's time, per configuration of the load
                          (fifo, budget-whole, budget), with the deadline;
                          missed frames marked, unfinished ones at the top;
  busy-breakdown.png      per load and configuration, the GPU's time: busy,
                          idle while a group waited for its grant (held for
                          the cluster, or the grant's round trip), idle with
                          nothing waiting.

    isolation.py OUT [PLOTS]     (PLOTS default OUT/plots)
Needs gnuplot (gnuplot-nox, with the pngcairo terminal).
"""
import glob
import json
import os
import subprocess
import sys

CONFIGS = ("fifo", "budget-whole", "budget")


def frames_of(trace):
    """(time s from the first frame, latency ms, missed, unfinished) per frame."""
    out = []
    for line in open(trace, errors="replace"):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("type") == "frame":
            out.append(r)
    out.sort(key=lambda r: r["release_ns"])
    if not out:
        return [], None
    t0 = out[0]["release_ns"]
    deadline_ms = (out[0]["deadline_ns"] - out[0]["release_ns"]) / 1e6
    rows = []
    for r in out:
        unfinished = r["end_ns"] == 0
        latency = 0 if unfinished else max(r["end_ns"] - r["release_ns"], 0) / 1e6
        rows.append(((r["release_ns"] - t0) / 1e9, latency, r["missed"], unfinished))
    return rows, deadline_ms


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def latency_plot(out_dir, plots, load):
    series, deadline = [], None
    top = None
    for config in CONFIGS:
        trace = os.path.join(out_dir, "%s-%s-trace.jsonl" % (load, config))
        if not os.path.exists(trace):
            continue
        rows, d = frames_of(trace)
        if not rows:
            continue
        deadline = deadline or d
        top = max(3 * deadline, 40)
        dat = os.path.join(plots, "%s-%s-frames.dat" % (load, config))
        with open(dat, "w") as f:
            for t, lat, missed, unfinished in rows:
                # Unfinished frames (and any past the top) are drawn at the top.
                f.write("%.4f %.4f %d\n" % (t, top if unfinished else min(lat, top),
                                            1 if missed else 0))
        misses = sum(1 for r in rows if r[2])
        series.append((config, dat, len(rows), misses))
    if not series:
        return None
    png = os.path.join(plots, "%s-frame-latency.png" % load)
    plots_cmd = []
    colors = {"fifo": "#d62728", "budget-whole": "#ff7f0e", "budget": "#1f77b4"}
    for config, dat, n, misses in series:
        plots_cmd.append("'%s' using 1:2 with points pt 7 ps 0.3 lc rgb '%s' "
                         "title '%s: %d frames, %d missed'" % (dat, colors[config], config, n,
                                                                misses))
    plots_cmd.append("%g with lines lw 2 lc rgb 'black' dt 2 title 'deadline %.1f ms'" %
                     (deadline, deadline))
    gnuplot("""set terminal pngcairo size 1100,600 font 'DejaVu Sans,10'
set output '%s'
set title 'Cluster frame latency, load "%s" in the infotainment domain (bench/isolation)'
set xlabel 'time (s)'
set ylabel 'release to end (ms); at the top: unfinished or longer'
set yrange [0:%g]
set key outside top center horizontal
set grid
plot %s
""" % (png, load, top * 1.05, ", ".join(plots_cmd)))
    return png


def busy_plot(out_dir, plots):
    rows = []
    order = {c: i for i, c in enumerate(CONFIGS)}
    paths = glob.glob(os.path.join(out_dir, "*.json"))
    for path in sorted(paths, key=lambda p: (os.path.basename(p).split("-")[0],
                                             order.get(os.path.basename(p)[:-5].split("-", 1)[-1], 9))):
        name = os.path.basename(path)[:-5]
        if name.endswith("-cluster") or "-" not in name:
            continue
        load, config = name.split("-", 1)
        if config not in CONFIGS:
            continue
        r = json.load(open(path))
        if "trace_busy" not in r:
            continue
        rows.append(("%s %s" % (load, config), r["trace_busy"] * 100,
                     r.get("idle_held", 0) * 100, r.get("idle_nothing", 0) * 100))
    if not rows:
        return None
    dat = os.path.join(plots, "busy.dat")
    with open(dat, "w") as f:
        for label, busy, held, nothing in rows:
            f.write('"%s" %.2f %.2f %.2f\n' % (label, busy, held, nothing))
    png = os.path.join(plots, "busy-breakdown.png")
    gnuplot("""set terminal pngcairo size 1000,550 font 'DejaVu Sans,10'
set output '%s'
set title 'Where the GPU time went (bench/isolation, over each flood)'
set ylabel 'share of the wall time (%%)'
set yrange [0:100]
set style data histograms
set style histogram rowstacked
set style fill solid 0.8 border -1
set boxwidth 0.6
set key outside top center horizontal
set xtics rotate by -20
plot '%s' using 2:xtic(1) title 'busy' lc rgb '#1f77b4', \
     '' using 3 title 'idle, a group waiting for its grant' lc rgb '#ff7f0e', \
     '' using 4 title 'idle, nothing waiting' lc rgb '#bbbbbb'
""" % (png, dat))
    return png


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: isolation.py OUT [PLOTS]")
    out_dir = sys.argv[1]
    plots = sys.argv[2] if len(sys.argv) == 3 else os.path.join(out_dir, "plots")
    os.makedirs(plots, exist_ok=True)
    loads = sorted({os.path.basename(p).split("-")[0]
                    for p in glob.glob(os.path.join(out_dir, "*-trace.jsonl"))})
    made = [p for p in [latency_plot(out_dir, plots, load) for load in loads] +
            [busy_plot(out_dir, plots)] if p]
    for p in made:
        print("plot: " + p)


if __name__ == "__main__":
    main()
