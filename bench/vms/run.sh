#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/vms: the product's main job, measured. cluster-vm renders a frame-paced
# instrument cluster (guest-shim's cluster-client at 60 Hz on its display)
# while ivi-vm floods the GPU (guest-shim's long-draws), both under libvirt, set up by
# vm-configs/install.sh in a private directory. Same run, policy fifo then
# budget; per policy:
#   cluster: frames, deadline misses by the guest's clock (its own summary)
#            and by mediatord's (show-budgets), p99 frame latency (guest's
#            and mediatord's trace)
#   ivi:     frames/s (long-draws' count: each group is one shown frame) and
#            groups/s (mediatord's)
#   GPU busy: all domains' measured GPU time / wall time of the cluster's run
# and the ratio budget/fifo of the infotainment throughput.
# Then the guest's frame rate through mediatord against QEMU's own 3D
# device in the same run: the same guest's kmscube on vhost-user-gpu-pci
# served by mediatord (policy fifo), and on QEMU's in-process
# virtio-gpu-gl-pci (virglrenderer inside QEMU, GL display on Xvfb): fps of
# each and the ratio.
#
# Env: FRAMES (3000 cluster frames), RATE (60), FLOOD (guest arguments for
# the flood, default gm.iterations=4), FPS_FRAMES (1000 kmscube frames; 0: no frame-rate comparison), POLICIES
# ("fifo budget"), OUT (bench-vms-out: logs, traces, results.json).
# Needs root, libvirt and QEMU >= 8 (scripts/install-deps.sh); guests run
# under TCG where /dev/kvm cannot boot them.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
SRCROOT=$PWD
GM_NAME=bench/vms
source scripts/lib/gm-common.sh
FRAMES=${FRAMES:-3000}
RATE=${RATE:-60}
# A flood group that fits the gaps the cluster leaves (~8-15 ms per group
# here, under TCG); heavier groups wait max_defer_us and then run at a
# gap's start, longer than the gap (bench/isolation's "oversize" load).
FLOOD=${FLOOD:-gm.iterations=4}
FPS_FRAMES=${FPS_FRAMES:-1000}
POLICIES=${POLICIES-fifo budget}
OUT=$(mkdir -p "${OUT:-bench-vms-out}" && cd "${OUT:-bench-vms-out}" && pwd)
[ "$(id -u)" = 0 ] || gm_die "needs root (libvirt, QEMU)"

gm_tmpdir gm-bench-vms
chmod 0711 "$TMP"
PREFIX=gm-bench-$$-
CLUSTER=${PREFIX}cluster-vm
IVI=${PREFIX}ivi-vm
source vm-configs/vms-lib.sh
VMS_LOG_DIR=$TMP/log
CONFIG=$TMP/etc/mediatord.conf
CONTROL=$TMP/run/control.sock
vms_keep_descriptor "$TMP"
gm_on_exit vms_restore_descriptor "$TMP"
gm_on_exit vms_remove "$CLUSTER" "$IVI"
wait_serial() { # VM PATTERN SECONDS
  vms_wait_serial "$@" || gm_die "$1: no '$2' within $3 s"
}

echo "bench/vms: installing into $TMP (vm-configs/install.sh)"
"$SRCROOT/vm-configs/install.sh" --build-dir "$BUILD_DIR" --config "$CONFIG" \
  --state-dir "$TMP/state" --run-dir "$TMP/run" --log-dir "$TMP/log" --prefix "$PREFIX" \
  --cluster-app "gm.app=cluster gm.frames=$FRAMES gm.rate=$RATE gm.poweroff=1" \
  --ivi-app "gm.app=flood $FLOOD" --no-mediatord >"$OUT/install.log" 2>&1 ||
  { tail -20 "$OUT/install.log" >&2; exit 1; }
accel=$(grep -o 'type [a-z]*' "$OUT/install.log" | head -1)
echo "bench/vms: VMs defined ($accel); CPU: $(nproc) cores"

start_mediatord() { # POLICY
  sed -i "s/^policy = .*/policy = $1/" "$CONFIG"
  gm_start_mediatord "$CONFIG" "$OUT/mediatord-$1.log"
}
stop_mediatord() {
  gm_stop_mediatord || gm_say "mediatord exited with $?"
}

