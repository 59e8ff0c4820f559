"""What checks are written with: make a call on the student and the reference, compare.

See grader/per_exercise/README.md. A failure is raised as `CheckFailed` carrying a `Finding`:
plain fields (what was called, expected vs got in short form, why in both languages, the
student's traceback and printed output, the known mistake it matches) that the reports
render in Chinese or English.
"""

from __future__ import annotations


from grader.judge.compare import DEFAULT_TOL, Mismatch, Tol, compare, short
from grader.judge.mistakes import GOES_ON, FirstFailure, Seen, diagnosis_for, reported_instead
from grader.judge.sealed import Sealed
from grader.judge.student_errors import grader_made, student_error_finding
from grader.model.calls import Call, Observation
from grader.model.results import CheckFailed, Finding

__all__ = ["Tol", "call", "read", "probe", "same", "check_value", "observe", "fail", "assert_ok",
           "CheckFailed", "Finding", "StudentView", "diagnose"]


class StudentView:
    """The `student` fixture: a subject with the check's time limit, remembering what it showed
    and every call the check made on it (`seen`: what a diagnosis must explain in full).

    With `goes_on` (set by a runner that calls `settle` when the check's body ends: the pytest
    plugin, the notebook), a failed comparison does not stop the check: it is kept as
    `first_failure`, the check compares its other cases, and `settle` raises it, diagnosed
    over all of them (grader.judge.mistakes)."""

    def __init__(self, subject, timeout: float, *, goes_on: bool = False):
        self.subject = subject
        self.timeout = timeout
        self.shown: list[tuple[str, str, str]] = []
        self.attachments: dict[str, object] = {}
        self.seen: list[Seen] = []
        self.goes_on = goes_on
        self.first_failure: FirstFailure | None = None

    @property
    def failing(self) -> Seen | None:
        """The call the reported failure is about: the first failed one, else the last one made."""
        if self.first_failure is not None:
            return self.seen[self.first_failure.index]
        return self.seen[-1] if self.seen else None

    def keep_failure(self, finding: Finding, reference) -> None:
        """Keep the check's first failed comparison (the `seen` call just made) and go on."""
        if self.first_failure is None:
            self.first_failure = FirstFailure(finding, reference, len(self.seen) - 1)

    def settle(self, raised: BaseException | None = None) -> None:
        """End the check: raise its first failure, diagnosed over every case it compared, or
        what the check raised (a time-out or a crash after the first failure wins), or nothing."""
        if self.first_failure is None or reported_instead(raised):
            self.first_failure = None
            if raised is not None:
                raise raised
            return
        raise CheckFailed(self.first_failure.final(self.seen))

    def observe(self, a_call: Call, *, tol: Tol | None = None, dtype: bool = True,
                expected: Observation | None = None, words: dict | None = None) -> Observation:
        got = self.subject.observe(a_call, self.timeout)
        self.seen.append(Seen(a_call, got, tol or DEFAULT_TOL, dtype, expected, words))
        return got

    def record(self, label: str, expected: str, got: str) -> None:
        self.shown.append((label, expected, got))

    def attach(self, kind: str, data) -> None:
        """Keep plain data for the report to draw (ex05's shapes, ex12's loss table)."""
        self.attachments[kind] = data


def _args_label(name: str, args: tuple, kwargs: dict) -> str:
    """The call as Python would read it (grader.judge.labels): `make_windows([25, 20, …], 2, stride=3)`."""
    from grader.judge.labels import call_label

    return call_label(name, args, kwargs)


def call(fn_name: str, *args, **kwargs) -> Call:
    """Call the exercise's function (or class) `fn_name` with plain arguments."""
    return Call("common.call_function", (fn_name, args, kwargs), {}, _args_label(fn_name, args, kwargs))


def read(name: str) -> Call:
    """Read the exercise's module-level constant `name`."""
    return Call("common.read_constant", (name,), {}, name)


def probe(spec: str, *args, **kwargs) -> Call:
    """Run the probe `grader/probes/<module>.py:<function>` on the exercise module.

    Its default label is the probe's own name with the inputs (for instructors' reports); a
    probe's name is the kit's, not a function the student wrote, so a check names the call in
    the student's terms (`same(…, label=…)`), and a hidden check's label keeps only a name of
    the stub's (grader.judge.hiding.hidden_view_of)."""
    return Call(spec, args, kwargs, _args_label(spec.rpartition(".")[2], args, kwargs))


