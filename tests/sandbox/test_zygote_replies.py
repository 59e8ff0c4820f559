"""A judge killed between asking the zygote for a worker and reading the reply (a batch's
judges ask a shared zygote in turn) leaves that reply unread: the next judge must get its own
worker's pid, not the stale one (else its time-outs would kill another process and leave its own)."""

from __future__ import annotations

import os
import signal
import socket
import struct
import sys
import time

import pytest

import grader.sandbox.plaincodec as plaincodec
from grader.sandbox.zygote import Zygote

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork zygote")


def test_a_reply_left_unread_is_not_the_next_askers():
    zygote = Zygote().start()
    try:
        asker = os.fork()
        if asker == 0:  # a judge that asks for a worker, then is killed before it reads the reply
            _, worker_end = socket.socketpair()
            dump_read, dump_write = os.pipe()
            status_read, status_write = os.pipe()
            body = plaincodec.encode({"fork": True, "request": 7})
            socket.send_fds(zygote._sock, [struct.pack("!I", len(body))],
                            [worker_end.fileno(), dump_write, status_write])
            zygote._sock.sendall(body)
            os.kill(os.getpid(), signal.SIGKILL)
        os.waitpid(asker, 0)
        pid, judge_end, ends = zygote.spawn()
        deadline = time.monotonic() + 30
        while os.getpgid(pid) != pid and time.monotonic() < deadline:  # a group of its own, made first thing
            time.sleep(0.01)
        os.killpg(pid, signal.SIGKILL)  # the pid we were given: its end must be our socket's end
        judge_end.settimeout(30)
        assert judge_end.recv(65536) == b""  # ours ended (it was waiting for its setup): not another's
        ends.close()
    finally:
        zygote.close()
