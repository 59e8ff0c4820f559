"""Shared set-up for the kit's own tests (not the hidden checks, which live in grader/checks)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# The corpus and the schemas the tests read (never committed): where .ci/run found them, else
# beside the repository.
SHARED = Path(os.environ.get("GPT_COURSE_SHARED") or ROOT.parent / "shared")


def pytest_configure(config):
    # Tests and CI read the lesson's corpus from the shared copy, never the network.
    shared = SHARED / "datasets"
    if "GPT_COURSE_DATA" not in os.environ and (shared / "tinyshakespeare" / "input.txt").is_file():
        os.environ["GPT_COURSE_DATA"] = str(shared)
    # Nothing in the tests reaches outside this machine: a download the kit would try goes to
    # a closed local port (the download tests serve the file themselves on 127.0.0.1).
    os.environ.setdefault("GPT_COURSE_DATA_URL", "http://127.0.0.1:9/tinyshakespeare/input.txt")


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def shared() -> Path:
    """The shared/ folder: the lesson's corpus (datasets/) and the formats' schemas (schemas/)."""
    return SHARED


@pytest.fixture(scope="module", params=["fork", "spawn"])
def worker_mode(request):
    """Each way of starting workers in turn (grader.sandbox: forked from a zygote, or fresh
    interpreters as on Windows and macOS): GRADE_WORKER is set while the module's tests run."""
    if request.param == "fork" and not hasattr(os, "fork"):
        pytest.skip("no fork on this OS")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GRADE_WORKER", request.param)
        yield request.param


@pytest.fixture(scope="session")
def grade_exe() -> str:
    exe = Path(os.sys.executable).parent / "grade"
    return str(exe)


def pytest_sessionstart(session):
    # Keep the kit's caches (downloads, reference answers) out of the user's home during tests.
    import tempfile

    if "XDG_CACHE_HOME" not in os.environ:
        os.environ["XDG_CACHE_HOME"] = tempfile.mkdtemp(prefix="grade-tests-cache-")


# hypothesis keeps nothing in the working tree: no example database, its caches in a temp folder
import tempfile as _tempfile  # noqa: E402

from hypothesis import settings as _hypothesis_settings  # noqa: E402
from hypothesis.configuration import set_hypothesis_home_dir  # noqa: E402

set_hypothesis_home_dir(_tempfile.mkdtemp(prefix="grade-tests-hypothesis-"))
_hypothesis_settings.register_profile("kit", database=None)
_hypothesis_settings.load_profile("kit")
