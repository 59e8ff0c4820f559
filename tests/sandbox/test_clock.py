"""A call's limit counts the student's own time: a busy machine costs a correct student nothing,
and code that loops, sleeps or hands its work to child processes is still stopped."""

from __future__ import annotations

import multiprocessing
import os
import sys
import time

import pytest

from grader.sandbox import WorkerTimeout, Zygote
from grader.sandbox.clock import CallClock, backstop
from tests.workers import call_in, worker_for, write_module

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the run queue's delay is Linux's")

STUDENT = '''
import os, time

def work(seconds):
    """About `seconds` of CPU, whatever the wall clock says."""
    end = time.process_time() + seconds
    n = 0
    while time.process_time() < end:
        n += 1
    return seconds

def spin():
    while True:
        pass

def nap():
    time.sleep(3600)

def swarm(n):
    """Busy children, and a parent that only waits for them."""
    for _ in range(n):
        if os.fork() == 0:
            while True:
                pass
    os.wait()
'''


def _hog(stop, cpu):
    os.sched_setaffinity(0, {cpu})
    while not stop.is_set():
        pass


@pytest.fixture
def busy_machine():
    """Two busy processes on each core this test may use, for as long as the test runs; the
    first of those cores, which a process the test pins there shares with two of them."""
    cpus = sorted(os.sched_getaffinity(0))
    stop = multiprocessing.Event()
    hogs = [multiprocessing.Process(target=_hog, args=(stop, cpus[n % len(cpus)]), daemon=True)
            for n in range(2 * len(cpus))]
    for hog in hogs:
        hog.start()
    yield cpus[0]
    stop.set()
    for hog in hogs:
        hog.join(5)
        if hog.is_alive():
            hog.kill()


@pytest.fixture(scope="module")
def zygote():
    z = Zygote().start()
    yield z
    z.close()


@pytest.fixture
def worker(zygote, tmp_path):
    w = worker_for(zygote, write_module(tmp_path, STUDENT))
    call_in(w, "work", 0.0)  # imported before the tests' own calls
    yield w
    w.close()


def test_a_correct_call_passes_on_a_busy_machine_though_its_wall_time_is_past_the_limit(worker, busy_machine):
    # the worker shares its core with two busy processes: a third of it at most, so its 0.6 s
    # of CPU take well over the 1 s limit of wall time, however quiet the rest of the machine is
    os.sched_setaffinity(worker.pid, {busy_machine})
    started = time.monotonic()
    answer, seconds = worker.run({"probe": "common.call_function", "args": ("work", (0.6,), {}), "kwargs": {}}, 1.0)
    wall = time.monotonic() - started
    assert answer["ok"] and answer["value"] == 0.6
    assert wall > 1.0, f"the machine was not busy enough to show anything ({wall:.2f} s)"
    assert seconds < 1.0  # charged: its own CPU, not the run queue's wait


def test_an_endless_loop_is_still_stopped_on_a_busy_machine(worker, busy_machine):
    with pytest.raises(WorkerTimeout) as stopped:
        call_in(worker, "spin", timeout=0.5)
    assert stopped.value.kind == "cpu"


def test_code_that_sleeps_is_stopped_at_its_limit(worker):
    with pytest.raises(WorkerTimeout) as stopped:
        call_in(worker, "nap", timeout=1.0)
    assert stopped.value.kind == "idle"  # its own limit, not the wall-clock backstop ("overloaded")


def test_work_handed_to_child_processes_is_the_students_time(worker):
    with pytest.raises(WorkerTimeout):
        call_in(worker, "swarm", 3, timeout=1.0)


class _Readings(CallClock):
    """The clock's arithmetic alone, on readings given by the test."""

    def __init__(self, cpu, queued, wall):
        self._cpu0 = self._queued0 = self._others0 = 0.0
        self._cpu, self._queued, self._others_now = cpu, queued, 0.0
        self._wall, self.zygote, self.worker = wall, None, None

    def read(self):
        pass

    def wall(self):
        return self._wall


@pytest.mark.parametrize("cpu, queued, wall, verdict", [
    (0.5, 30.0, 31.0, None),            # waited for a CPU: nobody's limit
    (1.5, 0.0, 1.5, "cpu"),             # ran past it
    (0.1, 0.0, 1.6, "idle"),            # slept past it
    (0.5, 200.0, 201.0, "overloaded"),  # the backstop: the grader's problem, not the student's
])
def test_the_verdict_counts_cpu_and_idle_time_never_the_run_queue(cpu, queued, wall, verdict):
    assert backstop(1.0) == 120.0
    assert _Readings(cpu, queued, wall).verdict(1.0) == verdict
