#!/bin/bash
# SPDX-License-Identifier: MIT
# Isolation benchmark (not a test): does the cluster keep every frame while
# infotainment floods the GPU?
#
# Same run, two configurations of mediatord (policy fifo, then policy
# budget), each with two domains:
#   cluster       safety, 60 Hz: guest-shim/cluster-client renders a
#                 fixed instrument scene every 16.67 ms and records whether
#                 each frame completed by its deadline (FRAMES frames);
#   infotainment  normal, one of four loads (LOADS, default all four):
#                 fitting  guest-shim/long-draws alone (full-screen
#                          draws with an expensive shader, LONG_ITER
#                          iterations, one group each): groups that fit the
#                          gaps the cluster leaves;
#                 heavy    the same plus glmark2-es2 heavy scenes (refract,
#                          shadow, terrain) in a loop, whose groups (up to
#                          400 ms on llvmpipe) fit no gap: they wait
#                          max_defer_us and then, as OVERSIZE says, are
#                          refused (unschedulable, the default: their
#                          client is disconnected and glmark2 starts again)
#                          or run at a gap's start (run: each costs the
#                          cluster the frames it spans);
#                 multi    long-draws with MULTI_DRAWS draws of 960x540 per group
#                          (default 8, one shader iteration: ~16 ms groups
#                          here), which a worker can cut into pieces;
#                 single   long-draws with one draw per group of
#                          SINGLE_ITER iterations (default 3: ~16 ms; 8 gave
#                          ~24 ms, 1.5 periods, on 2026-11-27), which a
#                          worker cuts into scissor tiles with pieces on,
#                          and admission must place right after a cluster
#                          frame whole.
# Each load runs under policy fifo (whole groups: the baseline), under
# policy budget with whole groups (piece_us = 0, "budget-whole") and under
# policy budget with pieces (piece_us = PIECE_US, default 4000, "budget").
# Prints per configuration: cluster frames, deadline misses (the client's
# own count and mediatord's), p50/p99 frame latency, infotainment
# throughput (groups/s of its domain, long-draws groups/s, glmark2 frames/s)
# and how busy the GPU was (sum of all domains' measured GPU time / wall
# time), the idle GPU time split by whether a group was waiting for its
# grant meanwhile (held: kept idle for the cluster, or the grant's round
# trip) or not (no work waiting), pieces and how many overran their
# bounds, and the CPU steal of the run (the share of CPU time the
# hypervisor gave to other guests: how noisy the host was); then the ratios
# budget/fifo. Also:
#   grant path:       dispatch_ns - request_ns of a lone glmark2 client
#                     under fifo (nothing else waits): over all groups,
#                     over those that took the grant board's offer (no
#                     round trip) and over those that asked (the round
#                     trip worker -> mediatord -> worker), median and p99;
#                     and how many groups of each budget run took the offer;
#   split cost:       the multi load alone under fifo, whole groups and
#                     pieces of PIECE_US: long-draws groups/s of each and
#                     the cost per extra piece; and glmark2's build,
#                     texture, shading and refract scenes alone, fps with
#                     whole groups and with pieces (workers cut only while
#                     a safety domain is active, so alone nothing is cut:
#                     this shows that pieces on cost nothing then; the
#                     cost of cutting is the budget runs' beside the
#                     cluster against budget-whole);
#   mediator-sim:     time to replay 8 domains x SIM_GROUPS groups.
#
# First, unless ALONE=0, the cluster runs FRAMES frames alone (policy
# budget, no infotainment): the misses the host's own noise causes, which
# no policy can prevent.
#
# Environment: FRAMES (default 10000), OVERSIZE (mediatord's oversize,
# default unschedulable), GUARD_US (the cluster's guard_us, the time kept
# free before its frames for overruns, default 0), CLUSTER_ALONE_S (how long the
# cluster runs before the flood starts, default 2), LONG_ITER (long-draws' shader
# iterations, default 2: ~9 ms groups on these machines, which fit the
# gaps the cluster leaves), SIM_GROUPS (default 100000), BUILD_DIR
# (default build/), OUT (kept traces, client reports, mediatord logs and, with
# gnuplot, plots/*.png: bench/plots/isolation.py; default
# bench-isolation-out/).
set -euo pipefail

cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
SRCROOT=$PWD
FRAMES=${FRAMES:-10000}
LOADS=${LOADS:-fitting heavy multi single}
LONG_ITER=${LONG_ITER:-2}
MULTI_DRAWS=${MULTI_DRAWS:-8}
SINGLE_ITER=${SINGLE_ITER:-3}
PIECE_US=${PIECE_US:-4000}
CLUSTER_ALONE_S=${CLUSTER_ALONE_S:-2}
OVERSIZE=${OVERSIZE:-unschedulable}
GUARD_US=${GUARD_US:-0}
SIM_GROUPS=${SIM_GROUPS:-100000}
ALONE=${ALONE:-1}
OUT=${OUT:-$SRCROOT/bench-isolation-out}
GM_NAME=bench
source scripts/lib/gm-common.sh

gm_require_cmd Xvfb xvfb
gm_require_cmd glmark2-es2 glmark2-es2-x11
gm_require_cmd jq jq
gm_require_cmd python3 python3
gm_ensure_built "$CLUSTER_CLIENT"

gm_tmpdir gm-isolation
mkdir -p "$OUT"
gm_start_xvfb 1920x1080x24
CONTROL=$TMP/run/control.sock

# start_mediatord POLICY [PIECE_US]: a fresh mediatord with the two domains.
start_mediatord() {
  rm -rf "$TMP/run" && mkdir -p "$TMP/run"
  gm_write_config "$TMP/run/mediatord.conf" \
    "[mediator]" control_socket="$CONTROL" state_dir="$TMP/run/state" policy="$1" \
    max_inflight=1 oversize="$OVERSIZE" \
    "[domain cluster]" class=safety period_us=16667 budget_us=5000 guard_us="$GUARD_US" \
    vtest_socket="$TMP/run/cluster.vtest" \
    "[domain infotainment]" class=normal period_us=16667 budget_us=11000 \
    piece_us="${2:-$PIECE_US}" vtest_socket="$TMP/run/ivi.vtest"
  gm_start_mediatord "$TMP/run/mediatord.conf" "$TMP/run/mediatord.log"
}

# flood_loop: glmark2-es2 heavy scenes in the infotainment domain until
# SIGTERM, which it passes on to the running glmark2.
flood_loop() {
  local client=''
  trap 'kill -TERM $client 2>/dev/null; exit 0' TERM
  while :; do
    # Not through gm_client: $! must be the client's pid (mediator-exec execs it).
    GALLIUM_DRIVER=virpipe "$MEDIATOR_EXEC" --socket "$TMP/run/ivi.vtest" -- glmark2-es2 \
      --off-screen -b refract:duration=20 -b shadow:duration=20 -b terrain:duration=20 \
      >>"$TMP/run/glmark.out" 2>&1 &
    client=$!
    wait "$client" || sleep 0.2
  done
}

# long_draws_args LOAD: long-draws' options for LOAD.
long_draws_args() {
  case $1 in
  multi) echo "--draws $MULTI_DRAWS --iterations 1 --size 960x540" ;;
  single) echo "--draws 1 --iterations $SINGLE_ITER" ;;
  *) echo "--iterations $LONG_ITER" ;;
  esac
}

