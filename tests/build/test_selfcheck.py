"""The kit proves itself: every reference passes, every stub fails as not implemented,
every known mistake fails at least one check and is named there (what `grade check` runs)."""

from __future__ import annotations

import pytest

from grader.model.course import load_course
from grader.judge.mistakes import mistakes_for
from grader.judge.references import LiveReferences
from grader.run.startup import start_zygote
from grader.build.selfcheck import (check_mistake, check_reference, check_structure, check_stub, grade_folder,
                              grade_variant)

COURSE = load_course()
IDS = [e.id for e in COURSE.exercises]


@pytest.fixture(scope="module")
def zygote():
    # As `grade check` starts it: the fence grants the course's data folders, wherever they are
    # (a corpus under /tmp is otherwise behind the worker's private /tmp).
    z = start_zygote(COURSE)
    yield z
    z.close()


@pytest.fixture(scope="module")
def references():
    return LiveReferences(COURSE)


@pytest.mark.parametrize("exercise_id", IDS)
def test_files_agree_with_course_toml(exercise_id):
    for verdict in check_structure(COURSE, COURSE.exercise(exercise_id)):
        assert verdict.ok, f"{verdict.what}: {verdict.detail}"


@pytest.mark.parametrize("exercise_id", IDS)
def test_reference_passes_every_check(exercise_id, zygote, references):
    (result,) = grade_folder(COURSE, [exercise_id], COURSE.solutions_dir, references, zygote)
    verdict = check_reference(result)
    assert verdict.ok, verdict.detail


@pytest.mark.parametrize("exercise_id", IDS)
def test_stub_fails_every_check_as_not_implemented(exercise_id, zygote, references):
    (result,) = grade_folder(COURSE, [exercise_id], COURSE.exercises_dir, references, zygote)
    verdict = check_stub(result)
    assert verdict.ok, verdict.detail


MISTAKES = [(ex_id, m) for ex_id in IDS for m in mistakes_for(ex_id)]


@pytest.mark.parametrize(("exercise_id", "mistake"), MISTAKES, ids=[f"{e}-{m.id}" for e, m in MISTAKES])
def test_each_known_mistake_fails_and_is_named(exercise_id, mistake, references):
    reference = references(exercise_id)
    result = grade_variant(COURSE, exercise_id, mistake.variant(reference.module), references)
    verdict = check_mistake(result, mistake)
    assert verdict.ok, verdict.detail
