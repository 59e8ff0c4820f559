"""Time limits per check, per exercise and per submission, and the worst case they add up to.

A worker call's own limit is not enough: a full course makes about 400 calls, so code that
sleeps just under each limit would hold a judge for hours. Three clocks run instead, all
charged with what each call cost the student: its worker's CPU time and the time it spent
waiting by choice (a sleep, a lock), never the time a busy machine kept it waiting for a CPU
(`grader.sandbox.clock`; the import of the exercise file included):

- a check may spend its `timeout` (course.toml, or the check's `timeout_s` marker) in all;
- an exercise may spend its `budget` (course.toml `budget`, default `[limits] exercise_budget`)
  over all its checks;
- a submission may spend `[limits] submission_budget` over all its exercises.

Every call gets the least of what is left on the three. A call past its limit is killed (the
worker's process group), and a student function that once ran past a check's whole limit is
not waited for again in that exercise: the checks that need it fail at once, saying so (one
that had only what was left of a limit or a budget is not marked). Once a budget
is spent, the checks not yet done fail at once; the checks done keep their points.

    >>> clocks = SubmissionClock(course)
    >>> subject = clocks.check("ex12", worker_subject)   # one per check (the `student` fixture)
    >>> subject.observe(call("train_bigram", ...), timeout=180.0)
    >>> worst_case_seconds(course)                       # what one submission can cost: 600.0
"""

from __future__ import annotations

import time

from grader.model.calls import Call, Observation
from grader.model.course import Course


def worst_case_seconds(course: Course, exercise_ids: list[str] | None = None) -> float:
    """The most time a submission's code can take to grade, from course.toml alone (seconds).

    min(submission_budget, sum of the graded exercises' budgets). Time the judge spends on
    its own side (comparing, the reference's answers, computed once per judge and cached)
    is not the student's to spend and comes on top; so does the start-up of the run.

    >>> worst_case_seconds(load_course())             # the kit's course.toml
    600.0
    """
    ids = exercise_ids or [e.id for e in course.exercises]
    return min(course.submission_budget, sum(course.exercise(e).budget for e in ids))


def function_of(a_call: Call) -> str:
    """What a call runs of the student's: `call_function`'s function name, else the probe."""
    if a_call.probe == "common.call_function" and a_call.args:
        return f"function {a_call.args[0]}"
    return f"probe {a_call.probe}"


def _timeout(message: str, *, started: bool = True) -> Observation:
    """A time-out as the judge says it; `started=False`: the call was never made (a function
    that ran past its limit before, a budget used up), so nothing ran for the student to stop."""
    error = {"type": "Timeout", "mro": ["Timeout"], "message": message, "traceback": "", "not_implemented": False}
    if not started:
        error["unstarted"] = True  # the judge's own mark (a worker's answers never carry it: calls.Observation)
    return Observation(ok=False, error=error)


class _Clock:
    def __init__(self, seconds: float, zh: str, en: str):
        self.left, self.total, self.zh, self.en = seconds, seconds, zh, en

    def spent(self) -> bool:
        return self.left <= 0


class _ExerciseClock(_Clock):
    def __init__(self, seconds: float):
        super().__init__(seconds, "本练习的时间预算", "the exercise's time budget")
        self.timed_out: dict[str, float] = {}  # function -> the limit it ran past


class SubmissionClock:
    """The clocks of one submission: its own, one per exercise; `check()` adds one per check."""

    def __init__(self, course: Course, *, submission_budget: float | None = None):
        self.course = course
        total = course.submission_budget if submission_budget is None else submission_budget
        self.clock = _Clock(total, "本次提交的时间预算", "the submission's time budget")
        self.exercises: dict[str, _ExerciseClock] = {}

    def exercise(self, exercise_id: str) -> _ExerciseClock:
        if exercise_id not in self.exercises:
            self.exercises[exercise_id] = _ExerciseClock(self.course.exercise(exercise_id).budget)
        return self.exercises[exercise_id]

    def check(self, exercise_id: str, subject) -> CheckSubject:
        """The subject one check observes through (a fresh check clock, the shared others)."""
        return CheckSubject(subject, self, self.exercise(exercise_id))


class CheckSubject:
    """A worker subject seen by one check: every call within what the three clocks leave."""

    def __init__(self, subject, submission: SubmissionClock, exercise: _ExerciseClock):
        self.subject, self.submission, self.exercise = subject, submission, exercise
        self.check: _Clock | None = None  # started by the first call, with the check's timeout

    def observe(self, a_call: Call, timeout: float) -> Observation:
        if self.check is None:
            self.check = _Clock(float(timeout), "本项检查的时限", "the check's time limit")
        function = function_of(a_call)
        if function in self.exercise.timed_out:
            limit = self.exercise.timed_out[function]
            return _timeout(f"{limit:.3g} s（本练习中已超时一次，不再等待 / ran past its limit earlier in this "
                            f"exercise, not waited for again）", started=False)
        clocks = [self.check, self.exercise, self.submission.clock]
        binding = min(clocks, key=lambda c: c.left)
        if binding.spent():
            return _timeout(f"{binding.total:g} s（{binding.zh}已用完 / {binding.en} is used up）", started=False)
        limit = binding.left
        started, observation = time.monotonic(), None
        try:
            observation = self.subject.observe(a_call, limit)
        finally:
            measured = observation.seconds if observation is not None else None
            elapsed = measured if measured is not None else time.monotonic() - started  # unmeasured: wall time
            for clock in clocks:
                clock.left -= elapsed
        if not observation.ok and observation.error_type == "Timeout":
            # Not waited for again only when it ran past the check's whole limit: a call that had
            # only what an earlier call of the check left (or what was left of a budget) gets
            # the full limit again in the next check.
            if not observation.error.get("import_error") and limit >= self.check.total:
                self.exercise.timed_out[function] = limit
            if binding is not self.check:  # what was left of a budget: said, never a bare "0 s"
                observation.error["message"] = f"{limit:.3g} s（{binding.zh}已用完 / {binding.en} is used up）"
            elif limit < self.check.total:  # what the check's earlier calls left of its limit
                observation.error["message"] = (f"{limit:.3g} s（本项检查 {self.check.total:g} s 的时限只剩这么多 / "
                                                 f"what was left of the check's {self.check.total:g} s limit）")
        return observation

    def close(self) -> None:
        pass