# one_config POLICY LOAD [NAME PIECE_US]: runs the cluster with the flood;
# writes $OUT/LOAD-NAME.json (NAME defaults to POLICY).
# The cluster starts first and runs alone for CLUSTER_ALONE_S seconds (as in
# a car, where the cluster is up before infotainment), then the flood starts
# and lasts until the cluster's last frame. Misses count over all FRAMES
# frames; throughput and GPU busy over the flood.
one_config() {
  local policy=$1 load=$2 name=${3:-$1} start before after t0 t1 long_pid='' cluster_pid flood_pid=''
  start_mediatord "$policy" "${4:-$PIECE_US}"
  : >"$TMP/run/glmark.out"
  gm_ctl trace start "$TMP/run/trace.jsonl" >/dev/null
  start=$(gm_budgets)
  gm_in_domain "$TMP/run/cluster.vtest" "$CLUSTER_CLIENT" --frames "$FRAMES" \
    --json /dev/fd/3 3>"$OUT/$load-$name-cluster.json" >"$TMP/run/cluster.out" 2>&1 &
  cluster_pid=$!
  sleep "$CLUSTER_ALONE_S"
  before=$(gm_budgets)
  t0=$(date +%s.%N)
  head -n 1 /proc/stat >"$TMP/run/stat0"
  if [ "$load" = heavy ]; then
    flood_loop &
    flood_pid=$!
    gm_track "$flood_pid"
  fi
  if [ "$load" != alone ]; then
    # Not through gm_in_domain: $! must be the client's pid (mediator-exec execs it).
    GALLIUM_DRIVER=virpipe EGL_PLATFORM=surfaceless "$MEDIATOR_EXEC" \
      --socket "$TMP/run/ivi.vtest" -- "$LONG_DRAWS" \
      --seconds $((FRAMES / 60 + 30)) $(long_draws_args "$load") \
      --json /dev/fd/3 3>"$TMP/run/long.json" >"$TMP/run/long.out" 2>&1 &
    long_pid=$!
    gm_track "$long_pid"
  fi
  wait "$cluster_pid" || gm_die "$name: cluster-client failed: $(tail -3 "$TMP/run/cluster.out")"
  t1=$(date +%s.%N)
  head -n 1 /proc/stat >"$TMP/run/stat1"
  after=$(gm_budgets)
  if [ -n "$long_pid" ]; then
    # long-draws may be gone already (refused as unschedulable, or failed): say so.
    kill -TERM "$long_pid" 2>/dev/null ||
      echo "bench: $name: long-draws had stopped before the cluster's last frame: $(tail -2 "$TMP/run/long.out")" >&2
    wait "$long_pid" 2>/dev/null || true
  fi
  if [ -n "$flood_pid" ]; then
    kill -TERM "$flood_pid" 2>/dev/null || :
    wait "$flood_pid" 2>/dev/null || true
  fi
  gm_ctl trace stop >/dev/null
  cp "$TMP/run/trace.jsonl" "$OUT/$load-$name-trace.jsonl"
  gm_stop_mediatord || true
  cp "$TMP/run/mediatord.log" "$OUT/$load-$name-mediatord.log"
  cp "$TMP/run/mediatord.conf" "$OUT/$load-$name.conf"
  echo "$start" >"$TMP/run/start.json"
  echo "$before" >"$TMP/run/before.json"
  echo "$after" >"$TMP/run/after.json"
  python3 - "$name" "$t0" "$t1" "$OUT/$load-$name-cluster.json" "$TMP/run/long.json" \
    "$TMP/run/glmark.out" "$OUT/$load-$name.json" "$TMP/run/before.json" "$TMP/run/after.json" \
    "$TMP/run/start.json" "$TMP/run/stat0" "$TMP/run/stat1" "$OUT/$load-$name-trace.jsonl" <<'PY'
import json, re, sys
policy, t0, t1, cluster, long_json, glmark_out, out, before, after, start, stat0, stat1, trace = sys.argv[1:14]
# /proc/stat "cpu" line: user nice system idle iowait irq softirq steal ...
cpu0, cpu1 = ([int(v) for v in open(f).read().split()[1:9]] for f in (stat0, stat1))
ticks = [b - a for a, b in zip(cpu0, cpu1)]
wall = float(t1) - float(t0)
b, a, s = json.load(open(before)), json.load(open(after)), json.load(open(start))
dom = lambda j, n: next(d for d in j["domains"] if d["name"] == n)
c = json.load(open(cluster))
try:
    lg = json.load(open(long_json))
except Exception:
    lg = {"groups_per_s": 0}
fps = [float(x) for x in re.findall(r"FPS: (\d+)", open(glmark_out).read())]
res = {
    "policy": policy, "wall_s": wall,
    "frames": c["frames"], "client_misses": c["misses"], "skipped": c.get("skipped", 0),
    "p50_latency_us": c["p50_latency_us"], "p99_latency_us": c["p99_latency_us"],
    "mediatord_misses": dom(a, "cluster")["deadline_misses"] - dom(s, "cluster")["deadline_misses"],
    "ivi_groups_per_s": (dom(a, "infotainment")["groups"] - dom(b, "infotainment")["groups"]) / wall,
    "ivi_throttled": dom(a, "infotainment")["throttled"] - dom(b, "infotainment")["throttled"],
    "ivi_unschedulable": dom(a, "infotainment")["unschedulable"] - dom(b, "infotainment")["unschedulable"],
    "long_draws_per_s": lg.get("groups_per_s", 0),
    "glmark2_fps": sum(fps) / len(fps) if fps else 0,
    "gpu_busy": (sum(d["used_us"] for d in a["domains"]) - sum(d["used_us"] for d in b["domains"])) / 1e6 / wall,
    # CPU time the hypervisor gave to others while this VM wanted to run: the host's noise.
    "cpu_steal": ticks[7] / max(1, sum(ticks)),
}
# From the trace, over the flood (from the first infotainment group on): the
# GPU's idle time while some group waited for its grant (held back, or the
# grant's round trip) and while none did; pieces, and those over their bound.
groups = [g for g in map(json.loads, open(trace)) if "type" not in g]
ivi = [g for g in groups if g["domain"] == "infotainment"]
if ivi:
    lo = min(g["request_ns"] for g in ivi)
    hi = max(g["end_ns"] for g in groups)
    busy = sorted((max(g["start_ns"], lo), g["end_ns"]) for g in groups if g["end_ns"] > lo)
    waits = sorted((max(g["request_ns"], lo), g["dispatch_ns"]) for g in groups
                   if g["dispatch_ns"] > lo and g["dispatch_ns"] > g["request_ns"])
    # Idle intervals between busy ones.
    idle, t = [], lo
    for a, b in busy:
        if a > t:
            idle.append((t, a))
        t = max(t, b)
    if hi > t:
        idle.append((t, hi))
    # Merged waits, then their overlap with the idle intervals (both sorted): one sweep.
    merged = []
    for a, b in waits:
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    held, k = 0, 0
    for a, b in idle:
        while k < len(merged) and merged[k][1] <= a:
            k += 1
        m = k
        while m < len(merged) and merged[m][0] < b:
            held += min(b, merged[m][1]) - max(a, merged[m][0])
            m += 1
    idle_total = sum(b - a for a, b in idle)
    span = max(1, hi - lo)
    res["trace_busy"] = 1 - idle_total / span
    res["idle_held"] = held / span
    res["idle_nothing"] = (idle_total - held) / span
    pieces = [g for g in ivi if "piece" in g]
    res["pieces"] = len(pieces)
    res["cut_groups"] = sum(1 for g in pieces if g["piece"][0] == 1)
    res["pieces_over"] = sum(1 for g in pieces if g["measured_ns"] > g["bound_ns"])
    res["ivi_over"] = sum(1 for g in ivi if g["bound_ns"] and g["measured_ns"] > g["bound_ns"])
    res["ivi_records"] = len(ivi)
json.dump(res, open(out, "w"))
PY
}

