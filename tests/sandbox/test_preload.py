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


def test_loading_the_worker_side_leaves_torch_on_one_thread_the_probes_loaded_and_the_collector_on():
    """What a zygote or a spawned worker runs first."""
    import torch

    threads = torch.get_num_threads()
    try:
        load_worker_side()
        assert gc.isenabled() and torch.get_num_threads() == 1 and "grader.probes.common" in sys.modules
        assert "grader.sandbox.worker" in sys.modules
    finally:
        torch.set_num_threads(threads)
