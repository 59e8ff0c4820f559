"""Known mistakes: each one a small variant of the reference, named and cited.

An exercise's checks module (`grader/per_exercise/exNN/checks.py`) lists its known mistakes as
`MISTAKES`, below the checks that must catch them. A mistake's variant
is the reference module with some attributes replaced. A failed check names a mistake only
when the variant's observations equal the student's on EVERY call the check made (not on
one call, not on one field): then the variant fails the check exactly as the student did,
and the message names the bug and the section of the course text to reread.

A mistake's message says what is wrong and where to read, never the fixed line of code:
that is its `fix`, the last hint level's business (and shown to instructors on request).

Example: ex06's check `test_whole_corpus` observes one call, `corpus_roundtrip(...)`. A
student's decode that joins with spaces gives `{"decoded_sha256": "9f…", …}`; the variant
"decode drops id 0" gives `{"decoded_sha256": "1c…", …}`: they differ, so that mistake is
not named, although both fail the check.

Every call means every case the check compares, not the ones before the first wrong answer: a
check does not stop at its first failed comparison (`same`, `check_value` through the `student`
fixture keep it as the check's `FirstFailure` and go on), so the cases after it are observed
too, and the diagnosis, made when the check ends, must explain them all. An ex03 that forgets
the LM head (`embedding_params` always V × C) looks like "tied and untied swapped" on the
untied case it fails first; the tied case after it, which it gets right and the swapped variant
does not, rules that diagnosis out.

A mistake whose variant gives no fixed answer (a vocabulary in `list(set(text))` order, which
changes with each process's string hashes) cannot agree with the student by equality: it says
instead, with `explains(seen)`, whether every call the check made reads as that mistake and as
nothing simpler (ex06: every table consistent, in an order that is neither sorted, nor first
appearance, nor by frequency). Its `overrides` are still its natural code, for `grade check`.
"""

from __future__ import annotations

import importlib
import types
from dataclasses import dataclass, field
from typing import Callable

from grader.judge.compare import DEFAULT_TOL, Tol, compare
from grader.model.calls import Call, Observation
from grader.model.results import Finding


@dataclass(frozen=True)
class Mistake:
    """One known mistake: `zh`/`en` name the bug (no fixed code), `fix` is how to fix it."""

    id: str
    section: str
    zh: str
    en: str
    overrides: dict = field(default_factory=dict, hash=False, compare=False)
    hint: int | None = None
    fix: dict | None = field(default=None, hash=False, compare=False)  # {"zh": …, "en": …}
    explains: Callable[[list], bool] | None = field(default=None, hash=False, compare=False)

    def message(self, lang: str) -> str:
        return self.en if lang == "en" else self.zh

    def variant(self, reference: types.ModuleType) -> types.ModuleType:
        """The reference module with this mistake's overrides in place."""
        module = types.ModuleType(f"{reference.__name__}__{self.id}")
        module.__dict__.update(reference.__dict__)
        module.__dict__.update(self.overrides)
        return module

    def as_dict(self) -> dict:
        return {"id": self.id, "section": self.section, "zh": self.zh, "en": self.en, "hint": self.hint,
                "fix": dict(self.fix) if self.fix else None}


def mistakes_for(exercise_id: str) -> list[Mistake]:
    """The exercise's known mistakes (none where its checks list none: a student release)."""
    name = f"grader.per_exercise.{exercise_id}.checks"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name in (name, f"grader.per_exercise.{exercise_id}"):
            return []
        raise
    return list(getattr(module, "MISTAKES", []))


def fix_title(message: str, lang: str) -> str:
    """A mistake's short name: its message up to the first colon.

    >>> fix_title("差一错误：最后一个窗口被丢掉了", "zh"), fix_title("Off by one: the last window is dropped", "en")
    ('差一错误', 'Off by one')
    """
    return message.split("：" if lang == "zh" else ":", 1)[0].strip()


def fixes_level(mistakes: list[Mistake]) -> dict[str, str] | None:
    """The last level of a hint ladder: every known mistake's fix, under its short name, in the
    order the mistakes are listed (None when no mistake has a fix)."""
    with_fix = [m for m in mistakes if m.fix]
    if not with_fix:
        return None
    return {"zh": "改法（最后一级提示）：" + "；".join(f"{fix_title(m.zh, 'zh')}——{m.fix['zh']}" for m in with_fix),
            "en": "The fixes (the last level): " + "; ".join(f"{fix_title(m.en, 'en')} — {m.fix['en']}"
                                                             for m in with_fix)}