# print_run LABEL FILE [IVI]: one line of a run's results (written by
# one_config), with the infotainment load's figures unless IVI is false.
print_run() {
  jq -r --arg name "$1" --argjson ivi "${3:-true}" '"\($name): frames \(.frames), misses \(.client_misses) (client) / \(.mediatord_misses) (mediatord), skipped \(.skipped), latency p50 \(.p50_latency_us) us p99 \(.p99_latency_us) us; \(if $ivi then "infotainment \(.ivi_groups_per_s | floor) groups/s, long-draws \(.long_draws_per_s) groups/s, glmark2 \(.glmark2_fps) fps, throttled \(.ivi_throttled), refused \(.ivi_unschedulable); " else "" end)GPU busy \(.gpu_busy * 100 | floor) % (trace: busy \((.trace_busy // 0) * 100 | floor) %, idle with a group waiting \((.idle_held // 0) * 100 | floor) %, idle with none \((.idle_nothing // 0) * 100 | floor) %); \(if (.pieces // 0) > 0 then "\(.cut_groups) groups cut into \(.pieces) pieces, \(.pieces_over) over their bound; " else "" end)\(.ivi_over // 0) of \(.ivi_records // 0) infotainment records over their bound; CPU steal \(.cpu_steal * 100 | floor) %"' "$2"
}

echo "gpu-mediator isolation benchmark ($(nproc) CPUs, llvmpipe), $FRAMES cluster frames per run, oversize = $OVERSIZE, cluster guard_us = $GUARD_US"
if [ "$ALONE" = 1 ]; then
  # The floor: what the host's noise alone costs the cluster, with no infotainment load.
  one_config budget alone
  print_run "alone (cluster only, no infotainment)" "$OUT/alone-budget.json" false
