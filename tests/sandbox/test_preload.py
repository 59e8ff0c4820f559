"""A process's start-up loads torch and the probes with the garbage collector paused, and leaves
the collector as it found it."""

from __future__ import annotations

import gc
import sys

import pytest

from grader.sandbox.preload import collector_paused, load_worker_side


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_paused_inside_and_as_it_was_after(enabled):
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        with collector_paused():
            assert not gc.isenabled()
        assert gc.isenabled() is enabled
        with pytest.raises(RuntimeError), collector_paused():
            raise RuntimeError("an import that fails")
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()


def test_loading_the_worker_side_leaves_torch_on_one_thread_the_probes_loaded_and_the_collector_on(monkeypatch):
    """What a zygote or a spawned worker runs first. This process has loaded all of it already
    (the test session starts as a judge): the threads are set back to two, the worker's loop is
    taken out of sys.modules and the probes' loading is recorded, so each must be done again."""
    import torch

    import grader.probes

    threads = torch.get_num_threads()
    loaded = []
    monkeypatch.setattr(grader.probes, "import_all", lambda: loaded.append("probes"))
    monkeypatch.delitem(sys.modules, "grader.sandbox.worker")
    try:
        torch.set_num_threads(2)
        load_worker_side()
        assert gc.isenabled() and torch.get_num_threads() == 1
        assert loaded == ["probes"] and "grader.sandbox.worker" in sys.modules
    finally:
        torch.set_num_threads(threads)
