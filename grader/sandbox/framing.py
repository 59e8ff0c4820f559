"""Length-prefixed frames over a socket: how the judge and a worker exchange answers."""

from __future__ import annotations

import socket
import struct



def send_frame(sock: socket.socket, blob: bytes) -> None:
    sock.sendall(struct.pack("!Q", len(blob)) + blob)


def recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv_frame(sock: socket.socket) -> bytes:
    (n,) = struct.unpack("!Q", recv_exact(sock, 8))
    return recv_exact(sock, n)
