"""The self-check `grade check` runs (`grader.build.selfcheck.self_checks`), its tests written
once here and run for half of the course by each of two test files, so that parallel test
workers share the work (the slowest known mistakes, ex06's on the whole corpus and ex12's
training, fall one in each half). A test file names its half and imports the tests:

    EXERCISES, ORPHANS = FIRST_HALF, True      # ORPHANS: the whole course's orphaned files too
    from tests.build.selfcheck_run import pytest_generate_tests, verdicts, test_reference_passes_every_check

The self-check runs once per file (the `verdicts` fixture); each test reads the verdicts of
its exercise.
"""

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
FIRST_HALF, SECOND_HALF = IDS[:7], IDS[7:]


def known_mistakes(ids: list[str]) -> list[tuple[str, str]]:
    """(exercise id, mistake id) of every known mistake of `ids`."""
    return [(ex_id, m.id) for ex_id in ids for m in mistakes_for(ex_id)]


def pytest_generate_tests(metafunc):
    """The tests below run over the exercises (and their known mistakes) of the file's half."""
    ids = metafunc.module.EXERCISES
    if "mistake_id" in metafunc.fixturenames:
        mistakes = known_mistakes(ids)
        metafunc.parametrize(("exercise_id", "mistake_id"), mistakes, ids=[f"{e}-{m}" for e, m in mistakes])
    elif "exercise_id" in metafunc.fixturenames:
        metafunc.parametrize("exercise_id", ids)


@pytest.fixture(scope="module")
def verdicts(request) -> dict[Step, list]:
    """Every self-check's verdicts for the file's half, by step, from one run."""
    # As `grade check` starts it: the fence grants the course's data folders, wherever they are
    # (a corpus under /tmp is otherwise behind the worker's private /tmp).
    zygote = start_zygote(COURSE)
    load_judge()
    found = defaultdict(list)
    try:
        for step, verdict in self_checks(COURSE, request.module.EXERCISES, LiveReferences(COURSE), zygote,
                                         orphans=request.module.ORPHANS):
            found[step].append(verdict)
    finally:
        zygote.close()
    return found


def assert_ok(verdicts, step: Step) -> None:
    assert verdicts[step], f"no self-check ran for {step}"
    for verdict in verdicts[step]:
        assert verdict.ok, f"{verdict.what}: {verdict.detail}"


def test_files_agree_with_course_toml(exercise_id, verdicts):
    assert_ok(verdicts, Step("structure", exercise_id))


def test_reference_passes_every_check(exercise_id, verdicts):
    assert_ok(verdicts, Step("reference", exercise_id))


def test_stub_fails_every_check_as_not_implemented(exercise_id, verdicts):
    assert_ok(verdicts, Step("stub", exercise_id))


def test_each_known_mistake_fails_and_is_named(exercise_id, mistake_id, verdicts):
    assert_ok(verdicts, Step("mistake", exercise_id, mistake_id))


def test_the_self_check_judged_nothing_else(verdicts, request):
    """Each verdict belongs to one of the tests above: none failed unseen."""
    ids, orphans = request.module.EXERCISES, request.module.ORPHANS
    expected = ({Step(kind, e) for e in ids for kind in ("structure", "reference", "stub")}
                | {Step("mistake", e, m) for e, m in known_mistakes(ids)} | ({Step("orphans")} if orphans else set()))
    assert set(verdicts) == expected