fi
for load in $LOADS; do
  one_config fifo "$load" fifo 0
  print_run "$load fifo" "$OUT/$load-fifo.json"
  one_config budget "$load" budget-whole 0
  print_run "$load budget-whole (piece_us 0)" "$OUT/$load-budget-whole.json"
  one_config budget "$load" budget "$PIECE_US"
  print_run "$load budget (piece_us $PIECE_US)" "$OUT/$load-budget.json"
  for name in budget-whole budget; do
    jq -rs --arg load "$load" --arg name "$name" '"\($load) \($name)/fifo: infotainment groups/s \(.[1].ivi_groups_per_s / .[0].ivi_groups_per_s * 100 | floor) %, long-draws \(if .[0].long_draws_per_s > 0 then (.[1].long_draws_per_s / .[0].long_draws_per_s * 100 | floor) else "-" end) %, glmark2 fps \(if .[0].glmark2_fps > 0 then (.[1].glmark2_fps / .[0].glmark2_fps * 100 | floor) else "-" end) %; cluster misses \(.[0].client_misses) / \(.[0].mediatord_misses) -> \(.[1].client_misses) / \(.[1].mediatord_misses) (client / mediatord)"' \
      "$OUT/$load-fifo.json" "$OUT/$load-$name.json"
  done
done

# mediator-sim on each recorded trace with the config it ran under: does the
# simulator reach the live scheduler's verdict (pieces are records of their own)?
for load in $LOADS; do
  for name in fifo budget-whole budget; do
    "$MEDIATOR_SIM" "$OUT/$load-$name.conf" "$OUT/$load-$name-trace.jsonl" >"$TMP/sim-$name.out" 2>&1 || :
    echo "mediator-sim on $load $name: cluster $(awk '$1 == "cluster" { print $5 }' "$TMP/sim-$name.out") misses" \
      "(live: $(jq .mediatord_misses "$OUT/$load-$name.json")), infotainment busy" \
      "$(awk '$1 == "infotainment" { print $6 }' "$TMP/sim-$name.out")"
  done
done

# Split cost: the multi load alone (no cluster), fifo, whole groups and pieces.
for piece in 0 "$PIECE_US"; do
  start_mediatord fifo "$piece"
  gm_ctl trace start "$TMP/run/split.jsonl" >/dev/null
  GALLIUM_DRIVER=virpipe EGL_PLATFORM=surfaceless "$MEDIATOR_EXEC" \
    --socket "$TMP/run/ivi.vtest" -- "$LONG_DRAWS" --seconds 20 $(long_draws_args multi) \
    --json /dev/fd/3 3>"$TMP/split-$piece.json" >/dev/null 2>&1 || gm_die "long-draws failed"
  gm_ctl trace stop >/dev/null
  gm_stop_mediatord || true
  jq -s '[.[] | select(has("type") | not) | select(.piece)] | length' "$TMP/run/split.jsonl" \
    >"$TMP/split-$piece.pieces"
done
python3 - "$TMP" "$PIECE_US" <<'PY'
import json, sys
d, piece = sys.argv[1], sys.argv[2]
w = json.load(open(f"{d}/split-0.json"))
p = json.load(open(f"{d}/split-{piece}.json"))
n_pieces = int(open(f"{d}/split-{piece}.pieces").read())
# Pieces beyond one per group, per group sent.
extra = max(0.0, n_pieces / max(1, p["groups"]) - 1) if n_pieces else 0.0
t_w, t_p = 1 / w["groups_per_s"], 1 / p["groups_per_s"]
per_piece = (t_p - t_w) / extra * 1e6 if extra > 0 else float("nan")
print(f"split cost (multi load alone, fifo): whole groups {w['groups_per_s']:.2f} groups/s, "
      f"pieces of {piece} us {p['groups_per_s']:.2f} groups/s ({p['groups_per_s'] / w['groups_per_s'] * 100:.1f} %), "
      f"{extra + 1:.2f} pieces per group, {per_piece:.0f} us per extra piece")
PY

# Split cost on glmark2: its scenes alone under fifo, whole groups and pieces.
for piece in 0 "$PIECE_US"; do
  start_mediatord fifo "$piece"
  gm_client "$TMP/run/ivi.vtest" glmark2-es2 --off-screen -b build:duration=8 \
    -b texture:duration=8 -b shading:shading=phong:duration=8 -b refract:duration=8 \
    >"$TMP/glmark-split-$piece.out" 2>&1 || gm_die "glmark2 failed"
  gm_stop_mediatord || true