def observe(subject, a_call: Call) -> Observation:
    return subject.observe(a_call)


def fail(zh: str, en: str, *, label: str = "", expected: str | None = None, got: str | None = None,
         diagnosis: dict | None = None, answer: str | None = None, kind: str = "custom") -> None:
    """Fail the check with your own message (both languages).

    `diagnosis`: usually `diagnose(student, reference)`; `answer`: a hand-computed value the
    student's report must not show (see `check_value(..., hand=True)`). `kind="rule"`: a verdict
    on the submission's own source (grader.judge.uses), words that hold nothing but the student's
    code, shown in full even for a hidden check.
    """
    raise CheckFailed(Finding(kind, label=label, expected=expected, got=got, zh=zh, en=en, diagnosis=diagnosis,
                              answer=answer))


def assert_ok(obs: Observation, label: str = "") -> object:
    """The student's value, or the standard failure if their call raised."""
    if not obs.ok:
        raise CheckFailed(student_error_finding(obs, label))
    return obs.value


def _verdict(expected: Observation, got: Observation, tol: Tol, dtype: bool, words: dict | None = None) -> Mismatch | None:
    """None when the student's observation agrees with the expected one."""
    if not expected.ok:
        want = expected.error_type
        if got.ok:
            return Mismatch(f"应当抛出 {want}，但正常返回了 {short(got.value)}",
                            f"should raise {want}, but returned {short(got.value)}")
        if got.raised(want) and not grader_made(got):  # a file that raised it while importing did not answer
            return None
        return Mismatch(f"应当抛出 {want}，但抛出了 {got.error_type}", f"should raise {want}, but raised {got.error_type}")
    if not got.ok:
        return Mismatch("", "")  # described by student_error_finding
    return compare(expected.value, got.value, tol, dtype=dtype, words=words)


def diagnose(student, reference) -> dict | None:
    """The known mistake that explains EVERY call this check made on the student, if one does.

    A mistake is named only when its variant's observation equals the student's on each
    call the check observed so far (those the student got right included), so one matching
    field or one matching call is never enough. `same` and `check_value` diagnose when the
    check ends, over every case it compared (they go on past a failed one); a custom check
    calls it when it fails and passes the result to `fail(..., diagnosis=diagnose(student, reference))`.

    Example: ex08's start statistics and layout calls of an x one id too long report
    `x_shape (64, 9)`; "batch and time swapped" reports `(8, 64)`: not named.
    """
    seen = getattr(student, "seen", None)
    if reference is None or not seen:
        return None
    return diagnosis_for(reference, seen)


def _view_of(student) -> StudentView | None:
    if isinstance(student, StudentView):
        return student
    view = getattr(student, "view", None)  # a derived view of the student (grader.judge.derived)
    return view if isinstance(view, StudentView) else None


def _failed(student, reference, finding: Finding, *, diagnosed: bool = True) -> None:
    """A failed comparison: kept while the check goes on through its other cases (the `student`
    fixture), else raised at once, diagnosed over the calls made so far."""
    view = _view_of(student)
    if view is not None and view.goes_on and finding.kind in GOES_ON:
        view.keep_failure(finding, reference if diagnosed else None)
        return
    if diagnosed:
        finding.diagnosis = diagnose(student, reference)
    raise CheckFailed(finding)


def _observe(student, a_call: Call, tol: Tol, dtype: bool, expected: Observation | None,
             words: dict | None = None) -> Observation:
    """Observe on the student, keeping how the call is compared (for the diagnosis and the report)."""
    if isinstance(student, StudentView) or isinstance(getattr(student, "view", None), StudentView):
        return student.observe(a_call, tol=tol, dtype=dtype, expected=expected, words=words)  # (a derived view too)
    return student.observe(a_call)


def _expected_short(obs: Observation) -> str:
    return short(obs.value) if obs.ok else f"raises {obs.error_type}"


class AuthorsError(RuntimeError):
    """The check itself is wrong: its probe does not exist, or failed before the reference ran.
    Never a match between student and reference (both would fail the same way): the check
    errors, for the student as "the grader's error", and `grade check` names it."""


