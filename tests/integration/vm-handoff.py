#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""vm-handoff.py: plays libvirt's part of its vhost-user GPU path, for
test-vm-socket.sh: makes a socket pair, starts the back-end (the launcher)
with one end as --fd=N, as libvirt does, and writes the back-end's pid into
a pid file named as libvirt names it (or another pid, or none). When the
launcher hands the VM over, plays QEMU on the other end with
vhost-user-frontend (fd:N), then stops the launcher with SIGTERM as libvirt
does at the VM's stop.

  vm-handoff.py LAUNCHER VM_SOCKET PIDFILE|- PID_IN_FILE|self FRONTEND MODE
    MODE: a vhost-user-frontend mode ("scenario"), or "hold" (keep the VM's
    end open until stdin closes), or "none" (only the hand-off)

Prints "launcher: ok DOMAIN" or "launcher: exit N: STDERR", then
"frontend: exit N", "launcher: stopped N"; exits 0 when the hand-off
was answered at all (the test judges what came of it).
"""
import os
import select
import signal
import socket
import subprocess
import sys
import time

launcher, vm_socket, pidfile, pid_in_file, frontend, mode = sys.argv[1:7]
ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
fd = theirs.fileno()


def write_pidfile():
    if pidfile != "-":
        pid = os.getpid() if pid_in_file == "self" else int(pid_in_file)
        with open(pidfile, "w") as f:
            f.write("%d\n" % pid)


proc = subprocess.Popen(
    [launcher, "--fd=%d" % fd, "--virgl", "--socket=%s" % vm_socket],
    pass_fds=(fd,), stderr=subprocess.PIPE, preexec_fn=write_pidfile)
theirs.close()
# The launcher says on stderr what mediatord answered; it stays on success.
served = None
deadline = time.monotonic() + 20
text = b""
while time.monotonic() < deadline:
    ready, _, _ = select.select([proc.stderr], [], [], 0.1)
    if ready:
        chunk = os.read(proc.stderr.fileno(), 4096)
        if not chunk:
            break
        text += chunk
    if b"through mediatord domain" in text:
        served = text.split(b"through mediatord domain", 1)[1].split()[0].decode().strip(" .:;,")
        break
if served is None:
    try:
        proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    text += proc.stderr.read()
    print("launcher: exit %s: %s" % (proc.returncode,
                                     text.decode(errors="replace").strip().replace("\n", " | ")))
    sys.exit(0)
print("launcher: ok %s" % served, flush=True)
if mode == "hold":
    sys.stdin.read()
    print("frontend: exit 0")
elif mode != "none":
    front = subprocess.run([frontend, "fd:%d" % ours.fileno(), mode], pass_fds=(ours.fileno(),))
    print("frontend: exit %d" % front.returncode, flush=True)
ours.close()
proc.send_signal(signal.SIGTERM)
try:
    proc.wait(timeout=10)
except subprocess.TimeoutExpired:
    proc.kill()
    proc.wait()
print("launcher: stopped %d" % proc.returncode)
