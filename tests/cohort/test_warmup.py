"""评分前先算好慢的参考答案 / the slow reference answers, computed once before the first student.

`grade batch` runs each graded exercise's checks once with the reference as the student, then
every known mistake's answer to each slow call in child processes, into OUT/cache's store;
the judges read them there (or inherit them) instead of computing them while a student's
time runs. Here every answer counts as slow (`slow_seconds=0`), so the small course
(ex01, ex02) exercises the whole path in a second.
"""

from __future__ import annotations

import pytest

from tests.cohorts import batch_here, cohort
from tests.kit import EX01, KIT


def _encoded(obs) -> bytes:
    import grader.sandbox.wire as wire

    return wire.encode({"ok": obs.ok, "value": obs.value, "error": obs.error, "output": obs.output})


def test_slow_answers_and_each_mistakes_answer_are_on_disk_before_any_student(course, tmp_path, monkeypatch):
    from grader.cohort.warmup import warm_references
    from grader.judge.references import LiveReferences
    from grader.judge.subjects import InProcessSubject
    from grader.model.course import load_course

    loaded = load_course(course)
    ahead = LiveReferences(loaded, cache_dir=tmp_path, fingerprint="fp", slow_seconds=0.0)
    assert warm_references(loaded, ["ex01"], ahead, None, jobs=2) == ["ex01"]
    reference = ahead("ex01")
    assert reference.slow_calls and reference.mistakes  # the checks ran against the reference
    # (the slow calls' answers, each mistake's answer to each of them, one marker)
    stored = [p for p in (tmp_path / "answers").iterdir() if not p.name.startswith(".")]
    assert len(stored) >= len(reference.slow_calls) * (1 + len(reference.mistakes)) + 1

    def computed_again(self, a_call):
        raise AssertionError(f"computed again: {a_call.label}")

    monkeypatch.setattr(InProcessSubject, "observe", computed_again)  # a judge now only reads them
    judge = LiveReferences(loaded, cache_dir=tmp_path, fingerprint="fp", slow_seconds=0.0)
    for a_call in reference.slow_calls:
        assert _encoded(judge("ex01").observe(a_call)) == _encoded(reference.observe(a_call))
        for mistake in reference.mistakes:  # computed in the child processes, not in this one
            assert _encoded(judge("ex01").observe_mistake(mistake, a_call)) \
                == _encoded(reference.observe_mistake(mistake, a_call))
    assert warm_references(loaded, ["ex01"], judge, None, jobs=2) == []  # done once per store
    other = LiveReferences(loaded, cache_dir=tmp_path, fingerprint="another kit", slow_seconds=0.0)
    assert other.store().is_warm("ex01") is False  # a changed kit computes its own


def test_a_reference_pass_that_fails_leaves_the_judges_to_compute(course, tmp_path, capsys):
    from grader.cohort.warmup import warm_references
    from grader.judge.references import LiveReferences
    from grader.model.course import load_course

    loaded = load_course(course)

    class Failing(LiveReferences):
        def __call__(self, exercise_id):
            raise RuntimeError("solutions/ex01 cannot be loaded")

    failing = Failing(loaded, cache_dir=tmp_path, fingerprint="fp")
    assert warm_references(loaded, ["ex01"], failing, None, jobs=1) == []
    assert "computing the reference answers ahead failed" in capsys.readouterr().err
    assert failing.store().is_warm("ex01") is False


def test_grade_batch_warms_once_per_out_then_says_its_bound(course, tmp_path, in_process_runner):
    from grader.cohort.batch import time_bound
    from grader.model.messages import default_lang
    from grader.judge.references import AnswerStore
    from grader.model.course import load_course
    from grader.model.fingerprint import answers_fingerprint

    folder = cohort(tmp_path / "cohort", 3)
    out = tmp_path / "out"
    run = batch_here(course, folder, out, "-j", "2")
    assert run.returncode == 0, run.stderr
    loaded = load_course(course)
    store = AnswerStore(out / "cache" / "answers", answers_fingerprint(loaded))
    assert store.is_warm("ex01") and store.is_warm("ex02")
    assert time_bound(loaded, ["ex01", "ex02"], 3, 2, default_lang()) in run.stderr
    assert "the grader's own time (its comparisons and the gradebook" in run.stderr
    marker = next(p for p in (out / "cache" / "answers").iterdir() if p.name == store._path("warm:ex01").name)
    made = marker.stat().st_mtime_ns
    (folder / "s03").mkdir()  # one more student, in English (everyone regraded: the language changed)
    (folder / "s03" / EX01).write_text((KIT / "solutions" / EX01).read_text(encoding="utf-8"), encoding="utf-8")
    again = batch_here(course, folder, out, "--lang", "en")  # one judge: the bound counts the run's own
    assert again.returncode == 0, again.stderr
    assert marker.stat().st_mtime_ns == made  # the same answers: not computed again
    assert time_bound(loaded, ["ex01", "ex02"], 4, 1, "en") in again.stderr
    assert again.stdout.startswith("4 students (") and "名" not in again.stdout + again.stderr


def test_an_exercise_no_student_handed_in_is_not_warmed(course, tmp_path, in_process_runner):
    """Cost follows the work: a cohort of ex01 files graded on the whole course computes none
    of ex02's reference answers (ex12's trainings, in the real course)."""
    from grader.judge.references import AnswerStore
    from grader.model.course import load_course
    from grader.model.fingerprint import answers_fingerprint

    folder = tmp_path / "cohort"
    for name in ("a", "b"):
        (folder / name).mkdir(parents=True)
        (folder / name / EX01).write_text((KIT / "solutions" / EX01).read_text(encoding="utf-8"), encoding="utf-8")
    run = batch_here(course, folder, tmp_path / "out")  # one judge: the warming is the batch's own, before any judge
    assert run.returncode == 0, run.stderr
    store = AnswerStore(tmp_path / "out" / "cache" / "answers", answers_fingerprint(load_course(course)))
    assert store.is_warm("ex01") and not store.is_warm("ex02")


def test_ctrl_c_during_the_reference_pass_stops_the_batch(course, tmp_path):
    """pytest takes Ctrl-C as the end of its session and returns; the batch stops instead of
    going on to the mistakes and the students (`grade batch` then says Aborted!)."""
    import os
    import signal

    from grader.cohort.warmup import warm_references
    from grader.judge.references import LiveReferences
    from grader.model.course import load_course

    class Interrupted(LiveReferences):
        def __call__(self, exercise_id):
            reference = super().__call__(exercise_id)
            answer = reference.observe

            def observe(a_call, timeout=None):
                os.kill(os.getpid(), signal.SIGINT)  # the instructor presses Ctrl-C here
                return answer(a_call, timeout)

            reference.observe = observe
            return reference

    loaded = load_course(course)
    seen = []

    def grades_own(signum, frame):  # as grader.commands.main installs it: remembered, for exit 130
        seen.append(signum)
        signal.default_int_handler(signum, frame)

    before = signal.signal(signal.SIGINT, grades_own)
    try:
        references = Interrupted(loaded, cache_dir=tmp_path, fingerprint="fp")
        with pytest.raises(KeyboardInterrupt):
            warm_references(loaded, ["ex01"], references, None, jobs=1)
        assert signal.getsignal(signal.SIGINT) is grades_own
    finally:
        signal.signal(signal.SIGINT, before)
    assert seen == [signal.SIGINT]  # once exit 1 ("a check failed") instead of 130
    assert not references.store().is_warm("ex01")