@dataclass
class Seen:
    """One call a check made on the student: what came back, and how it is compared.

    `expected` is the reference's observation when the check compared against it (`same`),
    a literal's observation (`check_value`), or None (a custom check).
    """

    call: Call
    got: Observation
    tol: Tol = DEFAULT_TOL
    dtype: bool = True
    expected: Observation | None = None
    words: dict | None = None  # what each key's difference means (grader.judge.compare), for the report


_NOT_DIAGNOSABLE = {"Timeout", "WorkerDied", "MissingName", "MissingSubmissionFile", "NotImplementedYet",
                    "NotImplementedError", "MalformedAnswer"}


def agrees(variant: Observation, seen: Seen) -> bool:
    """Whether a mistake's observation of `seen.call` is the student's.

    Values: equal under the call's tolerance (both ways, so `1` vs `1.0` is not equal).
    Exceptions: the same type, and either the same message or the type the reference raises
    there too (two right ValueErrors need not share their wording).
    """
    got = seen.got
    if variant.ok != got.ok:
        return False
    if got.ok:
        return (compare(variant.value, got.value, seen.tol, dtype=seen.dtype) is None
                and compare(got.value, variant.value, seen.tol, dtype=seen.dtype) is None)
    if variant.error_type != got.error_type or got.error_type in _NOT_DIAGNOSABLE:
        return False
    if (variant.error or {}).get("message") == (got.error or {}).get("message"):
        return True
    expected = seen.expected
    return expected is not None and not expected.ok and expected.error_type == got.error_type


def matching(reference, seen: list[Seen]) -> list:
    """Every known mistake whose variant agrees with the student on all of `seen`.

    The last call (the one that failed) is tried first: most mistakes drop out there.
    """
    if not seen:
        return []
    order = [seen[-1]] + seen[:-1]
    found = []
    for mistake in getattr(reference, "mistakes", []):
        if mistake.explains is not None:  # no fixed answer to agree with: the mistake reads the calls itself
            try:
                if mistake.explains(seen):
                    found.append(mistake)
            except Exception:  # noqa: BLE001 - the student's data, whatever its shape: no diagnosis
                pass
            continue
        try:
            if all(agrees(reference.observe_mistake(mistake, s.call), s) for s in order):
                found.append(mistake)
        except Exception:  # noqa: BLE001 - a release without that answer recorded: no diagnosis, no crash
            continue
    return found


def diagnosis_for(reference, seen: list[Seen]) -> dict | None:
    """The one known mistake that explains every observation, as a dict; None if none or several.

    Two mistakes that both explain everything the check saw cannot be told apart there:
    naming either would be a guess, so neither is named (another check tells them apart).
    """
    found = matching(reference, seen)
    if found and all(m.zh == found[0].zh for m in found):
        return found[0].as_dict()  # variants of one bug under one name (ex13's tie rules)
    return None


# ------------------------------------------------------------------ a check goes on past its first failure

# The failures a check goes on past: a wrong answer, or the student's own exception (the cases
# after it still tell mistakes apart). A stub, a missing name or a file that does not import
# stop the check where they are; a time-out or a crash after the first failure is what the
# report says instead (later checks refer to it: "not run again: … ran past its limit above").
GOES_ON = frozenset({"mismatch", "error"})
REPORTED_INSTEAD = frozenset({"timeout", "crash"})


@dataclass
class FirstFailure:
    """A check's first failed comparison, kept while the check compares its other cases.

    `reference` is what the diagnosis is made against (None: the comparison asked for none),
    `index` the position of the failed call in the check's `seen`.
    """

    finding: Finding
    reference: object | None
    index: int

    def final(self, seen: list[Seen]) -> Finding:
        """The finding to report, diagnosed over every case the check compared (`seen`)."""
        if self.reference is not None:
            self.finding.diagnosis = diagnosis_for(self.reference, seen)
        return self.finding


def reported_instead(raised: BaseException | None) -> bool:
    """Whether what ended the check replaces its first failure in the report."""
    if raised is None:
        return False
    if not isinstance(raised, Exception):  # KeyboardInterrupt, pytest's own outcomes
        return True
    later = getattr(raised, "finding", None)
    return isinstance(later, Finding) and later.kind in REPORTED_INSTEAD
