#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/kmod-jitter: the jitter of back-to-back signalled fences'
# timestamps as gm_fence.ko records them (in the signal path), against
# CLOCK_MONOTONIC read in user space right after each signal ioctl returns,
# in the same run: FENCES (default 10000) vgem fences attached and signalled
# back to back in a guest booted by tests/integration/test-kmod.sh. Prints
# the median and standard deviation of the intervals of both.
# (Schnitzer et al., Concepts for Execution Time Prediction of 3D GPU
# Rendering, report 864 ns on their hardware. Under QEMU's TCG, as on the
# machines this project is built on, both carry emulation noise.)
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.."
GM_NAME=bench/kmod-jitter
source scripts/lib/gm-common.sh
out=$(GM_KMOD_JITTER_FENCES=${FENCES:-10000} BUILD_DIR=$BUILD_DIR \
  tests/integration/test-kmod.sh 2>&1) || gm_die "tests/integration/test-kmod.sh failed:
$(tail -20 <<<"$out")"
line=$(grep -o 'JITTER .*' <<<"$out" | tail -1)
[ -n "$line" ] || gm_die "no JITTER line"
# The JITTER line's fields (NAME=VALUE), set by the eval.
fences='' module_median_ns='' module_stddev_ns='' user_median_ns='' user_stddev_ns=''
eval "$(tr ' ' '\n' <<<"${line#JITTER }" | grep '=')"
echo "bench/kmod-jitter: $fences back-to-back vgem fences (accelerator ${GM_KMOD_ACCEL:-tcg})"
printf '  %-34s median %8s ns, std dev %8s ns\n' \
  "gm_fence.ko (signal tracepoint)" "$module_median_ns" "$module_stddev_ns" \
  "user space (after the ioctl)" "$user_median_ns" "$user_stddev_ns"
awk -v m="$module_stddev_ns" -v u="$user_stddev_ns" \
  'BEGIN { printf "  std dev ratio module / user space: %.2f\n", m / u }'
