"""Helpers for tests that run student code in workers: a folder with a module, a call, an answer."""

from __future__ import annotations

from pathlib import Path

from grader.judge.subjects import worker_setup
from grader.sandbox import Worker


def worker_for(zygote, folder, module: str = "ex99_demo") -> Worker:
    """A worker for `module` of the submission in `folder`, set up as the judge sets one up (a
    copy of the files in the official tiers)."""
    copy = getattr(zygote, "tier", "practice") != "practice"
    return Worker(zygote, worker_setup(str(Path(folder).resolve()), module, copy=copy))


def call_in(worker: Worker, name: str, *args, timeout: float = 10.0) -> dict:
    """Call the student's function `name(*args)` in the worker; its answer (plain data)."""
    answer, _seconds = worker.run({"probe": "common.call_function", "args": (name, args, {}), "kwargs": {}}, timeout)
    return answer


def write_module(folder, source: str, module: str = "ex99_demo") -> Path:
    path = Path(folder) / f"{module}.py"
    path.write_text(source, encoding="utf-8")
    return Path(folder)
