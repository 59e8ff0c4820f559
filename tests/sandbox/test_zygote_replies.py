"""A judge killed between asking the zygote for a worker and reading the reply (a batch's
judges share one zygote) leaves that reply unread: the next judge must get its own worker's
pid, not the stale one (else its time-outs would kill another process and leave its own)."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

import pytest

from grader.sandbox.zygote import Zygote

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fork zygote")


def test_a_reply_left_unread_is_not_the_next_askers(tmp_path):
    (tmp_path / "ex01_windows.py").write_text("X = 1\n", encoding="utf-8")
    zygote = Zygote().start()
    try:
        setup = {"submission": str(tmp_path), "module": "ex01_windows", "limits": {}, "pieces": []}
        asker = os.fork()
        if asker == 0:  # a judge that asks, then is killed before it reads the reply
            judge_end, worker_end = socket.socketpair()
            body = json.dumps({**setup, "request": 7, "fence": zygote.fence}).encode()
            socket.send_fds(zygote._sock, [struct.pack("!I", len(body))], [worker_end.fileno()])
            zygote._sock.sendall(body)
            os.kill(os.getpid(), signal.SIGKILL)
        os.waitpid(asker, 0)
        pid, judge_end, ends = zygote.spawn(setup)
        os.killpg(pid, signal.SIGKILL)  # the pid we were given: its end must be our socket's end
        judge_end.settimeout(30)
        while judge_end.recv(65536):  # the "imported" answer may come first
            pass
        ends.close()
    finally:
        zygote.close()
