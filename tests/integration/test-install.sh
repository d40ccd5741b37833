#!/bin/bash
# SPDX-License-Identifier: MIT
# `meson install` puts everything in its place (issue 18): into a staging
# root, the programs (mediatord in sbin, the worker in libexec, the tools
# in bin), the configuration as /etc/gpu-mediator/mediatord.conf, libvirt's
# vhost-user descriptor naming the installed VM launcher and the AppArmor
# abstractions for libvirt's profiles, the systemd unit (which
# `systemd-analyze verify` accepts), its tmpfiles.d and sysusers.d files and
# mediatorctl's bash completion. The installed configuration is valid
# (mediatord --check). The installed mediatord, worker and mediatorctl then
# serve a client: under a unit's NOTIFY_SOCKET and WATCHDOG_USEC, mediatord
# says READY=1 with its status once its sockets listen, WATCHDOG=1 while it
# runs, STOPPING=1 when stopped.
set -euo pipefail
source "$(dirname -- "${BASH_SOURCE[0]}")/lib.sh"
[ -n "${GM_BUILD_ROOT:-}" ] || fail "GM_BUILD_ROOT is not set (run through meson test)"
command -v python3 >/dev/null || skip "python3 is missing (the notify socket's listener)"

ROOT=$TMP/root
DESTDIR=$ROOT meson install -C "$GM_BUILD_ROOT" --no-rebuild --quiet >"$TMP/install.log" 2>&1 ||
  fail "meson install failed: $(tail -5 "$TMP/install.log")"
SBIN=$ROOT$GM_INSTALL_SBINDIR BIN=$ROOT$GM_INSTALL_BINDIR
LIBEXEC=$ROOT$GM_INSTALL_LIBEXECDIR/gpu-mediator ETC=$ROOT$GM_INSTALL_SYSCONFDIR/gpu-mediator
UNIT=$(find "$ROOT" -path '*/systemd/system/gpu-mediator.service')
for f in "$SBIN/mediatord" "$LIBEXEC/mediator-worker" "$LIBEXEC/mediator-calibrate" \
  "$LIBEXEC/gpu-mediator-vm-gpu" "$BIN/mediatorctl" "$BIN/mediator-sim" "$BIN/mediator-exec"; do
  [ -x "$f" ] || fail "not installed (or not executable): ${f#"$ROOT"}"
done
COMPLETION=$ROOT$GM_INSTALL_PREFIX/share/bash-completion/completions/mediatorctl
VHOST_USER_GPU=$ROOT$GM_INSTALL_PREFIX/share/qemu/vhost-user/40-gpu-mediator.json
files=("$ETC/mediatord.conf" "$VHOST_USER_GPU"
  "$ROOT$GM_INSTALL_SYSCONFDIR/apparmor.d/abstractions/gpu-mediator-qemu"
  "$ROOT$GM_INSTALL_SYSCONFDIR/apparmor.d/abstractions/gpu-mediator-libvirtd")
# Built with the systemd feature (libsystemd) and bash-completion found, as on CI.
[ "$GM_HAVE_SYSTEMD" = 1 ] && files+=("$UNIT" "$ROOT$GM_INSTALL_PREFIX/lib/tmpfiles.d/gpu-mediator.conf"
  "$ROOT$GM_INSTALL_PREFIX/lib/sysusers.d/gpu-mediator.conf")
[ "$GM_HAVE_BASH_COMPLETION" = 1 ] && files+=("$COMPLETION")
MAN=$ROOT$GM_INSTALL_MANDIR
[ "$GM_HAVE_MAN_PAGES" = 1 ] && files+=("$MAN/man8/mediatord.8" "$MAN/man5/mediatord.conf.5"
  "$MAN/man1/mediatorctl.1" "$MAN/man1/mediator-sim.1" "$MAN/man1/mediator-exec.1")
for f in "${files[@]}"; do
  [ -n "$f" ] && [ -f "$f" ] || fail "not installed: ${f#"$ROOT"}"
done
# Nothing of the tests or the benchmarks.
[ -z "$(find "$ROOT" -name 'test-*' -o -name 'predict-*' -o -name 'vtest-poke')" ] ||
  fail "test or benchmark programs installed: $(find "$ROOT" -name 'test-*' -o -name 'predict-*')"
