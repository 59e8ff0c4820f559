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


# A frame from a worker starts with its kind: an answer, or a progress report (what the judge
# shows while ex12 trains; it must be exactly {"progress": (done, total)} and decides nothing).
ANSWER, PROGRESS = b"A", b"P"


class MalformedFrame(Exception):
    """A frame from a worker that is neither an answer nor a progress report."""


def frame_kind(frame: bytes) -> tuple[str, bytes]:
    """("answer" | "progress", the blob) of a frame from a worker.

    >>> frame_kind(ANSWER + b"x")
    ('answer', b'x')
    >>> frame_kind(b"?x")
    Traceback (most recent call last):
    ...
    grader.sandbox.framing.MalformedFrame: a frame the worker does not send
    """
    tag, body = frame[:1], frame[1:]
    if tag == ANSWER:
        return "answer", body
    if tag == PROGRESS:
        return "progress", body
    raise MalformedFrame("a frame the worker does not send")


class FrameReader:
    """Frames read from a socket as bytes arrive, without blocking: the judge waits for a
    worker's answer in short steps and looks at the worker's clock between them.

        reader = FrameReader(sock, cap=MAX_ANSWER_BYTES)
        frame = reader.poll(0.1)   # a whole frame, or None after 0.1 s without one
    """

    def __init__(self, sock, cap: int):
        self.sock, self.cap = sock, cap
        self._buffer = bytearray()
        self._need: int | None = None

    def poll(self, wait: float) -> bytes | None:
        """Whatever arrives within `wait` s; a whole frame when one is complete, else None.
        EOFError when the worker's end closed; OSError for a frame longer than the cap.
        (`sock` is a socket or anything with `recv` and `settimeout`: a spawned worker's pipes.)"""
        frame = self._take()
        if frame is not None:
            return frame
        timeout = max(0.001, wait)
        while frame is None:
            self.sock.settimeout(timeout)
            try:
                chunk = self.sock.recv(CHUNK)
            except (BlockingIOError, InterruptedError, TimeoutError):
                break
            if not chunk:
                raise EOFError
            self._buffer += chunk
            frame = self._take()
            timeout = 0.0  # what else has arrived already, without waiting again
        self.sock.settimeout(None)
        return frame

    def _take(self) -> bytes | None:
        if self._need is None and len(self._buffer) >= 8:
            (self._need,) = struct.unpack("!Q", bytes(self._buffer[:8]))
            if self._need > self.cap:
                raise OSError(f"answer of {self._need} bytes is over the {self.cap} byte cap")
        if self._need is None or len(self._buffer) < 8 + self._need:
            return None
        frame = bytes(self._buffer[8:8 + self._need])
        del self._buffer[:8 + self._need]
        self._need = None
        return frame


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
