#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Plays libvirt, QEMU and a fake mediatord around gpu-mediator-vm-gpu.

    vm-handoff-peer.py [--serve PATH (--answer LINE | --close | --silent)]
                       [--expect-flags N] [--log FILE] [--stays | --exit N]
                       -- LAUNCHER [ARG...]

Like libvirt, it makes a connected unix socket pair, keeps one end (QEMU's)
and runs LAUNCHER ARG... with the other as fd N: "{fd}" in an ARG is
replaced by N, and without one --fd=N is added. LAUNCHER's stdin is
/dev/null, its stdout and stderr go to FILE (--log).

With --serve, it is mediatord on PATH (common/vm_handoff.h): it accepts one
connection, checks that the request is one struct vm_handoff_request with
the magic, the version and flags N (--expect-flags, default 0), and exactly
one descriptor that is the peer of QEMU's end (bytes both ways between
them); then it answers LINE and closes (--answer), closes without an answer
(--close), or holds the connection without a word (--silent) until the
launcher leaves.

Then, --stays: the launcher still runs a second after the answer holding
only fds 0, 1 and 2, and exits 0 on SIGTERM; --exit N: it exits with
status N by itself, and QEMU's end reads the end of the connection (as
QEMU does when its VM is refused). Exit status 0 when all of that held;
otherwise 1 with the first thing that did not on stderr.
"""
import argparse
import os
import signal
import socket
import struct
import subprocess
import sys
import time

# common/vm_handoff.h
VM_HANDOFF_MAGIC = 0x315550474D564D47
VM_HANDOFF_VERSION = 1
REQUEST = struct.Struct("<QII")

# Seconds any one step may take.
STEP_S = 10

# The launcher's process, killed when a check fails: one that was handed
# the VM would wait for SIGTERM forever.
launcher = None


def fail(msg):
    if launcher is not None and launcher.poll() is None:
        launcher.kill()
        launcher.wait()
    sys.exit("vm-handoff-peer: " + msg)


def serve_one(listener, qemu_end, args):
    """The fake mediatord's side of one hand-off; returns its descriptors to hold."""
    listener.settimeout(STEP_S)
    try:
        conn, _ = listener.accept()
    except socket.timeout:
        fail("the launcher did not connect within %d s" % STEP_S)
    conn.settimeout(STEP_S)
    data, fds, _, _ = socket.recv_fds(conn, 64, 4)
    if len(data) != REQUEST.size:
        fail("a request of %d bytes, not %d" % (len(data), REQUEST.size))
    magic, version, flags = REQUEST.unpack(data)
    if magic != VM_HANDOFF_MAGIC or version != VM_HANDOFF_VERSION:
        fail("magic %#x version %d, not %#x and %d" % (magic, version, VM_HANDOFF_MAGIC,
                                                      VM_HANDOFF_VERSION))
    if flags != args.expect_flags:
        fail("flags %#x, not %#x" % (flags, args.expect_flags))
    if len(fds) != 1:
        fail("%d descriptors with the request, not 1" % len(fds))
    vm = socket.socket(fileno=fds[0])
    if vm.family != socket.AF_UNIX or vm.type != socket.SOCK_STREAM:
        fail("the descriptor is not a unix stream socket")
    # It is the VM's connection: what QEMU writes arrives, and back.
    qemu_end.settimeout(STEP_S)
    vm.settimeout(STEP_S)
    qemu_end.sendall(b"from QEMU")
    if vm.recv(64) != b"from QEMU":
        fail("the descriptor is not the peer of QEMU's end")
    vm.sendall(b"from mediatord")
    if qemu_end.recv(64) != b"from mediatord":
        fail("QEMU's end does not read what is written on the descriptor")
    if args.silent:
        return [conn, vm]
    if args.answer is not None:
        conn.sendall(args.answer.encode() + b"\n")
    conn.close()
    if args.exit is not None:
        # mediatord refused: it lets the VM's connection go.
        vm.close()
        return []
    return [vm]


def wait_exit(secs):
    try:
        return launcher.wait(timeout=secs)
    except subprocess.TimeoutExpired:
        fail("the launcher still runs after %d s" % secs)


def main():
    global launcher
    parser = argparse.ArgumentParser()
    parser.add_argument("--serve")
    parser.add_argument("--answer")
    parser.add_argument("--close", action="store_true")
    parser.add_argument("--silent", action="store_true")
    parser.add_argument("--expect-flags", type=lambda s: int(s, 0), default=0)
    parser.add_argument("--log", default=os.devnull)
    end = parser.add_mutually_exclusive_group(required=True)
    end.add_argument("--stays", action="store_true")
    end.add_argument("--exit", type=int)
    parser.add_argument("command", nargs="+")
    args = parser.parse_args()

    qemu_end, launcher_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    fd = launcher_end.fileno()
    command = [a.replace("{fd}", str(fd)) for a in args.command]
    if not any("{fd}" in a for a in args.command):
        command.append("--fd=%d" % fd)
    listener = None
    if args.serve:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(args.serve)
        listener.listen(1)
    with open(args.log, "wb") as log:
        launcher = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, pass_fds=(fd,))
    launcher_end.close()
    held = serve_one(listener, qemu_end, args) if listener else []

    if args.stays:
        time.sleep(1)
        if launcher.poll() is not None:
            fail("the launcher exited (status %d) after mediatord took the VM"
                 % launcher.returncode)
        fds = sorted(int(f) for f in os.listdir("/proc/%d/fd" % launcher.pid))
        if fds != [0, 1, 2]:
            fail("the launcher holds fds %s, not only 0, 1 and 2" % fds)
        launcher.send_signal(signal.SIGTERM)
        status = wait_exit(STEP_S)
        if status != 0:
            fail("the launcher exited with status %d on SIGTERM, not 0" % status)
    else:
        status = wait_exit(STEP_S)
        if status != args.exit:
            fail("the launcher exited with status %d, not %d" % (status, args.exit))
        for s in held:
            s.close()
        qemu_end.settimeout(STEP_S)
        if qemu_end.recv(64) != b"":
            fail("QEMU's end reads bytes, not the end of the connection")


if __name__ == "__main__":
    main()
