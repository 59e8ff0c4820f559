"""The kit proves itself: every reference passes, every stub fails as not implemented,
every known mistake fails at least one check and is named there, and every file belongs to an
exercise. The self-check `grade check` runs (`grader.build.selfcheck.self_checks`) runs once
here, for the whole course; each test reads the verdicts of its exercise."""

from __future__ import annotations

from collections import defaultdict

import pytest

from grader.build.selfcheck import Step, self_checks
from grader.judge.mistakes import mistakes_for
from grader.judge.references import LiveReferences
from grader.model.course import load_course
from grader.run.startup import load_judge, start_zygote

COURSE = load_course()
IDS = [e.id for e in COURSE.exercises]


@pytest.fixture(scope="module")
def verdicts() -> dict[Step, list]:
    """Every self-check's verdicts, by step, from one run of the whole course."""
    # As `grade check` starts it: the fence grants the course's data folders, wherever they are
    # (a corpus under /tmp is otherwise behind the worker's private /tmp).
    zygote = start_zygote(COURSE)
    load_judge()
    found = defaultdict(list)
    try:
        for step, verdict in self_checks(COURSE, IDS, LiveReferences(COURSE), zygote):
            found[step].append(verdict)
    finally:
        zygote.close()
    return found


def _assert_ok(verdicts, step: Step) -> None:
    assert verdicts[step], f"no self-check ran for {step}"
    for verdict in verdicts[step]:
        assert verdict.ok, f"{verdict.what}: {verdict.detail}"


@pytest.mark.parametrize("exercise_id", IDS)
def test_files_agree_with_course_toml(exercise_id, verdicts):
    _assert_ok(verdicts, Step("structure", exercise_id))


def test_every_file_belongs_to_an_exercise(verdicts):
    _assert_ok(verdicts, Step("orphans"))


@pytest.mark.parametrize("exercise_id", IDS)
def test_reference_passes_every_check(exercise_id, verdicts):
    _assert_ok(verdicts, Step("reference", exercise_id))


@pytest.mark.parametrize("exercise_id", IDS)
def test_stub_fails_every_check_as_not_implemented(exercise_id, verdicts):
    _assert_ok(verdicts, Step("stub", exercise_id))


MISTAKES = [(ex_id, m.id) for ex_id in IDS for m in mistakes_for(ex_id)]


@pytest.mark.parametrize(("exercise_id", "mistake_id"), MISTAKES, ids=[f"{e}-{m}" for e, m in MISTAKES])
def test_each_known_mistake_fails_and_is_named(exercise_id, mistake_id, verdicts):
    _assert_ok(verdicts, Step("mistake", exercise_id, mistake_id))


def test_the_self_check_judged_nothing_else(verdicts):
    """Each verdict belongs to one of the tests above: none failed unseen."""
    expected = ({Step(kind, e) for e in IDS for kind in ("structure", "reference", "stub")} | {Step("orphans")}
                | {Step("mistake", e, m) for e, m in MISTAKES})
    assert set(verdicts) == expected
