#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What systemd does with data/gpu-mediator.service, where no systemd runs
as PID 1 (CI machines, containers): the part of it a restart, a stop and a
reload of the unit rest on. From systemd.service(5), sd_notify(3) and
sd_listen_fds(3):

- Type=notify, NotifyAccess=main: the main process's messages on
  $NOTIFY_SOCKET (checked by their sender's credentials); READY=1 ends the
  start.
- FileDescriptorStoreMax=N: FDSTORE=1 with FDNAME= keeps the attached
  descriptors, FDSTOREREMOVE=1 drops those of a name, a stored descriptor
  that hangs up is dropped; they are passed to each start at 3, 4, ...
  with LISTEN_FDS, LISTEN_FDNAMES and LISTEN_PID; a stop (no start queued)
  closes them, a restart keeps them.
- KillMode=process: SIGTERM to the main process only, which is waited for.
- ExecReload=kill -HUP $MAINPID.

usage: unit-manager.py --notify PATH --control FIFO --log LOG [--fdstore-max N] -- COMMAND...

Commands, one a line on FIFO: restart, stop, reload, start, quit. Each
event is a line on LOG: "start PID fds=N", "ready PID", "exit PID STATUS",
"stored NAME", "removed NAME", "dropped NAME (hung up)", "released N",
"refused ...".
"""
import argparse
import array
import fcntl
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--notify", required=True)
    ap.add_argument("--control", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--fdstore-max", type=int, default=8)
    ap.add_argument("command", nargs="+")
    args = ap.parse_args()

    log = open(args.log, "a", buffering=1)

    def say(*words):
        print(*words, file=log)

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    sock.bind(args.notify)
    os.mkfifo(args.control)
    # Read and write: the FIFO never reports an end when a writer closes.
    control = os.open(args.control, os.O_RDWR | os.O_NONBLOCK)
    store = []  # [name, fd]
    main = None
    pending = b""

    def start():
        nonlocal main
        fds = [fd for _, fd in store]
        env = dict(os.environ, NOTIFY_SOCKET=args.notify)
        env.pop("LISTEN_PID", None)
        if fds:
            env["LISTEN_FDS"] = str(len(fds))
            env["LISTEN_FDNAMES"] = ":".join(name for name, _ in store)

        def place_fds():
            # Each stored descriptor at 3, 4, ...: first out of the way.
            moved = [fcntl.fcntl(fd, fcntl.F_DUPFD, 1000) for fd in fds]
            for i, fd in enumerate(moved):
                os.dup2(fd, 3 + i, inheritable=True)
            os.closerange(3 + len(fds), 65536)  # what Popen keeps is close-on-exec anyway

        # LISTEN_PID is the pid of what is exec'd: the shell's, which execs the command.
        wrapped = ["/bin/sh", "-c", 'export LISTEN_PID=$$; exec "$@"', "sh"] + args.command
        if not fds:
            wrapped = ["/bin/sh", "-c", 'exec "$@"', "sh"] + args.command
        main = subprocess.Popen(wrapped, env=env, preexec_fn=place_fds, close_fds=False)
        say("start", main.pid, "fds=%d" % len(fds))

    def wait_main():
        nonlocal main
        if main is None:
            return
        try:
            status = main.wait(timeout=30)
        except subprocess.TimeoutExpired:
            main.kill()  # TimeoutStopSec=
            status = main.wait()
        # What it sent before it exited is its own (STOPPING=1), as systemd reads it.
        while select.select([sock], [], [], 0)[0]:
            take_message()
        say("exit", main.pid, status)
        main = None

    def stop(release):
        if main is not None:
            main.send_signal(signal.SIGTERM)
            wait_main()
        if release:
            for _, fd in store:
                os.close(fd)
            say("released", len(store))
            store.clear()

    def take_message():
        fds = array.array("i")
        msg, anc, _, _ = sock.recvmsg(
            4096, socket.CMSG_SPACE(struct.calcsize("3i")) + socket.CMSG_SPACE(64 * fds.itemsize))
        pid = None
        for level, kind, data in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.frombytes(data[:len(data) - (len(data) % fds.itemsize)])
            elif level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack("3i", data[:12])[0]
        fields = dict(line.split("=", 1) for line in msg.decode().splitlines() if "=" in line)
        if main is None or pid != main.pid:
            say("refused a message of pid", pid, "(NotifyAccess=main)")
            for fd in fds:
                os.close(fd)
            return
        if fields.get("READY") == "1":
            say("ready", pid)
        name = fields.get("FDNAME", "stored")
        if fields.get("FDSTOREREMOVE") == "1":
            for entry in [e for e in store if e[0] == name]:
                os.close(entry[1])
                store.remove(entry)
                say("removed", name)
        if fields.get("FDSTORE") == "1":
            for fd in fds:
                if len(store) >= args.fdstore_max:
                    say("refused", name, "(FileDescriptorStoreMax=%d)" % args.fdstore_max)
                    os.close(fd)
                    continue
                store.append([name, fd])
                say("stored", name)
        elif fds:
            for fd in fds:
                os.close(fd)

    def drop_hung_up():
        for entry in list(store):
            p = select.poll()
            p.register(entry[1], 0)
            if p.poll(0):
                os.close(entry[1])
                store.remove(entry)
                say("dropped", entry[0], "(hung up)")

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    start()
    while True:
        r, _, _ = select.select([sock, control], [], [], 0.1)
        if sock in r:
            take_message()
        drop_hung_up()
        if main is not None and main.poll() is not None:
            wait_main()  # died: Restart= is left to the test
        if control not in r:
            continue
        pending += os.read(control, 4096)
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            cmd = line.decode().strip()
            say("command", cmd)
            if cmd == "restart":
                stop(release=False)
                start()
            elif cmd == "stop":
                stop(release=True)
            elif cmd == "start":
                start()
            elif cmd == "reload" and main is not None:
                main.send_signal(signal.SIGHUP)
            elif cmd == "quit":
                stop(release=True)
                return


if __name__ == "__main__":
    main()
