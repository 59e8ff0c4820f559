"""Fixtures of the corpus download tests: the shipped corpus, a local server handing it out, no proxy."""

from __future__ import annotations

import hashlib

import pytest

from tests import corpus as shipped
from tests.data.served import SHA, SIZE, CorpusServer


@pytest.fixture(scope="module")
def corpus() -> bytes:
    body = shipped.FILE.read_bytes()
    assert len(body) == SIZE and hashlib.sha256(body).hexdigest() == SHA
    return body


@pytest.fixture(scope="module")
def server(corpus: bytes):
    srv = CorpusServer(corpus)
    srv.thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    # A proxy in the environment must not intercept requests to 127.0.0.1.
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
