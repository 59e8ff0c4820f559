"""Record the reference's answers to the public checks, for a student release (`answers.bin`).

The release has no solutions folder; `grader.judge.recorded` reads what is recorded here.
"""

from __future__ import annotations

import zlib
from pathlib import Path

from grader.judge.recorded import FORMAT, _obs_to_plain, call_key
from grader.model.calls import Call, Observation
from grader.model.course import Course
import grader.sandbox.wire as wire



def save_answers(answers: dict, path: Path) -> None:
    Path(path).write_bytes(zlib.compress(wire.encode(answers), 9))


def _same_observation(a: Observation, b: Observation) -> bool:
    from grader.judge.compare import Tol, compare

    if a.ok != b.ok:
        return False
    if not a.ok:
        return a.error_type == b.error_type
    try:
        return compare(a.value, b.value, Tol(rtol=0.0, atol=0.0)) is None and type(a.value) is type(b.value)
    except Exception:
        return False


class _RecordingReference:
    """A live Reference that remembers every call observed on it and on its mistakes."""

    def __init__(self, inner, store: dict):
        self.inner = inner
        self.exercise_id = inner.exercise_id
        self.store = store  # {"answers": {}, "mistake_answers": {}, "mistakes": [...]}

    @property
    def mistakes(self):
        return self.inner.mistakes

    def observe(self, a_call: Call, timeout: float | None = None) -> Observation:
        obs = self.inner.observe(a_call)
        key = call_key(a_call)
        if key not in self.store["answers"]:
            self.store["answers"][key] = _obs_to_plain(obs)
            for mistake in self.inner.mistakes:
                variant = self.inner.observe_mistake(mistake, a_call)
                if not _same_observation(obs, variant):  # absent means "as the reference"
                    self.store["mistake_answers"].setdefault(mistake.id, {})[key] = _obs_to_plain(variant)
        return obs

    def observe_mistake(self, mistake, a_call: Call) -> Observation:
        self.observe(a_call)  # records the call and every mistake's answer to it
        return self.inner.observe_mistake(mistake, a_call)


class RecordingReferences:
    """Wraps references.LiveReferences; `answers()` is what was recorded, as plain data."""

    def __init__(self, live):
        self.live = live
        self._wrapped: dict[str, _RecordingReference] = {}
        self.stores: dict[str, dict] = {}

    def __call__(self, exercise_id: str) -> _RecordingReference:
        if exercise_id not in self._wrapped:
            inner = self.live(exercise_id)
            store = {"answers": {}, "mistake_answers": {},
                     "mistakes": [m.as_dict() for m in inner.mistakes]}
            self.stores[exercise_id] = store
            self._wrapped[exercise_id] = _RecordingReference(inner, store)
        return self._wrapped[exercise_id]


class _Mirror:
    """A 'student' that answers what the reference answers (through the recorder)."""

    def __init__(self, reference):
        self.reference = reference

    def observe(self, a_call: Call, timeout: float | None = None) -> Observation:
        return self.reference.observe(a_call)

    def close(self) -> None:
        pass


class RecordingFailed(Exception):
    """The reference failed one of its own checks while answers were being recorded."""


def record_answers(course: Course, exercise_ids: list[str] | None = None, *, public_only: bool = True,
                   corpus=None, on_progress=None) -> dict:
    """Run the checks on the reference and record every answer; the blob's content.

    Every check must pass (the mirror student is the reference itself): a failure means
    the reference or a check is broken, and no release should be built from it.
    """
    from grader.run.startup import corpus_provider
    from grader.run.session import GradingSession, run_checks
    from grader.judge.references import LiveReferences

    ids = list(exercise_ids or [e.id for e in course.exercises])
    recorder = RecordingReferences(LiveReferences(course))

    class RecordingSession(GradingSession):
        def student(self, exercise_id):
            return _Mirror(self.references(exercise_id))

    session = RecordingSession(course, ids, references=recorder, public_only=public_only,
                               corpus=corpus or corpus_provider(course), on_progress=on_progress)
    results = run_checks(session)
    bad = [f"{c.exercise}:{c.name}: {c.finding.en if c.finding else ''}"
           for r in results for c in r.checks if not c.passed and not c.manual]
    if bad:
        raise RecordingFailed("the reference fails its own checks:\n  " + "\n  ".join(bad))
    exercises = {}
    for r in results:
        store = recorder.stores.get(r.exercise.id) or {"answers": {}, "mistake_answers": {}, "mistakes": []}
        if r.exercise.id not in recorder.stores:  # no check asked the reference: still keep the mistakes
            store["mistakes"] = [m.as_dict() for m in LiveReferences(course)(r.exercise.id).mistakes]
        exercises[r.exercise.id] = {**store, "checks": [c.name for c in r.checks]}
    return {"format": FORMAT, "public_only": public_only, "exercises": exercises}
