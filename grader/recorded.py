"""Answers recorded from the reference, for a kit that has no solutions folder.

The student release has no `solutions/`. `grade ex03` there still compares the student's
outputs with the reference's: with the outputs the reference gave when the release was
built, on the same calls (the public checks' fixed inputs), and with the outputs of each
known mistake on those calls, so that diagnoses still name the mistake.

Recording runs the chosen checks with a "mirror" student that answers exactly what the
reference answers: every call a check makes is then observed once on the reference and
once on every known mistake, and stored under a key that does not depend on the machine
(`call_key`: a hash of the probe's name and a canonical encoding of its arguments; a
file named by an absolute path, such as the corpus, is keyed by its sha256).

The answers are kept as one blob, `grader/answers.bin`: plain data in the kit's one codec
(`wire.encode`, read back with `wire.decode`, so loading it runs nothing) compressed with
zlib, so the expected outputs do not read as text.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path

from grader import wire
from grader.course import Course
from grader.subjects import Call, Observation

FORMAT = 1
ANSWERS_FILE = "answers.bin"


def call_key(a_call: Call) -> str:
    """The key of a recorded answer: `Call.key()`, a hash of a canonical encoding of
    (probe, args, kwargs) that does not depend on the machine (tensors by dtype, shape
    and bytes; the corpus, a `subjects.DataFile`, by its sha256, not its path)."""
    return a_call.key()


# --------------------------------------------------------------------------- the blob

def _obs_to_plain(obs: Observation) -> dict:
    return {"ok": obs.ok, "value": obs.value, "error": obs.error, "output": obs.output}


def _obs_from_plain(d: dict) -> Observation:
    return Observation(ok=d["ok"], value=d["value"], error=d["error"], output=d.get("output", "") or "")


def save_answers(answers: dict, path: Path) -> None:
    Path(path).write_bytes(zlib.compress(wire.encode(answers), 9))


def load_answers(path: Path) -> dict:
    answers = wire.decode(zlib.decompress(Path(path).read_bytes()))
    if not isinstance(answers, dict) or answers.get("format") != FORMAT:
        raise ValueError(f"{path}: not a recorded-answers file of format {FORMAT}")
    return answers


# --------------------------------------------------------------------------- recording

def _same_observation(a: Observation, b: Observation) -> bool:
    from grader.compare import Tol, compare

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
    """Wraps runner.LiveReferences; `answers()` is what was recorded, as plain data."""

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
    from grader.grading import corpus_provider
    from grader.runner import GradingSession, LiveReferences, run_checks

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


# --------------------------------------------------------------------------- replaying

@dataclass(frozen=True)
class RecordedMistake:
    """A known mistake as the release knows it: its message, not its code."""

    id: str
    section: str
    zh: str
    en: str
    hint: int | None = None

    def message(self, lang: str) -> str:
        return self.en if lang == "en" else self.zh

    def as_dict(self) -> dict:
        return {"id": self.id, "section": self.section, "zh": self.zh, "en": self.en, "hint": self.hint}


class NotRecorded(RuntimeError):
    """A check asked for a reference answer that was not recorded."""


class RecordedReference:
    """One exercise's recorded answers; the interface of subjects.Reference."""

    def __init__(self, exercise_id: str, data: dict):
        self.exercise_id = exercise_id
        self._answers = data.get("answers", {})
        self._mistake_answers = data.get("mistake_answers", {})
        self._mistakes = [RecordedMistake(**m) for m in data.get("mistakes", [])]
        self.checks = list(data.get("checks", []))

    @property
    def mistakes(self) -> list[RecordedMistake]:
        return self._mistakes

    def observe(self, a_call: Call, timeout: float | None = None) -> Observation:
        try:
            plain = self._answers[call_key(a_call)]
        except KeyError:
            raise NotRecorded(
                f"{self.exercise_id}: 这个检查的参考答案没有录制在发行版里（{a_call.label or a_call.probe}）"
                f" / the reference's answer to {a_call.label or a_call.probe} is not recorded in this release") from None
        return _obs_from_plain(plain)

    def observe_mistake(self, mistake, a_call: Call) -> Observation:
        key = call_key(a_call)
        plain = self._mistake_answers.get(mistake.id, {}).get(key)
        if plain is not None:
            return _obs_from_plain(plain)
        return self.observe(a_call)  # the mistake answers as the reference does here


class RecordedReferences:
    """Like runner.LiveReferences, from `grader/answers.bin` instead of `solutions/`."""

    def __init__(self, course: Course, path: Path | None = None):
        self.course = course
        self.path = Path(path) if path else course.root / "grader" / ANSWERS_FILE
        self._data: dict | None = None
        self._refs: dict[str, RecordedReference] = {}

    def _load(self) -> dict:
        if self._data is None:
            if not self.path.is_file():
                raise FileNotFoundError(
                    f"找不到录制的参考答案 / recorded answers not found: {self.path} "
                    f"(这个工具包既没有 solutions/ 也没有 answers.bin / this kit has neither solutions/ nor answers.bin)")
            self._data = load_answers(self.path)
        return self._data

    def __call__(self, exercise_id: str) -> RecordedReference:
        if exercise_id not in self._refs:
            data = self._load()["exercises"].get(exercise_id, {})
            self._refs[exercise_id] = RecordedReference(exercise_id, data)
        return self._refs[exercise_id]