run_policy() { # POLICY: writes $OUT/POLICY.json
  local policy=$1 t0 t1
  start_mediatord "$policy"
  : >"$TMP/log/$CLUSTER.serial.log"
  : >"$TMP/log/$IVI.serial.log"
  gm_ctl trace start "$OUT/trace-$policy.jsonl" >/dev/null
  # The flood first, so that every cluster frame meets it.
  vms_virsh start "$IVI" >/dev/null
  wait_serial "$IVI" 'GM-APP-START flood' 180
  wait_serial "$IVI" '^long-draws: ' 120
  vms_virsh start "$CLUSTER" >/dev/null
  wait_serial "$CLUSTER" 'GM-APP-START cluster' 180
  gm_ctl show-budgets --json >"$OUT/$policy-budgets-start.json"
  t0=$(date +%s.%N)
  wait_serial "$CLUSTER" '^cluster: [0-9]+ frames' $((FRAMES * 4 / RATE + 120))
  t1=$(date +%s.%N)
  gm_ctl show-budgets --json >"$OUT/$policy-budgets-end.json"
  gm_ctl trace stop >/dev/null
  vms_serial "$CLUSTER" >"$OUT/$policy-cluster.serial.log"
  vms_serial "$IVI" >"$OUT/$policy-ivi.serial.log"
  vms_virsh destroy "$IVI" >/dev/null 2>&1 || true
  vms_virsh destroy "$CLUSTER" >/dev/null 2>&1 || true
  stop_mediatord
  python3 - "$policy" "$t0" "$t1" "$OUT" <<'PY' >"$OUT/$policy.json"
import json, re, sys
policy, t0, t1, out = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
b0 = json.load(open(out + "/" + policy + "-budgets-start.json"))
b1 = json.load(open(out + "/" + policy + "-budgets-end.json"))
wall = t1 - t0
dom = lambda b, n: next(d for d in b["domains"] if d["name"] == n)
# cluster-client: "cluster: F frames (S skipped), M missed the D us deadline;
# latency p50 X us, p99 Y us, max Z us"
summary = re.compile(r"^cluster: (\d+) frames \((\d+) skipped\), (\d+) missed .* "
                     r"p50 ([0-9.]+) us, p99 ([0-9.]+) us, max ([0-9.]+) us")
m = [summary.match(l) for l in open(out + "/" + policy + "-cluster.serial.log")]
m = [x for x in m if x][-1]
guest = {"frames": int(m[1]), "misses": int(m[3]), "p99_us": float(m[5])}
# long-draws: "long-draws: N groups in T s, R groups/s", every 5 s
progress = re.compile(r"^long-draws: (\d+) groups in ([0-9.]+) s")
flood = [(int(x[1]), float(x[2])) for x in
         (progress.match(l) for l in open(out + "/" + policy + "-ivi.serial.log")) if x]
lat = []
for line in open(out + "/trace-" + policy + ".jsonl"):
    r = json.loads(line)
    # the trace starts before the cluster VM does: all its frames are the run's
    if r.get("type") == "frame" and r["domain"] == "cluster":
        lat.append((r["end_ns"] - r["release_ns"]) / 1e3 if r["end_ns"] else float("inf"))
lat.sort()
p99 = min(lat[int(len(lat) * 0.99)], 1e9) if lat else 0  # an unfinished frame: 1e9
c0, c1, i0, i1 = dom(b0, "cluster"), dom(b1, "cluster"), dom(b0, "ivi"), dom(b1, "ivi")
used = sum(d["used_us"] for d in b1["domains"]) - sum(d["used_us"] for d in b0["domains"])
print(json.dumps({
    "policy": policy, "wall_s": wall,
    "guest_frames": guest.get("frames", 0), "guest_misses": guest.get("misses", 0),
    "guest_p99_us": guest.get("p99_us", 0),
    "mediatord_frames": c1["frames"] - c0["frames"],
    "mediatord_misses": c1["deadline_misses"] - c0["deadline_misses"],
    # of those, frames no ivi group ran beside: late by the cluster's own work
    "mediatord_misses_alone": c1["deadline_misses_alone"] - c0["deadline_misses_alone"],
    # the cluster's start-up, not judged: late frames alone in its first 30 periods
    "mediatord_startup_frames": c1.get("startup_frames", 0) - c0.get("startup_frames", 0),
    "mediatord_p99_us": p99,
    "ivi_groups_per_s": (i1["groups"] - i0["groups"]) / wall,
    # over the cluster's run: the last progress line against the one before it started
    "ivi_frames_per_s": ((flood[-1][0] - flood[0][0]) / (flood[-1][1] - flood[0][1])
                         if len(flood) > 1 and flood[-1][1] > flood[0][1] else 0),
    "ivi_throttled": i1["throttled"] - i0["throttled"],
    "gpu_busy": used / 1e6 / wall,
}))
PY
  jq -r '"\(.policy): cluster \(.guest_frames) frames, misses \(.guest_misses) (guest clock) / \(.mediatord_misses) (mediatord, of \(.mediatord_frames); \(.mediatord_misses_alone) of them with no ivi group beside; \(.mediatord_startup_frames) start-up frames not judged), p99 latency \(.guest_p99_us) us (guest) / \(.mediatord_p99_us | floor) us (mediatord); ivi \(.ivi_frames_per_s) frames/s, \(.ivi_groups_per_s | floor) groups/s, throttled \(.ivi_throttled); GPU busy \(.gpu_busy * 100 | floor) %"' \
    "$OUT/$policy.json"
}

