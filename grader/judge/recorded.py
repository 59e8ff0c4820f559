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
zlib, so the expected outputs do not read as text. The hand answers in them, and every
output equal to one, are sealed (`grader.judge.sealed`, by `grade release`): matched, never read.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import grader.sandbox.wire as wire
from grader.model.course import Course
from grader.judge.mistakes import Mistake
from grader.judge.sealed import from_plain
from grader.model.calls import Call, Observation

FORMAT = 1
ANSWERS_FILE = "answers.bin"


def call_key(a_call: Call) -> str:
    """The key of a recorded answer: `Call.key()`, a hash of a canonical encoding of
    (probe, args, kwargs) that does not depend on the machine (tensors by dtype, shape
    and bytes; the corpus, a `model.calls.DataFile`, by its sha256, not its path)."""
    return a_call.key()


# --------------------------------------------------------------------------- the blob

def _obs_to_plain(obs: Observation) -> dict:
    return {"ok": obs.ok, "value": obs.value, "error": obs.error, "output": obs.output}


def _obs_from_plain(d: dict) -> Observation:
    """A recorded observation; a hand answer in it sealed (grader.judge.sealed), as recorded."""
    return Observation(ok=d["ok"], value=from_plain(d["value"]), error=d["error"], output=d.get("output", "") or "")


def load_answers(path: Path) -> dict:
    answers = wire.decode(zlib.decompress(Path(path).read_bytes()))
    if not isinstance(answers, dict) or answers.get("format") != FORMAT:
        raise ValueError(f"{path}: not a recorded-answers file of format {FORMAT}")
    return answers


# --------------------------------------------------------------------------- recording


# --------------------------------------------------------------------------- replaying

class NotRecorded(RuntimeError):
    """A check asked for a reference answer that was not recorded."""


class RecordedReference:
    """One exercise's recorded answers; the interface of references.Reference."""

    def __init__(self, exercise_id: str, data: dict):
        self.exercise_id = exercise_id
        self._answers = data.get("answers", {})
        self._mistake_answers = data.get("mistake_answers", {})
        self._mistakes = [Mistake(**m) for m in data.get("mistakes", [])]
        self.checks = list(data.get("checks", []))

    @property
    def mistakes(self) -> list[Mistake]:
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
    """Like references.LiveReferences, from `grader/answers.bin` instead of `solutions/`."""

    def __init__(self, course: Course, path: Path | None = None):
        self.course = course
        self.path = Path(path) if path else course.grader_dir / ANSWERS_FILE
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
