# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2153 # SECS: scripts/demo.sh sets it
# gpu-mediator demo with virtual machines: cluster-vm and ivi-vm share one
# (software) GPU through mediatord, as in a car.
#
#   cluster-vm  domain cluster (safety): 4 ms of GPU time every 16.667 ms;
#               its guest runs guest-shim's cluster-client, a 60 Hz
#               instrument cluster on its display that counts its late
#               frames by the guest's clock
#   ivi-vm      domain ivi (normal): up to 10 ms every 16.667 ms; its guest
#               floods the GPU with long full-screen draws (long-draws)
#
# Sets both up with vm-configs/install.sh in a temp dir (VM names gm-demo-*,
# mediatord on vm-configs/mediatord-vms.conf), starts them with virsh,
# prints mediatorctl show-budgets while they run, then the cluster's frame
# statistics and show-budgets again, and removes the VMs. Needs root,
# libvirt and QEMU >= 8 (scripts/install-deps.sh installs them); scripts/
# demo.sh runs it where those are there. DEMO_SECONDS (default 10) is about
# how long the cluster renders.
# Sourced by scripts/demo.sh, which has set up TMP (the common library's
# gm_tmpdir), say and vm-configs/vms-lib.sh.
source scripts/lib/gm-common.sh
chmod 0711 "$TMP"
PREFIX=gm-demo-$$-
CLUSTER=${PREFIX}cluster-vm
IVI=${PREFIX}ivi-vm
CONTROL=$TMP/run/control.sock
wait_serial() { # VM PATTERN SECONDS
  vms_wait_serial "$@" || gm_die "$1: no '$2' on its console within $3 s"
}

# At exit: the VMs go, then the mediatord install.sh started; the host's
# vhost-user descriptor is as before.
vms_keep_descriptor "$TMP"
remove_vms() {
  vms_remove "$CLUSTER" "$IVI"
  vms_restore_descriptor "$TMP"
  vms_stop_mediatord "$TMP/run"
}
gm_on_exit remove_vms

say "setting up cluster-vm and ivi-vm (vm-configs/install.sh)"
vm-configs/install.sh --config "$TMP/etc/mediatord.conf" --state-dir "$TMP/state" \
  --run-dir "$TMP/run" --log-dir "$TMP/log" --prefix "$PREFIX" \
  --cluster-app "gm.app=cluster gm.frames=$((SECS * 60))" --ivi-app "gm.app=flood gm.iterations=4" |
  tee "$TMP/install.log"

say "virsh start $CLUSTER; virsh start $IVI"
vms_virsh start "$CLUSTER"
vms_virsh start "$IVI"
echo "(the guests boot; under TCG that takes a few seconds)"
wait_serial "$CLUSTER" 'GM-APP-START' 180
wait_serial "$IVI" 'GM-APP-START' 180
sleep $((SECS / 2 + 1))
say "mediatorctl show-budgets --contexts (both VMs rendering)"
gm_ctl show-budgets --contexts

wait_serial "$CLUSTER" '^cluster: [0-9]+ frames' $((SECS * 4 + 120))
say "the cluster's frames, by the guest's own clock (its serial console)"
vms_serial "$CLUSTER" | grep -E '^cluster: [0-9]+ frames'
say "the infotainment guest's flood (its serial console)"
vms_serial "$IVI" | grep -E '^long-draws: ' | tail -2
say "mediatorctl show-budgets"
gm_ctl show-budgets

say "verdict"
json=$(gm_budgets)
md_misses=$(gm_budgets_field cluster deadline_misses "$json")
md_frames=$(gm_budgets_field cluster frames "$json")
md_alone=$(gm_budgets_field cluster deadline_misses_alone "$json")
md_startup=$(gm_budgets_field cluster startup_frames "$json")
guest=$(vms_serial "$CLUSTER" | grep -E '^cluster: [0-9]+ frames' | tail -1)
guest_misses=$(sed -nE 's/.*, ([0-9]+) missed the .*/\1/p' <<<"$guest")
echo "mediatord's count: $md_misses of $md_frames cluster frames missed their deadline (a"
echo "frame's last group completed, by the fence on the host, after its deadline);"
echo "$md_alone of them with no infotainment group on the GPU or drawing on beside them:"
echo "late by the cluster's own work. Not judged: ${md_startup:-0} late frames of its start-up"
echo "(its first 30 periods: its context set-up and first draws compiling its shaders), with"
echo "nothing else on the GPU; the guest does not time its first frame either."
echo "The guest's own clock: ${guest_misses:-?} late ($guest). Under TCG the guest's"
echo "clock runs in an emulated CPU on the same cores that render, so it counts a frame"
echo "late whenever its vCPU was not scheduled, whatever the GPU did."
echo "For contrast, policy fifo on this benchmark's VMs (bench/vms, doc/results/2026-11.md,"
echo "2026-11-25): 3 of 2,973 and, on a noisier host, 299 of 2,932 missed by mediatord's count."
if [ "${md_misses:-1}" -eq 0 ]; then
  echo "demo: the cluster kept its frames by mediatord's count (virtual machines;" \
    "scripts/demo.sh --vtest shows the same with host clients)"
elif [ "${md_misses:-1}" -eq "${md_alone:-0}" ]; then
  echo "demo: infotainment took none of the cluster's frames: the $md_misses it missed by" \
    "mediatord's count it missed alone, by its own work (virtual machines)"
else
  echo "demo: the cluster MISSED $md_misses frames by mediatord's count, $((md_misses - md_alone))" \
    "with infotainment on the GPU beside it (virtual machines): this host was too busy, or" \
    "the budgets do not fit it"
fi