for policy in $POLICIES; do
  run_policy "$policy"
done
if [ -f "$OUT/fifo.json" ] && [ -f "$OUT/budget.json" ]; then
  jq -rs '"budget/fifo: ivi groups/s \(.[1].ivi_groups_per_s / .[0].ivi_groups_per_s * 100 | floor) %, ivi frames/s \(if .[0].ivi_frames_per_s > 0 then (.[1].ivi_frames_per_s / .[0].ivi_frames_per_s * 100 | floor) else "-" end) %; cluster misses (guest) \(.[0].guest_misses) -> \(.[1].guest_misses)"' \
    "$OUT/fifo.json" "$OUT/budget.json"
fi

# --- the guest's frame rate: mediatord against QEMU's own 3D device --------
[ "$FPS_FRAMES" -gt 0 ] || exit 0
kernel=$TMP/state/guest/vmlinuz initrd=$TMP/state/guest/initrd.img
qemu_fps() { # NAME QEMU-ARGS...: kmscube's fps in a guest with that GPU
  local name=$1
  shift
  timeout -k 5 600 qemu-system-x86_64 -accel tcg -m 1024 -smp 1 -no-reboot \
    -object memory-backend-memfd,id=mem,size=1024M,share=on -numa node,memdev=mem \
    -kernel "$kernel" -initrd "$initrd" -serial "file:$OUT/fps-$name.serial.log" \
    -append "console=ttyS0 quiet gm.app=kmscube gm.frames=$FPS_FRAMES gm.poweroff=1" \
    "$@" >"$OUT/fps-$name.qemu.log" 2>&1 || true
  tr -d '\r' <"$OUT/fps-$name.serial.log" | sed -n 's/^Rendered .*(\([0-9.]*\) fps)$/\1/p' | tail -1
}
start_mediatord fifo
sock=$(awk '/^\[domain cluster\]/ { s = 1 } s && $1 == "vhost_user_socket" { print $3; exit }' "$CONFIG")
fps_mediatord=$(qemu_fps mediatord -display none -chardev "socket,id=gpu,path=$sock" \
  -device vhost-user-gpu-pci,chardev=gpu)
stop_mediatord
gm_start_xvfb 1024x768x24
fps_qemu=$(qemu_fps qemu-virgl -display gtk,gl=on -device virtio-gpu-gl-pci)
echo "guest kmscube, $FPS_FRAMES frames: through mediatord (vhost-user-gpu-pci) ${fps_mediatord:-none} fps," \
  "QEMU's virtio-gpu-gl-pci ${fps_qemu:-none} fps," \
  "ratio $(awk -v a="${fps_mediatord:-0}" -v b="${fps_qemu:-0}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
