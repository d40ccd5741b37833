#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks a timeline of `mediatorctl trace export --perfetto` against the
trace it came from (doc/trace-format.md, mediator/tools/trace_export.h): valid JSON
in the Trace Event format; every group record a slice on its context's
track, at its start, as long as its measured time, with its prediction,
bound, model and commands; every wait for a grant a slice on the context's
grant track and a flow from it to the group; every frame record a frame
slice (MISSED when missed) on one of its domain's frames tracks, with
release and deadline markers; the tracks named; no two slices of a track
overlapping (Perfetto nests or drops them); timestamps written with at
most three decimals (nanoseconds); nothing else. Prints what it checked;
exits 1 on the first mismatch.

    check-perfetto.py TRACE.jsonl TIMELINE.json
"""
import json
import re
import sys

NS_PER_US = 1000.0


def fail(msg):
    print("check-perfetto: " + msg, file=sys.stderr)
    sys.exit(1)


def close(a, b):
    return abs(a - b) <= 0.002  # microseconds, after float rounding


def main():
    trace_path, timeline_path = sys.argv[1:3]
    groups, frames, skipped = [], [], 0
    for line in open(trace_path, errors="replace"):
        try:
            rec = json.loads(line)
        except ValueError:
            skipped += 1
            continue
        if not isinstance(rec, dict):
            skipped += 1
        elif "type" not in rec:
            groups.append(rec)
        elif rec["type"] == "frame":
            frames.append(rec)
        else:
            skipped += 1
    text = open(timeline_path).read()
    long_ts = re.search(r'"(ts|dur)": ?-?[0-9]+\.[0-9]{4,}', text)
    if long_ts:
        fail("a time written with more than three decimals: %s" % long_ts.group(0))
    try:
        events = json.loads(text)["traceEvents"]
    except (ValueError, KeyError) as e:
        fail("%s is not a Trace Event JSON file: %s" % (timeline_path, e))

    names = {}
    for e in events:
        if e["ph"] == "M":
            key = (e["pid"], e["tid"]) if e["name"] == "thread_name" else (e["pid"], None)
            names[key] = e["args"]["name"]
    pid_of = {v[len("domain "):]: k[0] for k, v in names.items() if k[1] is None}
    track_of = {}
    for (pid, tid), name in names.items():
        if tid is not None:
            track_of[(pid, name)] = tid

    slices = {}
    for e in events:
        if e["ph"] == "X":
            slices.setdefault((e["pid"], e["tid"], e["name"]), []).append(e)
    flows_s = {e["id"]: e for e in events if e["ph"] == "s"}
    flows_f = {e["id"]: e for e in events if e["ph"] == "f"}
    markers = {}
    for e in events:
        if e["ph"] == "i":
            markers.setdefault((e["pid"], e["name"]), set()).add(round(e["ts"], 3))

    waits = 0
    for g in groups:
        pid = pid_of.get(g["domain"])
        if pid is None:
            fail("no process for domain %s" % g["domain"])
        track = "client %d ctx %d" % (g["client"], g["ctx"])
        tid = track_of.get((pid, track))
        if tid is None or (pid, track + ": grant") not in track_of:
            fail("no tracks named '%s' in domain %s" % (track, g["domain"]))
        name = "group %d" % g["seq"]
        if "piece" in g:
            name += " piece %d/%d" % tuple(g["piece"])
        found = [s for s in slices.get((pid, tid, name), [])
                 if close(s["ts"], g["start_ns"] / NS_PER_US)]
        if len(found) != 1:
            fail("%s %s: %d slices at its start, not 1" % (track, name, len(found)))
        s = found[0]
        a = s["args"]
        if not close(s["dur"], (g["end_ns"] - g["start_ns"]) / NS_PER_US):
            fail("%s %s: lasts %s us, the trace says %s ns" % (track, name, s["dur"],
                                                               g["end_ns"] - g["start_ns"]))
        for key in ("measured", "predicted", "bound"):
            if not close(a[key + "_us"], g[key + "_ns"] / NS_PER_US):
                fail("%s %s: %s_us %s, the trace says %s ns" % (track, name, key,
                                                                a[key + "_us"], g[key + "_ns"]))
        for key in ("model", "young", "grant", "cmds"):
            if a.get(key) != g.get(key):
                fail("%s %s: %s %r, the trace says %r" % (track, name, key, a.get(key),
                                                          g.get(key)))
        request = g.get("request_ns", g["dispatch_ns"])
        if request < g["dispatch_ns"]:
            waits += 1
            gtid = track_of[(pid, track + ": grant")]
            w = [x for x in slices.get((pid, gtid, name), [])
                 if close(x["ts"], request / NS_PER_US)]
            if len(w) != 1 or not close(w[0]["dur"], (g["dispatch_ns"] - request) / NS_PER_US):
                fail("%s %s: no grant-wait slice from its request to its dispatch" % (track, name))
            flow = [i for i, f in flows_s.items() if f["pid"] == pid and f["tid"] == gtid
                    and close(f["ts"], request / NS_PER_US)]
            if len(flow) != 1 or flow[0] not in flows_f:
                fail("%s %s: no flow from its grant wait" % (track, name))
            end = flows_f[flow[0]]
            if end["tid"] != tid or not close(end["ts"], g["start_ns"] / NS_PER_US):
                fail("%s %s: its flow does not end at the group" % (track, name))
    if len(flows_s) != waits or len(flows_f) != waits:
        fail("%d flows for %d waits" % (len(flows_s), waits))

    missed = 0
    for f in frames:
        pid = pid_of[f["domain"]]
        tids = [t for (p, n), t in track_of.items()
                if p == pid and (n == "frames" or n.startswith("frames "))]
        startup = f.get("startup", False)
        name = "start-up frame" if startup else "MISSED frame" if f["missed"] else "frame"
        missed += f["missed"] and not startup
        end = f["end_ns"] or f["deadline_ns"]
        found = [s for tid in tids for s in slices.get((pid, tid, name), [])
                 if close(s["ts"], f["release_ns"] / NS_PER_US)
                 and close(s["dur"], max(end - f["release_ns"], 0) / NS_PER_US)]
        if len(found) != 1:
            fail("domain %s: frame released at %d: %d '%s' slices" % (f["domain"],
                                                                   f["release_ns"], len(found), name))
        for marker, ns in (("release", f["release_ns"]), ("deadline", f["deadline_ns"])):
            if round(ns / NS_PER_US, 3) not in markers.get((pid, marker), set()):
                fail("domain %s: no %s marker at %d" % (f["domain"], marker, ns))
    # No two slices of a track overlap (touching is fine).
    tracks = {}
    for e in events:
        if e["ph"] == "X":
            tracks.setdefault((e["pid"], e["tid"]), []).append(e)
    for (pid, tid), track in tracks.items():
        track.sort(key=lambda e: (e["ts"], e["dur"]))
        for a, b in zip(track, track[1:]):
            if b["ts"] < a["ts"] + a["dur"] - 0.002:
                fail("track %s of process %d: '%s' at %s us starts before '%s' at %s us "
                     "(%s us long) ends" % (names.get((pid, tid), tid), pid, b["name"], b["ts"],
                                            a["name"], a["ts"], a["dur"]))
    gpu = sum(1 for e in events if e["ph"] == "X" and e.get("cat") == "gpu")
    frame_slices = sum(1 for e in events if e["ph"] == "X" and e.get("cat") == "frame")
    if gpu != len(groups) or frame_slices != len(frames):
        fail("%d group slices and %d frame slices for %d groups and %d frames" %
             (gpu, frame_slices, len(groups), len(frames)))
    print("check-perfetto: %d groups, %d grant waits with flows, %d frames (%d missed), "
          "%d domains, %d lines skipped: all in the timeline, on %d tracks none of whose "
          "slices overlap" % (len(groups), waits, len(frames), missed, len(pid_of), skipped,
                              len(tracks)))


if __name__ == "__main__":
    main()