log "installed: $(cd "$ROOT" && find . -type f | sort | tr '\n' ' ')"
grep -qF "\"binary\": \"$GM_INSTALL_LIBEXECDIR/gpu-mediator/gpu-mediator-vm-gpu\"" "$VHOST_USER_GPU" ||
  fail "40-gpu-mediator.json does not name the installed launcher: $(cat "$VHOST_USER_GPU")"

if [ "$GM_HAVE_SYSTEMD" = 1 ]; then
  grep -qx "ExecStart=$GM_INSTALL_SBINDIR/mediatord --config $GM_INSTALL_SYSCONFDIR/gpu-mediator/mediatord.conf" \
    "$UNIT" || fail "the unit does not start the installed mediatord on the installed config"
  command -v systemd-analyze >/dev/null || fail "systemd-analyze is missing (scripts/install-deps.sh)"
  # The unit as installed, its programs' paths into the staging root
  # (verify checks that they exist).
  sed "s|$GM_INSTALL_SBINDIR/|$SBIN/|g" "$UNIT" >"$TMP/gpu-mediator.service"
  # Its Documentation= pages are looked up where they were installed.
  man_check=--man=yes
  [ "$GM_HAVE_MAN_PAGES" = 1 ] || man_check=--man=no
  MANPATH=$MAN systemd-analyze verify $man_check "$TMP/gpu-mediator.service" >"$TMP/verify.log" 2>&1 ||
    fail "systemd-analyze verify: $(cat "$TMP/verify.log")"
  [ ! -s "$TMP/verify.log" ] || fail "systemd-analyze verify warns: $(cat "$TMP/verify.log")"
  # The metrics timer and its service, writing node_exporter's textfile directory.
  METRICS_UNIT=$(dirname -- "$UNIT")/gpu-mediator-metrics.service
  [ -f "${METRICS_UNIT%.service}.timer" ] || fail "gpu-mediator-metrics.timer is not installed"
  grep -qx "ExecStart=$GM_INSTALL_BINDIR/mediatorctl metrics /var/lib/prometheus/node-exporter/gpu-mediator.prom" \
    "$METRICS_UNIT" || fail "gpu-mediator-metrics.service does not run the installed mediatorctl"
  sed "s|$GM_INSTALL_BINDIR/|$BIN/|g" "$METRICS_UNIT" >"$TMP/gpu-mediator-metrics.service"
  cp "${METRICS_UNIT%.service}.timer" "$TMP/"
  MANPATH=$MAN systemd-analyze verify $man_check "$TMP/gpu-mediator-metrics.service" \
    "$TMP/gpu-mediator-metrics.timer" >"$TMP/verify-metrics.log" 2>&1 ||
    fail "systemd-analyze verify: $(cat "$TMP/verify-metrics.log")"
  [ ! -s "$TMP/verify-metrics.log" ] || fail "systemd-analyze verify warns: $(cat "$TMP/verify-metrics.log")"
  log "systemd-analyze verify accepts the units"
fi
if [ "$GM_HAVE_BASH_COMPLETION" = 1 ]; then
  bash -n "$COMPLETION" || fail "the bash completion does not parse"
fi
# Each man page renders without a warning, and says what its source says:
# a program's every option and command (its --help), every key of the
# configuration (the example configuration).
if [ "$GM_HAVE_MAN_PAGES" = 1 ]; then
  for page in "$MAN"/man*/*; do
    MANWIDTH=200 man --warnings -l "$page" >"$TMP/page.txt" 2>"$TMP/page.err" ||
      fail "man -l ${page#"$ROOT"} failed: $(cat "$TMP/page.err")"
    [ ! -s "$TMP/page.err" ] || fail "man -l ${page#"$ROOT"} warns: $(cat "$TMP/page.err")"
    grep -q '^NAME' "$TMP/page.txt" || fail "${page#"$ROOT"} has no NAME section"
  done
  MANWIDTH=200 man -l "$MAN/man1/mediatorctl.1" >"$TMP/ctl.txt" 2>/dev/null
  for word in status show-budgets set-budget model metrics calibrate "trace start" "trace stop" \
    "trace export --perfetto" \
    --socket MEDIATOR_CONTROL_SOCKET "EXIT STATUS"; do
    grep -q -- "$word" "$TMP/ctl.txt" || fail "mediatorctl(1) does not mention $word"
  done
  MANWIDTH=200 man -l "$MAN/man5/mediatord.conf.5" >"$TMP/conf.txt" 2>/dev/null
  keys=$(grep -o '^; [a-z_]* = ' "$ETC/mediatord.conf" | sed 's/^; //; s/ = $//' | sort -u)
  for key in $keys; do
    grep -q "^ *$key = " "$TMP/conf.txt" || fail "mediatord.conf(5) does not document key $key"
  done
  log "man pages render: $(cd "$MAN" && echo man*/*); mediatord.conf(5) documents" \
    "$(wc -w <<<"$keys") keys"