def authors_error(reference, expected: Observation, a_call: Call) -> None:
    """AuthorsError when the reference's answer is the check's own failure, not the reference's:
    a probe that does not exist, or an error whose traceback holds no frame of the reference
    (raised in the probe before the reference was called). Recorded answers are not judged."""
    if expected.ok or not expected.error or getattr(reference, "recorded", False):
        return
    kind = expected.error.get("type")
    if kind == "ProbeMissing":
        raise AuthorsError(f"{a_call.probe}: {expected.error.get('message', '')}")
    if kind not in ("Timeout",) and not expected.error.get("own_frames") and getattr(reference, "module", None) is not None:
        raise AuthorsError(f"{a_call.probe} raised {kind} before the reference ran: {expected.error.get('message', '')}")


def same(student, reference, a_call: Call, label: str | None = None, tol: Tol | None = None,
         dtype: bool = True, words: dict | None = None):
    """Observe `a_call` on both; fail unless the student's answer matches. Returns it.

    `words`: for a dict (or tuple) of facts, what each key's difference means, {key: (zh, en)},
    said after its expected against got (grader.judge.compare).

    Through the `student` fixture a wrong answer (or the student's exception) does not stop
    the check: it is the check's failure, reported when the check ends, and the check goes on
    comparing its other cases, so that the diagnosis explains all of them (StudentView.settle)."""
    tol = tol or DEFAULT_TOL
    label = label or a_call.label
    expected = reference.observe(a_call)
    authors_error(reference, expected, a_call)
    got = _observe(student, a_call, tol, dtype, expected, words)
    if expected.ok is False and expected.error and expected.error.get("type") in ("NotImplementedYet", "NotImplementedError"):
        raise RuntimeError(f"the reference does not implement {label}")
    mismatch = _verdict(expected, got, tol, dtype, words)
    if mismatch is None:
        student.record(label, _expected_short(expected), _expected_short(got) if got.ok else f"raises {got.error_type}")
        return got.value
    if not got.ok and (expected.ok or got.error.get("not_implemented") or grader_made(got)):
        finding = student_error_finding(got, label)
        finding.expected = _expected_short(expected)
        if finding.got is None and finding.kind in ("timeout", "crash"):
            finding.got = "—"
        if finding.kind != "error":
            raise CheckFailed(finding)
        _failed(student, reference, finding)
        return None
    finding = Finding(
        "mismatch", label, expected=_expected_short(expected),
        got=_expected_short(got) if got.ok else f"raises {got.error_type}",
        zh=mismatch.zh, en=mismatch.en, output=got.output,
        traceback=(got.error or {}).get("traceback", "") if not got.ok else "")
    if got.ok and _is_id_list(expected.value) and _is_id_list(got.value):
        _point_at_first_difference(student, finding, expected.value, got.value)
    _failed(student, reference, finding)
    return got.value if got.ok else None


def _is_id_list(value) -> bool:
    """A list of token ids or merges (ints, or tuples of ints): the first difference is what matters."""

    def ids(v, depth=0) -> bool:
        if isinstance(v, bool):
            return False
        if isinstance(v, int):
            return True
        return isinstance(v, (list, tuple)) and depth < 3 and all(ids(x, depth + 1) for x in v)

    return isinstance(value, (list, tuple)) and ids(value)


def _point_at_first_difference(student, finding: Finding, expected, got) -> None:
    """Show where two id lists first differ (ex13), not the whole lists."""
    from grader.report.differences import difference_text, first_difference, item_text

    diff = first_difference(expected, got)
    if diff is None:
        return
    student.attach("difference", diff)
    finding.expected = f"[{diff['index']}] {item_text(diff['expected'])}"
    finding.got = f"[{diff['index']}] {item_text(diff['got'])}"
    finding.zh, finding.en = difference_text(diff, "zh"), difference_text(diff, "en")


