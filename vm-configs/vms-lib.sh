# SPDX-License-Identifier: MIT
# vm-configs/vms-lib.sh: what the demo, the tests and the benchmarks do with
# the VMs that vm-configs/install.sh defined. Source it; it defines functions
# only. VMS_LOG_DIR is install.sh's --log-dir (the guests' serial logs).

# vms_virsh ARGS...: virsh on the system libvirtd, bounded in time.
vms_virsh() {
  timeout -k 5 60 virsh -q -c qemu:///system "$@"
}

# vms_serial VM: what VM printed on its serial console so far.
vms_serial() {
  tr -d '\r' <"$VMS_LOG_DIR/$1.serial.log" 2>/dev/null || true
}

# vms_wait_serial VM PATTERN SECONDS: waits for a line matching the
# extended regex PATTERN on VM's console; after SECONDS, prints the
# console's last lines to stderr and returns 1.
vms_wait_serial() {
  local deadline=$((SECONDS + $3))
  until vms_serial "$1" | grep -E "$2" >/dev/null; do
    if [ $SECONDS -ge $deadline ]; then
      echo "----- $1's console, last 20 lines" >&2
      vms_serial "$1" | tail -20 >&2
      return 1
    fi
    sleep 0.5
  done
}

# vms_remove VM...: stops and undefines each VM that exists; quiet.
vms_remove() {
  local vm
  for vm in "$@"; do
    vms_virsh destroy "$vm" >/dev/null 2>&1 || true
    vms_virsh undefine "$vm" >/dev/null 2>&1 || true
  done
}

# vms_stop_mediatord RUN_DIR: stops the mediatord that install.sh started
# (RUN_DIR/mediatord.pid), waiting up to 15 s; returns 1 unless it stopped
# cleanly (its log's last line, LOG: install.sh's --log-dir/mediatord.log).
vms_stop_mediatord() {
  local pid
  [ -f "$1/mediatord.pid" ] || return 0
  pid=$(cat "$1/mediatord.pid")
  rm -f -- "$1/mediatord.pid"
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 150); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid"
    echo "mediatord did not exit within 15 s of SIGTERM" >&2
    return 1
  fi
  [ "$(tail -1 "$VMS_LOG_DIR/mediatord.log" 2>/dev/null)" = "mediatord: info: stopped" ] || {
    echo "mediatord did not stop cleanly: $(tail -1 "$VMS_LOG_DIR/mediatord.log")" >&2
    return 1
  }
}

# The vhost-user descriptor vm-configs/install.sh writes for a build in the
# source tree (libvirt's own vhost-user path, doc/vms.md). It is the
# host's: a throw-away set-up (a test, the demo, a benchmark) keeps the one
# there before and puts it back at its end.
VMS_DESCRIPTOR=/etc/qemu/vhost-user/40-gpu-mediator.json
# vms_keep_descriptor DIR: a copy of the descriptor there now, if any, into DIR.
vms_keep_descriptor() {
  [ ! -e "$VMS_DESCRIPTOR" ] || cp -p "$VMS_DESCRIPTOR" "$1/vhost-user-descriptor.before"
}
# vms_restore_descriptor DIR: puts back what vms_keep_descriptor DIR kept, or
# removes the descriptor where there was none.
vms_restore_descriptor() {
  if [ -e "$1/vhost-user-descriptor.before" ]; then
    cp -p "$1/vhost-user-descriptor.before" "$VMS_DESCRIPTOR"
  else
    rm -f "$VMS_DESCRIPTOR"
  fi
}