fi
"$SBIN/mediatord" --config "$ETC/mediatord.conf" --check >"$TMP/check.log" 2>&1 ||
  fail "the installed configuration is not valid: $(cat "$TMP/check.log")"

# The installed programs serve: mediatord under a notify socket.
NOTIFY=$TMP/notify.sock
python3 - "$NOTIFY" >"$TMP/notify.log" 2>&1 <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
while True:
    msg = s.recv(4096).decode()
    print(msg.replace("\n", " | "), flush=True)
    if "STOPPING=1" in msg:
        break
PY
NOTIFY_PID=$!
gm_track "$NOTIFY_PID"
gm_wait_path -S "$NOTIFY" 10 "$NOTIFY_PID" notify-listener "$TMP/notify.log"
write_config
MEDIATORD=$SBIN/mediatord MEDIATORCTL=$BIN/mediatorctl
export MEDIATOR_WORKER=$LIBEXEC/mediator-worker NOTIFY_SOCKET=$NOTIFY WATCHDOG_USEC=400000
start_mediatord
unset NOTIFY_SOCKET WATCHDOG_USEC
"$VTEST_POKE" "$SOCK_A" handshake >"$TMP/poke.log" 2>&1 ||
  fail "the installed mediatord did not serve a vtest client: $(tail -3 "$TMP/poke.log")"
wait_field "$DOMAIN_A" clients 0 10
# complete WORDS...: what mediatorctl's completion offers for the last word.
complete_words() {
  bash -c 'source /usr/share/bash-completion/bash_completion && source "$1" && shift &&
    COMP_WORDS=("$@") && COMP_CWORD=$(($# - 1)) && COMP_LINE="$*" && COMP_POINT=${#COMP_LINE} &&
    _mediatorctl && echo "${COMPREPLY[*]}"' _ "$COMPLETION" "$@"
}
if [ "$GM_HAVE_BASH_COMPLETION" = 1 ]; then
  got=$(PATH=$BIN:$PATH complete_words mediatorctl sh)
  [ "$got" = show-budgets ] || fail "completion of 'mediatorctl sh': '$got'"
  got=$(PATH=$BIN:$PATH complete_words mediatorctl trace e)
  [ "$got" = export ] || fail "completion of 'mediatorctl trace e': '$got'"
  got=$(PATH=$BIN:$PATH complete_words mediatorctl --socket "$CONTROL" set-budget "")
  [ "$got" = "$DOMAIN_A $DOMAIN_B" ] || fail "completion of set-budget's domain: '$got'"
  log "mediatorctl's completion: commands, and the running mediatord's domains ($got)"
fi
[ "$(domain_field "$DOMAIN_A" class)" = safety ] || fail "installed mediatorctl: no domain $DOMAIN_A"
sleep 1
gm_stop_mediatord || fail "the installed mediatord did not stop cleanly"
gm_wait_gone 5 "$NOTIFY_PID"
kill "$NOTIFY_PID" 2>/dev/null || true
wait "$NOTIFY_PID" 2>/dev/null || true
if [ "$GM_HAVE_SYSTEMD" != 1 ]; then
  [ ! -s "$TMP/notify.log" ] || fail "notified without libsystemd: $(cat "$TMP/notify.log")"
  log "built without the systemd feature: the installed mediatord served a client, notified nothing"
  log "PASS"
  exit 0
fi
grep -q "^READY=1 | STATUS=2 domain(s), policy budget" "$TMP/notify.log" ||
  fail "no READY=1 with a status: $(cat "$TMP/notify.log")"
[ "$(grep -c '^WATCHDOG=1$' "$TMP/notify.log")" -ge 3 ] ||
  fail "fewer than 3 WATCHDOG=1 in about a second at WATCHDOG_USEC=400000: $(cat "$TMP/notify.log")"
grep -q "^STOPPING=1" "$TMP/notify.log" || fail "no STOPPING=1: $(cat "$TMP/notify.log")"
log "the installed mediatord served a client; notify: $(sort "$TMP/notify.log" | uniq -c | tr -s ' \n' ' ')"
log "PASS"
