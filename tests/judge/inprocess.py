"""Grading one exercise in this process, as `grade check` grades the known mistakes: the real
checks, references and diagnoses, with the submission's module loaded here instead of in a
worker. For the kit's tests of what a check judges and says.

    module = submission(tmp_path, "ex02", [("return float(log_sum_exp - z[label])", "return 0.0")])
    result = grade("ex02", module, references)   # an ExerciseResult
"""

from __future__ import annotations

import itertools
import types

from grader.judge.references import load_module_from
from grader.model.course import load_course
from grader.run.session import GradingSession, run_checks
from grader.run.startup import corpus_provider, load_judge

COURSE = load_course()
_names = itertools.count()


def submission(tmp_path, exercise_id: str, replacements=(), references=None, *, text: str | None = None,
               files: dict[str, str] | None = None) -> types.ModuleType:
    """The solution of `exercise_id` with each `old` replaced by `new` (each must occur once),
    or `text` in its place, written to `tmp_path` beside `files` (helpers: name -> code), and loaded."""
    ex = COURSE.exercise(exercise_id)
    if references is not None:
        references(exercise_id)  # puts solutions/ on sys.path, for `from ex08_get_batch import …`
    source = (COURSE.solutions_dir / ex.file).read_text(encoding="utf-8") if text is None else text
    for old, new in replacements:
        assert source.count(old) == 1, f"{exercise_id}: {old!r} occurs {source.count(old)} times"
        source = source.replace(old, new)
    for name, code in (files or {}).items():
        (tmp_path / name).write_text(code, encoding="utf-8")
    name = f"student_{exercise_id}_{next(_names)}"
    (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    return load_module_from(tmp_path, name)


def grade(exercise_id, module, references, only=None):
    """The exercise's result for `module`, graded in this process (only the checks named in `only`),
    with the judge loaded as `grade check` loads it (torch on one thread)."""
    load_judge()
    (result,) = run_checks(GradingSession(COURSE, [exercise_id], references=references,
                                          in_process={exercise_id: module}, corpus=corpus_provider(COURSE),
                                          only_checks=only))
    return result


def named(result) -> set[str]:
    """The ids of the known mistakes the failed checks name."""
    return {c.finding.diagnosis["id"] for c in result.checks
            if not c.passed and c.finding is not None and c.finding.diagnosis}


def failed(result) -> list[str]:
    return [c.name for c in result.checks if not c.passed and not c.manual]


def passed(result) -> dict[str, bool]:
    return {c.name: c.passed for c in result.checks}
