#!/bin/bash
# SPDX-License-Identifier: MIT
# The vhost-user-gpu transport, with tests/tools/vhost-user-frontend playing
# QEMU's vhost-user-gpu-pci device and a guest's virtio-gpu driver:
#  - both domains serve a "VM" at once: handshake, guest memory, rings,
#    display channel, 2D and 3D resources, a guest context whose clears
#    reach the scanout as pixels; bad requests get VIRTIO_GPU_RESP_ERR_*,
#    a malformed virgl stream costs only its context;
#  - show-budgets counts the VM's groups and --contexts lists its guest
#    contexts by their debug names;
#  - a VM that disconnects frees its worker, and the domain serves the
#    next one (a VM restart);
#  - malformed vhost-user messages close that connection only.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
[ -x "$VHOST_USER_FRONTEND" ] || fail "not built: $VHOST_USER_FRONTEND"
require_cmd jq jq

VHOST_A=$TMP/cluster.vhost
VHOST_B=$TMP/ivi.vhost
write_config budget 1
sed -i "s|^vtest_socket = $SOCK_A\$|&\nvhost_user_socket = $VHOST_A|; s|^vtest_socket = $SOCK_B\$|&\nvhost_user_socket = $VHOST_B|" "$CONFIG"
grep -q "vhost_user_socket = $VHOST_B" "$CONFIG" || fail "config without vhost sockets"
start_mediatord
{ [ -S "$VHOST_A" ] && [ -S "$VHOST_B" ]; } || fail "mediatord did not create the vhost-user sockets"

# The cluster "VM" stays connected after its scenario until we say so.
mkfifo "$TMP/hold"
FRONTEND_HOLD=1 timeout -k 5 120 "$VHOST_USER_FRONTEND" "$VHOST_A" scenario \
  <"$TMP/hold" 2>"$TMP/frontend-a.log" &
front_a=$!
gm_track "$front_a"
exec 9>"$TMP/hold"
timeout -k 5 120 "$VHOST_USER_FRONTEND" "$VHOST_B" scenario 2>"$TMP/frontend-b.log" ||
  { cat "$TMP/frontend-b.log" >&2; fail "scenario on $DOMAIN_B failed"; }
log "$DOMAIN_B: $(grep -c ': ok: ' "$TMP/frontend-b.log") checks passed"
deadline=$((SECONDS + 60))
until grep -q 'holding' "$TMP/frontend-a.log"; do
  kill -0 "$front_a" 2>/dev/null || { cat "$TMP/frontend-a.log" >&2; fail "scenario on $DOMAIN_A failed"; }
  [ $SECONDS -lt $deadline ] || fail "scenario on $DOMAIN_A did not finish"
  sleep 0.2
done
log "$DOMAIN_A: $(grep -c ': ok: ' "$TMP/frontend-a.log") checks passed"

# Records are batched for up to 10 ms; the groups show up soon after.
wait_groups() {
  local deadline=$((SECONDS + 10)) g
  while :; do
    g=$(domain_field "$1" groups)
    [ "$g" -ge "$2" ] && return 0
    [ $SECONDS -lt $deadline ] || fail "$1 has $g groups, expected at least $2"
    sleep 0.2
  done
}
# Four SUBMIT_3D groups reach the GPU per scenario (two per live context).
wait_groups "$DOMAIN_A" 4
wait_groups "$DOMAIN_B" 4
json=$(budgets_json)
jq -e --arg d "$DOMAIN_A" '.domains[] | select(.name == $d) |
  (.vhost_user_socket | endswith("cluster.vhost")) and
  (.context_list | length == 1) and
  (.context_list[0].name == "poke-ct2") and (.context_list[0].transport == "vhost-user") and
  (.context_list[0].groups >= 2)' <<<"$json" >/dev/null ||
  fail "show-budgets does not list the VM's live context: $json"
ctl show-budgets --contexts >"$TMP/contexts.txt" || fail "show-budgets --contexts failed"
grep -Eq "^$DOMAIN_A +[0-9]+ +vhost-user +[0-9]+ +[0-9]+ +poke-ct2\$" "$TMP/contexts.txt" ||
  { cat "$TMP/contexts.txt" >&2; fail "show-budgets --contexts does not name the guest context"; }
log "show-budgets --contexts: $(grep poke "$TMP/contexts.txt" | tr -s ' ' | head -1)"

# A second VM on a socket whose VM is connected is refused.
timeout -k 5 30 "$VHOST_USER_FRONTEND" "$VHOST_A" bad-size 2>/dev/null ||
  fail "a second connection to $VHOST_A was not closed"
grep -q "refusing a second VM" "$MEDIATORD_LOG" || fail "no log line about the second VM"

# The VM shuts down: its worker exits and the domain is free again.
exec 9>&-
wait "$front_a" || fail "the held scenario on $DOMAIN_A failed at exit"
wait_field "$DOMAIN_A" clients 0 15
[ "$(domain_field "$DOMAIN_A" contexts)" = 0 ] || fail "contexts left after the VM went"
timeout -k 5 120 "$VHOST_USER_FRONTEND" "$VHOST_A" scenario 2>"$TMP/frontend-a2.log" ||
  { cat "$TMP/frontend-a2.log" >&2; fail "a restarted VM on $DOMAIN_A failed"; }
log "restarted VM on $DOMAIN_A: $(grep -c ': ok: ' "$TMP/frontend-a2.log") checks passed"

# Malformed vhost-user messages: that connection is closed, nothing else.
for mode in bad-size bad-fds bad-region; do
  timeout -k 5 30 "$VHOST_USER_FRONTEND" "$VHOST_B" "$mode" 2>>"$TMP/frontend-bad.log" ||
    { cat "$TMP/frontend-bad.log" >&2; fail "$mode"; }
  wait_field "$DOMAIN_B" clients 0 15
done
for what in "SET_VRING_NUM: bad payload size" \
  "SET_MEM_TABLE: file descriptor count differs from the region count" \
  "SET_MEM_TABLE: memory table refused (bad or overlapping regions, or mmap failed)"; do
  grep -qF "vhost-user $what; closing the connection" \
    "$MEDIATORD_LOG" || fail "no log line: $what"
done
# Guest errors are logged with the domain's name.
grep -q "domain $DOMAIN_A vm [0-9]*: RESOURCE_FLUSH: no such resource" "$MEDIATORD_LOG" ||
  fail "guest errors are not logged with the domain's name"
grep -q "malformed command stream; the context is destroyed" "$MEDIATORD_LOG" ||
  fail "the malformed stream's context was not reported destroyed"
gm_assert_mediatord_alive
timeout -k 5 120 "$VHOST_USER_FRONTEND" "$VHOST_B" scenario 2>"$TMP/frontend-b2.log" ||
  { cat "$TMP/frontend-b2.log" >&2; fail "$DOMAIN_B no longer serves VMs after bad ones"; }
gm_stop_mediatord || fail "mediatord exited with an error"
log "ok"
