"""Shared set-up for the kit's own tests (not the hidden checks, which live in grader/per_exercise)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.runner_double import in_process_runner  # noqa: F401  (a fixture: grading with no sandbox)

ROOT = Path(__file__).resolve().parent.parent


# One temporary folder per test session for the kit's caches (downloads, reference answers)
# and hypothesis's, made by the first process (xdist's workers inherit it through the
# environment) and removed by that process when the session ends.
_SCRATCH_VARIABLE = "GRADE_TESTS_SCRATCH"
_made_scratch: Path | None = None


def _session_scratch() -> Path:
    global _made_scratch
    if _SCRATCH_VARIABLE not in os.environ:
        import tempfile

        _made_scratch = Path(tempfile.mkdtemp(prefix="grade-tests-"))
        os.environ[_SCRATCH_VARIABLE] = str(_made_scratch)
    return Path(os.environ[_SCRATCH_VARIABLE])


def pytest_configure(config):
    scratch = _session_scratch()
    # Keep the kit's caches out of the user's home during tests.
    os.environ.setdefault("XDG_CACHE_HOME", str(scratch / "cache"))
    # hypothesis keeps nothing in the working tree: no example database, its files in the scratch;
    # and no deadline: a time limit per example is a timing assertion, which a busy machine fails
    from hypothesis import settings
    from hypothesis.configuration import set_hypothesis_home_dir

    set_hypothesis_home_dir(str(scratch / "hypothesis"))
    settings.register_profile("kit", database=None, deadline=None)
    settings.load_profile("kit")

    # The lesson's corpus: the repository's own copy, whatever the shell names, so that a fresh
    # clone and a developer's machine run the same tests (never the network).
    from tests import corpus

    os.environ["GPT_COURSE_DATA"] = str(corpus.FOLDER)
    # Nothing in the tests reaches outside this machine: a download the kit would try goes to
    # a closed local port (the download tests serve the file themselves on 127.0.0.1).
    os.environ.setdefault("GPT_COURSE_DATA_URL", "http://127.0.0.1:9/tinyshakespeare/input.txt")
    # Every process the tests start keeps its native thread pools on one thread, as the kit's
    # own judges and workers do: with every core busy with other tests, a second thread only
    # spins (nbgrader's kernels, the venvs' interpreters and the helpers set none themselves).
    from grader.sandbox.limits import ONE_THREAD_ENV

    for name, value in ONE_THREAD_ENV.items():
        os.environ.setdefault(name, value)
    # The tests that grade or compute references in this process run the judge's side here: as
    # the kit's judge runs it (grader.run.startup.load_judge), torch on one thread, whose idle
    # threads would otherwise spin on a machine whose every core is busy with other tests.
    # xdist's controller runs no test: its workers start sooner without torch's import here.
    if not _distributes(config):
        from grader.run.startup import load_judge

        load_judge()


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    """The test modules are loaded with the garbage collector paused, then what the session has
    loaded is frozen, as the kit's own judge freezes what it loaded (grader.run.startup): it
    lives until the session ends, and no collection in a test walks it again."""
    from grader.run.startup import freeze_loaded
    from grader.sandbox.preload import collector_paused

    with collector_paused():
        yield
    freeze_loaded()


def _distributes(config) -> bool:
    """Whether this process is pytest-xdist's controller (`-n N`, N > 0): it hands the tests to
    its workers, which have `workerinput`, and runs none itself."""
    return (not hasattr(config, "workerinput") and config.getoption("dist", "no") != "no"
            and bool(config.getoption("tx", None)))


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


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


def pytest_unconfigure(config):
    if _made_scratch is not None:
        import shutil

        shutil.rmtree(_made_scratch, ignore_errors=True)
