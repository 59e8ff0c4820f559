"""Length-prefixed frames: how the judge and a worker exchange requests and answers.

A frame is an 8-byte big-endian length, then that many bytes. The stream under it is
whatever connects the two: a socket (a worker forked from the zygote), a pair of pipes (a
worker started as a fresh interpreter, `grader.sandbox.spawn`), or anything with
`recv(n)`/`sendall(data)` like a socket or `read(n)`/`write(data)` like a binary file.

    >>> import io
    >>> out = io.BytesIO(); send_frame(out, b"hi"); out.getvalue()
    b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x02hi'
    >>> recv_frame(io.BytesIO(out.getvalue()))
    b'hi'
"""

from __future__ import annotations

import os
import struct
import time

CHUNK = 1 << 20  # bytes asked for at a time: a forged length never makes us allocate it at once


def send_frame(stream, blob: bytes) -> None:
    """Write one frame: the length, then the bytes (all of them)."""
    _send_all(stream, struct.pack("!Q", len(blob)) + blob)


def recv_exact(stream, n: int) -> bytes:
    """Exactly `n` bytes from `stream`; EOFError if it ends first."""
    read = getattr(stream, "recv", None) or stream.read
    chunks, got = [], 0
    while got < n:
        chunk = read(min(n - got, CHUNK))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv_frame(stream) -> bytes:
    (n,) = struct.unpack("!Q", recv_exact(stream, 8))
    return recv_exact(stream, n)


def recv_frame_until(sock, deadline: float, cap: int) -> bytes:
    """recv_frame from a socket, its timeout moved along to `deadline` (time.monotonic());
    TimeoutError once it has passed, OSError for a frame longer than `cap` bytes."""
    reader = _Deadline(sock, deadline)
    (n,) = struct.unpack("!Q", recv_exact(reader, 8))
    if n > cap:
        raise OSError(f"answer of {n} bytes is over the {cap} byte cap")
    return recv_exact(reader, n)


class _Deadline:
    """A socket's `recv` whose timeout is what is left until `deadline` (time.monotonic())."""

    def __init__(self, sock, deadline: float):
        self.sock, self.deadline = sock, deadline

    def recv(self, n: int) -> bytes:
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        self.sock.settimeout(remaining)
        return self.sock.recv(n)


def _send_all(stream, data: bytes) -> None:
    sendall = getattr(stream, "sendall", None)
    if sendall is not None:
        sendall(data)
        return
    view = memoryview(data)
    while view:  # an unbuffered file (a pipe) may take fewer bytes than offered
        written = stream.write(view)
        view = view[written if written is not None else len(view):]
    flush = getattr(stream, "flush", None)
    if flush is not None:
        flush()


# Answers are signed. The judge gives each worker a fresh key in its setup; the worker keeps it
# only as a local of its serving loop (reachable only through frames, which the guard refuses)
# and signs every answer: code of the submission that finds the channel's file descriptor
# and writes a frame of its own cannot sign it, and the judge takes an unsigned or wrongly
# signed frame as tampering. Progress frames (what the judge shows while ex12 trains) are not
# signed: they must be exactly `{"progress": (done, total)}` and count for nothing.
ANSWER, PROGRESS = b"A", b"P"
MAC_BYTES = 32


def hmac_sha256():
    """The HMAC-SHA256 function, taken before a submission runs (`_hashlib`'s C function where
    there is one: a submission can rebind `hmac.digest`, not the worker's reference)."""
    try:
        from _hashlib import hmac_digest
    except ImportError:  # an interpreter without OpenSSL's hashlib
        from hmac import digest as hmac_digest
    return hmac_digest


def mac_input(counter: int, blob: bytes) -> bytes:
    """What is signed: the answer's number on this channel (no replay), then the answer."""
    return struct.pack("!Q", counter) + blob


class ForgedFrame(Exception):
    """A frame on a worker's channel that the worker did not sign (or a malformed one)."""


def open_frame(frame: bytes, key: bytes, counter: int, digest=None) -> tuple[str, bytes]:
    """("answer" | "progress", the blob) of a frame from a worker; ForgedFrame if it was not
    signed with `key` as answer number `counter`.

    >>> key = b"k" * 32
    >>> signed = ANSWER + hmac_sha256()(key, mac_input(0, b"x"), "sha256") + b"x"
    >>> open_frame(signed, key, 0)
    ('answer', b'x')
    >>> open_frame(signed, key, 1)
    Traceback (most recent call last):
    ...
    grader.sandbox.framing.ForgedFrame: an answer not signed by the worker
    """
    import hmac

    tag, body = frame[:1], frame[1:]
    if tag == PROGRESS:
        return "progress", body
    if tag != ANSWER or len(body) < MAC_BYTES:
        raise ForgedFrame("a frame the worker does not send")
    mac, blob = body[:MAC_BYTES], body[MAC_BYTES:]
    expected = (digest or hmac_sha256())(key, mac_input(counter, blob), "sha256")
    if not hmac.compare_digest(mac, expected):
        raise ForgedFrame("an answer not signed by the worker")
    return "answer", blob


class PipePair:
    """Two file descriptors (one read, one written) used like one socket: `recv`, `sendall`.

    A spawned worker talks to the judge over its own stdin and stdout this way (blocking
    reads: the worker has nothing else to do while it waits for a request).
    """

    def __init__(self, read_fd: int, write_fd: int):
        self.read_fd, self.write_fd = read_fd, write_fd

    def recv(self, n: int) -> bytes:
        return os.read(self.read_fd, n)

    def sendall(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.write_fd, view):]

    def fileno(self) -> int:
        return self.read_fd

    def fds(self) -> set[int]:
        return {self.read_fd, self.write_fd}

    def close(self) -> None:
        for fd in self.fds():
            try:
                os.close(fd)
            except OSError:
                pass
