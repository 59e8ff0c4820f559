"""The limits a mutant of a reference is graded under: the grader's own, kept in the judge.

A mutant is trusted code (the reference, changed by an operator), graded in the judge like a
known mistake's variant, not in a worker; but it can loop for ever, append for ever, or leave
state behind (the probes' caches, a module's globals). `LimitedSubject` stops a call at the
exercise's time limit or a memory cap, as a worker's limits would; `graded_apart` grades each
mutant in a fork of the judge that ends with it.
"""

from __future__ import annotations

import json
import math
import os
import signal
import time
import traceback

from grader.judge.subjects import InProcessSubject


class OverLimit(Exception):
    """A mutant's call ran past the exercise's time limit (a loop that never ends: `i += 0`) or
    grew this process by more than its memory cap (a loop that appends for ever)."""


MEMORY_CAP = 1024**3  # bytes one call of a mutant may add to this process
TICK = 0.05  # seconds of CPU between two looks at a call's time and memory


class LimitedSubject:
    """A trusted module run in this process, each call stopped at `seconds` of CPU time or at
    `memory` bytes more than the process held when the call began.

    In a worker the grader's limits stop a call that never ends, and the check fails; here a
    profiling timer looks at the call every `TICK` s of CPU and raises `OverLimit` inside it,
    which the check records as the call's error: the mutant is killed, as it would be in a
    worker. The calls after that one are not run: they answer the same error at once (the
    grader too runs no more of an exercise past its limit). Without the timer (Windows) calls
    are not limited.
    """

    def __init__(self, module, seconds: float, memory: int = MEMORY_CAP):
        self.subject = InProcessSubject(module)
        self.seconds = seconds
        self.memory = memory
        self.stopped = None  # the observation of the call that ran past a limit

    def observe(self, a_call, timeout=None):
        if self.stopped is None:
            observation = self._limited(a_call)
            if observation.error_type == OverLimit.__name__:
                self.stopped = observation
            return observation
        return self.stopped

    def _limited(self, a_call):
        if not hasattr(signal, "setitimer"):
            return self.subject.observe(a_call)
        import psutil

        process = psutil.Process()
        start, held = time.process_time(), process.memory_info().rss
        # Where the next look raises again: a limit passed once moves one step further, so that the
        # call's own error handling is not interrupted a second time, while an OverLimit that lands
        # where Python ignores exceptions (a finaliser that the loop's allocations set off) is
        # raised again once the call has run past the next step.
        steps = {"time": self.seconds, "memory": self.memory}

        def look(signum, frame):
            over = ("time" if time.process_time() - start > steps["time"] else
                    "memory" if process.memory_info().rss - held > steps["memory"] else None)
            if over:
                steps["time"] += self.seconds
                steps["memory"] += self.memory
                raise OverLimit("a mutant's call ran past " + ("the time limit" if over == "time" else "the memory cap"))

        previous = signal.signal(signal.SIGPROF, look)
        signal.setitimer(signal.ITIMER_PROF, TICK, TICK)
        try:
            return self.subject.observe(a_call)
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, previous)


def graded_apart(grade, seconds: float) -> tuple[str, ...]:
    """`grade()` (the names of the checks a mutant failed) run in a fork of this process.

    What the mutant leaves behind goes with the fork: the probes' caches of its runs, memory it
    took. A computation no signal reaches (C code busy for minutes) is stopped by the kernel at
    `seconds` of the fork's CPU (the exercise's budget): the mutant is killed, as a worker
    would be. The reference's answers computed before the fork are the fork's too; the slow
    ones it computes are kept on disk (grader.judge.references). Where there is no fork
    (Windows), in this process.

        graded_apart(lambda: ("test_a",), 60)  ->  ("test_a",)
    """
    if not hasattr(os, "fork"):
        return grade()
    readable, writable = os.pipe()
    pid = os.fork()
    if pid == 0:
        _in_the_fork(grade, seconds, readable, writable)
    os.close(writable)
    try:
        with os.fdopen(readable, encoding="utf-8") as pipe:
            said = pipe.read()
    finally:
        _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        stopped = signal.Signals(os.WTERMSIG(status)).name
        why = "the exercise's budget" if stopped == "SIGXCPU" else stopped
        return (f"(the mutant's run was stopped: {why})",)
    answer = json.loads(said) if said else {"error": f"the fork ended with status {status} and said nothing"}
    if "error" in answer:
        raise RuntimeError("grading a mutant failed:\n" + answer["error"])
    return tuple(answer["failed"])


def _in_the_fork(grade, seconds: float, readable: int, writable: int) -> None:
    """Grade, say what came of it on the pipe, and end without running the judge's exit handlers."""
    code = 0
    try:
        os.close(readable)
        import resource

        limit = math.ceil(seconds)
        resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 5))  # SIGXCPU at the soft limit
        try:
            answer = {"failed": list(grade())}
        except KeyboardInterrupt:
            code = 130
            return
        except BaseException:  # noqa: BLE001 - the grader's own failure, told to the judge
            answer = {"error": traceback.format_exc()}
        with os.fdopen(writable, "w", encoding="utf-8") as pipe:
            json.dump(answer, pipe)
    finally:
        os._exit(code)
