"""The lesson's corpus as the download tests know it, and a local HTTP server that hands it out.

`CorpusServer(body)` serves the corpus on 127.0.0.1 (an ephemeral port) as it is, cut short,
with a lying Content-Length, with one bit flipped, with bytes added, or as a 404:

    >>> server = CorpusServer(tests.corpus.FILE.read_bytes())   # doctest: +SKIP
    >>> server.thread.start(); server.url("/short/input.txt")   # doctest: +SKIP
    'http://127.0.0.1:40123/short/input.txt'
"""

from __future__ import annotations

import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SHA = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
SIZE = 1_115_394


class CorpusServer:
    """Routes: /good, /prefix (a shorter file), /short (Content-Length lies), /corrupt, else 404."""

    def __init__(self, body: bytes) -> None:
        flipped = bytearray(body)
        flipped[SIZE // 2] ^= 0x01
        self.routes = {
            "/good/input.txt": (body, len(body)),
            "/prefix/input.txt": (body[: SIZE // 3], SIZE // 3),
            "/short/input.txt": (body[: SIZE // 2], len(body)),
            "/corrupt/input.txt": (bytes(flipped), len(body)),
            "/long/input.txt": (body + b"extra", len(body) + 5),
        }
        self.hits: Counter[str] = Counter()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                server.hits[self.path] += 1
                if self.path not in server.routes:
                    self.send_error(404, "Not Found")
                    return
                payload, length = server.routes[self.path]
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(length))
                self.end_headers()
                self.wfile.write(payload)
                self.close_connection = True

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, route: str) -> str:
        return f"http://127.0.0.1:{self.port}{route}"
