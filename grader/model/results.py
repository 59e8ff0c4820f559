"""The outcome of grading: per check, per exercise, per submission. Plain dataclasses."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from grader.model.course import Exercise, Text


@dataclass
class CheckResult:
    exercise: str
    name: str
    title: Text
    max_points: int
    passed: bool
    public: bool = False
    manual: bool = False
    finding: Finding | None = None
    shown: list = field(default_factory=list)
    attachments: dict = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def points(self) -> int:
        return self.max_points if self.passed and not self.manual else 0

    @property
    def not_implemented(self) -> bool:
        return self.finding is not None and self.finding.kind in ("not_implemented", "missing")


@dataclass
class ExerciseResult:
    exercise: Exercise
    checks: list[CheckResult] = field(default_factory=list)
    # Reasons a person should read this exercise's file (grader.judge.scan: it reaches for the
    # grader's internals or tampering tools). Costs no points by itself; every format shows it.
    review: list[str] = field(default_factory=list)

    @property
    def score(self) -> int:
        return sum(c.points for c in self.checks)

    @property
    def max_score(self) -> int:
        return sum(c.max_points for c in self.checks if not c.manual)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def status(self) -> str:
        """passed | failed | not_implemented (every graded check says so) | empty."""
        graded = [c for c in self.checks if not c.manual]
        if not graded:
            return "empty"
        if all(c.passed for c in self.checks):
            return "passed"
        if all(c.not_implemented for c in graded):
            return "not_implemented"
        return "failed"


def title_from_doc(doc: str | None, fallback: str) -> Text:
    """A check's docstring `"中文 | English"` as a Text."""
    first = (doc or "").strip().splitlines()[0] if (doc or "").strip() else fallback
    zh, _, en = first.partition("|")
    return Text(zh=zh.strip() or fallback, en=(en.strip() or zh.strip() or fallback))


@dataclass
class Finding:
    kind: str  # mismatch | error | not_implemented | timeout | missing | crash | custom | rule
    label: str = ""
    expected: str | None = None
    got: str | None = None
    zh: str = ""
    en: str = ""
    traceback: str = ""
    output: str = ""
    diagnosis: dict | None = None
    # The value a student was asked to work out by hand (ANSWER_PARAMS): never in a student's
    # report, kept for instructors' and CI formats that ask for it. The fix of a diagnosed
    # mistake is `diagnosis["fix"]`, likewise.
    answer: str | None = None
    # A hidden check's failure as a student may see it (grader.judge.hiding, made by the judge
    # from the observations): {"expected": shape, "got": shape, "zh": why, "en": why}.
    hidden_view: dict | None = None
    # The student's function the error was raised from (the first of the student's frames:
    # the one the probe called), when a call on their code raised: `bpe_encode` in a round
    # trip whose label names decode.
    raised_in: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


class CheckFailed(Exception):
    """A check's verdict: the student's answer is not right (not a bug in the check)."""

    def __init__(self, finding: Finding):
        super().__init__(finding.en or finding.kind)
        self.finding = finding