done
python3 - "$TMP/glmark-split-0.out" "$TMP/glmark-split-$PIECE_US.out" "$PIECE_US" <<'PY'
import re, sys
def fps(path):
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"\[(\w+)\].*FPS: (\d+)", open(path).read())}
w, p = fps(sys.argv[1]), fps(sys.argv[2])
print("split cost (glmark2 alone, fifo): " + ", ".join(
    f"{k} {w[k]} -> {p.get(k, 0)} fps ({100 * p.get(k, 0) / w[k]:.0f} %)" for k in w if w[k]) +
    f" with pieces of {sys.argv[3]} us")
PY

# Grant round trip: one client alone under fifo, so no grant ever waits.
start_mediatord fifo
gm_ctl trace start "$TMP/run/rtt.jsonl" >/dev/null
gm_client "$TMP/run/ivi.vtest" glmark2-es2 --off-screen -b build:duration=10 >/dev/null 2>&1 ||
  gm_die "glmark2 failed"
gm_ctl trace stop >/dev/null
gm_stop_mediatord || true
python3 - "$TMP/run/rtt.jsonl" <<'PY'
import json, sys
groups = [g for g in map(json.loads, open(sys.argv[1])) if "type" not in g]
def stats(gs):
    v = sorted((g["dispatch_ns"] - g["request_ns"]) / 1000 for g in gs)
    if not v:
        return "none"
    return "median %.1f us, p99 %.1f us" % (v[len(v) // 2], v[int(len(v) * 0.99)])
asked = [g for g in groups if g.get("grant") == "request"]
offered = [g for g in groups if g.get("grant") == "offer"]
print("grant path (%d groups, one client, fifo): request to dispatch %s; %.1f %% took the "
      "grant board's offer (%s), %d asked (round trip %s)"
      % (len(groups), stats(groups), 100.0 * len(offered) / max(1, len(groups)),
         stats(offered), len(asked), stats(asked)))
PY
for load in $LOADS; do
  jq -rs --arg load "$load" '[.[] | select(has("type") | not)] |
    "\($load) budget: \([.[] | select(.grant == "offer")] | length) of \(length) groups took the grant board'"'"'s offer"' \
    "$OUT/$load-budget-trace.jsonl"
done

# mediator-sim: 8 domains x SIM_GROUPS groups.
python3 - "$TMP/sim" "$SIM_GROUPS" <<'PY'
import os, random, sys
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
random.seed(1)
P = 16666667
conf = ["[mediator]", "control_socket = /nonexistent/c.sock", "policy = budget", "max_inflight = 1"]
for k in range(8):
    conf += ["[domain d%d]" % k, "class = %s" % ("safety" if k == 0 else "normal"),
             "period_us = 16667", "budget_us = %d" % (3000 if k == 0 else 1500),
             "vtest_socket = /nonexistent/d%d.vtest" % k]
    t = 10**9
    with open("%s/d%d.jsonl" % (d, k), "w") as f:
        for i in range(n):
            m = 1000000 if k == 0 else random.randint(50000, 400000)
            f.write('{"domain":"d%d","client":%d,"ctx":1,"seq":%d,"request_ns":%d,"dispatch_ns":%d,'
                    '"start_ns":%d,"end_ns":%d,"measured_ns":%d,"predicted_ns":%d,"bound_ns":%d,'
                    '"model":"sgd","cmds":{}}\n' % (k, k + 1, i + 1, t, t, t, t + m, m, m, int(m * 1.2)))
            t += P if k == 0 else m * 8
open(d + "/sim.conf", "w").write("\n".join(conf) + "\n")
PY
t0=$(date +%s.%N)
"$MEDIATOR_SIM" "$TMP/sim/sim.conf" "$TMP"/sim/d*.jsonl >"$TMP/sim.out"
t1=$(date +%s.%N)
echo "mediator-sim: 8 domains x $SIM_GROUPS groups replayed in $(echo "$t1 - $t0" | bc) s"
echo "kept: $OUT/LOAD-{fifo,budget-whole,budget}{.json,-cluster.json,-trace.jsonl,-mediatord.log}"
# Plots (PNG) of the cluster's frame latency per load and of where the GPU
# time went, when gnuplot is there (bench/plots/isolation.py).
if command -v gnuplot >/dev/null; then
  python3 bench/plots/isolation.py "$OUT"
else
  echo "gnuplot not installed: no plots (scripts/install-deps.sh installs gnuplot-nox)"
fi