def check_value(student, a_call: Call, expected, label: str | None = None, tol: Tol | None = None,
                dtype: bool = True, reference=None, hand: bool = False, words: dict | None = None):
    """Compare the student's answer with a literal value (the course text's own numbers).

    Pass `reference` to have a wrong answer matched against the known mistakes. `hand=True`
    marks a value the student was asked to work out by hand (ANSWER_PARAMS, or a function's
    value that equals one): a failure then says it is wrong and which way, never the value
    (`Finding.answer` keeps it for instructors' reports).
    """
    tol = tol or DEFAULT_TOL
    label = label or a_call.label
    if reference is not None and getattr(reference, "module", None) is not None:
        authors_error(reference, reference.observe(a_call), a_call)
    literal = Observation(ok=True, value=expected)
    got = _observe(student, a_call, tol, dtype, literal, words)
    shown = HIDDEN_ANSWER if hand else short(expected)
    if not got.ok:
        finding = student_error_finding(got, label)
        finding.expected = shown
        finding.got = finding.got or "—"
        if hand:
            finding.answer = short(expected)
        if finding.kind != "error":
            raise CheckFailed(finding)
        _failed(student, reference, finding, diagnosed=False)
        return None
    value = got.value
    mismatch = compare(expected, value, tol, dtype=dtype, words=words)
    if mismatch is None:
        student.record(label, short(expected), short(value))
        return value
    if hand:
        zh, en = hand_mismatch(expected, value)
        finding = Finding("mismatch", label, expected=HIDDEN_ANSWER, got=short(value), zh=zh, en=en,
                          output=got.output, answer=short(expected))
    else:
        finding = Finding("mismatch", label, expected=short(expected), got=short(value),
                          zh=mismatch.zh, en=mismatch.en, output=got.output)
    _failed(student, reference, finding)
    return value


HIDDEN_ANSWER = "?"  # a hand-computed answer is not shown (the message says so, in the report's language)


def check_hand(student, reference, a_call: Call, label: str | None = None, tol: Tol | None = None):
    """Compare a value the student works out by hand (ANSWER_PARAMS, or a function's value
    that equals one) with the reference's: `check_value(..., hand=True)` with the reference's
    answer as the expected value, so that no check holds the answer as a literal and a
    student release holds it sealed (grader.judge.sealed).

    Example: check_hand(student, reference, read("ANSWER_PARAMS")) fails with "not right: too
    small, …" (a release: "not right") and never shows the value.
    """
    expected = reference.observe(a_call)
    if not expected.ok:
        raise RuntimeError(f"the reference raised on {a_call.label or a_call.probe}: {expected.error_type}")
    return check_value(student, a_call, expected.value, label=label, tol=tol, reference=reference, hand=True)


def hand_mismatch(expected, got) -> tuple[str, str]:
    """Why a hand-computed value is wrong, without the value: its kind, or which way it is off.

    >>> hand_mismatch(123_000_000, 61_500_000)[1]
    'not right: too small, but the right order of magnitude. The right value is not shown: work it out'

    Sealed (a student release: grader.judge.sealed), only its kind can be told.
    """
    tail_zh, tail_en = "。正确的值不显示：请自己算出来", ". The right value is not shown: work it out"
    if isinstance(expected, Sealed):
        if expected.kind == "int" and type(got) is not int:
            return (f"不对：应当是整数（int），得到的是 {type(got).__name__}{tail_zh}",
                    f"not right: it should be an int, got a {type(got).__name__}{tail_en}")
        return "不对" + tail_zh, "not right" + tail_en
    numbers = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (expected, got))
    if not numbers:
        if type(got) is not type(expected):
            return (f"不对：应当是 {type(expected).__name__}，得到的是 {type(got).__name__}{tail_zh}",
                    f"not right: it should be a {type(expected).__name__}, got a {type(got).__name__}{tail_en}")
        return "不对" + tail_zh, "not right" + tail_en
    if isinstance(expected, int) and not isinstance(got, int):
        return (f"不对：应当是整数（int），得到的是 {type(got).__name__}{tail_zh}",
                f"not right: it should be an int, got a {type(got).__name__}{tail_en}")
    big = got > expected
    way_zh, way_en = ("偏大", "too large") if big else ("偏小", "too small")
    try:
        ratio = abs(got / expected) if expected else float("inf")
    except OverflowError:  # an int beyond every float
        ratio = float("inf")
    if 0.9 <= ratio <= 1.1:
        size_zh, size_en = "差得不多（不到 10%）", "close (within 10%)"
    elif 0.1 < ratio < 10:
        size_zh, size_en = "数量级是对的", "but the right order of magnitude"
    else:
        size_zh, size_en = "差了一个数量级以上", "off by more than an order of magnitude"
    if (got < 0) != (expected < 0):
        size_zh, size_en = "符号不对", "and of the wrong sign"
    return f"不对：{way_zh}，{size_zh}{tail_zh}", f"not right: {way_en}, {size_en}{tail_en}"
