#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/vhost-user: frames per second through the vhost-user-gpu path, with
# tests/tools/vhost-user-frontend playing QEMU's vhost-user-gpu-pci device
# and a guest driver, so that no VM is needed (bench/vms measures real VMs).
#
# Same run, same front-end, same frames:
#   2D  mediatord's worker       vs QEMU's own /usr/lib/qemu/vhost-user-gpu
#       (a guest framebuffer: write pixels, TRANSFER_TO_HOST_2D, RESOURCE_FLUSH,
#        wait for the scanout update on the display channel)
#   3D  mediatord's worker only  (fenced SUBMIT_3D clear + RESOURCE_FLUSH;
#       QEMU's back-end needs a render node for virgl, which these machines lack)
# Prints fps per configuration and the ratio mediatord / QEMU for 2D.
# Env: SECONDS_PER_RUN (10), WIDTH (1024), HEIGHT (768), REPS (3, median).
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
BUILD_DIR=${BUILD_DIR:-build}
GM_NAME=bench/vhost-user
source scripts/lib/gm-common.sh
SECS=${SECONDS_PER_RUN:-10}
W=${WIDTH:-1024}
H=${HEIGHT:-768}
REPS=${REPS:-3}
QEMU_GPU=/usr/lib/qemu/vhost-user-gpu
for f in "$VHOST_USER_FRONTEND" "$MEDIATORD"; do
  [ -x "$f" ] || gm_die "not built: $f (meson setup build && ninja -C build)"
done
[ -x "$QEMU_GPU" ] || gm_die "$QEMU_GPU missing (apt-get install qemu-system-gui)"

gm_tmpdir gm-bench-vhost
CONTROL=$TMP/control.sock
gm_write_config "$TMP/m.conf" \
  "[mediator]" control_socket="$CONTROL" state_dir="$TMP/state" policy=fifo \
  "[domain vm]" vhost_user_socket="$TMP/vm.vhost"
gm_start_mediatord "$TMP/m.conf" "$TMP/mediatord.log"

fps() { sed -n 's/.* fps \([0-9.]*\)$/\1/p'; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# run_qemu_2d REP: fps of QEMU's back-end (run in $(...): stops it itself).
run_qemu_2d() {
  local sock=$TMP/qemu-$1.vhost out
  "$QEMU_GPU" --socket-path "$sock" >"$TMP/qemu-gpu-$1.log" 2>&1 &
  local p=$!
  gm_wait_path -S "$sock" 20 "$p" vhost-user-gpu "$TMP/qemu-gpu-$1.log"
  out=$(timeout 120 "$VHOST_USER_FRONTEND" "$sock" bench2d "$SECS" "$W" "$H")
  kill "$p" 2>/dev/null || true
  wait "$p" 2>/dev/null || true
  echo "$out" | fps
}

declare -a m2 q2 m3
for r in $(seq "$REPS"); do
  m2+=("$(timeout 120 "$VHOST_USER_FRONTEND" "$TMP/vm.vhost" bench2d "$SECS" "$W" "$H" | fps)")
  sleep 0.5 # the worker of the last connection exits
  q2+=("$(run_qemu_2d "$r")")
  m3+=("$(timeout 120 "$VHOST_USER_FRONTEND" "$TMP/vm.vhost" bench3d "$SECS" "$W" "$H" | fps)")
  sleep 0.5
  echo "rep $r: 2D mediatord ${m2[-1]} fps, 2D QEMU vhost-user-gpu ${q2[-1]} fps, 3D mediatord ${m3[-1]} fps"
done
M2=$(printf '%s\n' "${m2[@]}" | median)
Q2=$(printf '%s\n' "${q2[@]}" | median)
M3=$(printf '%s\n' "${m3[@]}" | median)
echo
echo "bench/vhost-user: ${W}x${H}, ${SECS} s per run, median of $REPS"
printf '  %-44s %8s fps\n' "2D through mediatord (its worker)" "$M2" \
  "2D through QEMU's vhost-user-gpu (baseline)" "$Q2" \
  "3D through mediatord (fenced clear + flush)" "$M3"
awk -v m="$M2" -v q="$Q2" 'BEGIN { printf "  2D ratio mediatord / QEMU: %.2f\n", m / q }'
