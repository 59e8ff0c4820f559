"""The references' answer store is keyed by one fingerprint of the grader, digested once.

`answers_fingerprint` reads every source file of the grader package (about 16 ms); the
references of a run share it across exercises, and `grade batch` digests it once for all its
judges and derives the gradebook's own fingerprint from it.
"""

from __future__ import annotations

import grader.judge.references as references_module
from grader.cohort.batch import course_fingerprint
from grader.judge.references import LiveReferences
from grader.model.course import load_course
from grader.model.fingerprint import answers_fingerprint

COURSE = load_course()


def _counting(monkeypatch) -> list[int]:
    calls = []
    real = references_module.answers_fingerprint

    def counted(course, extra=""):
        calls.append(1)
        return real(course, extra)

    monkeypatch.setattr(references_module, "answers_fingerprint", counted)
    return calls


def test_one_digest_for_every_exercise_of_a_run(monkeypatch, tmp_path):
    calls = _counting(monkeypatch)
    references = LiveReferences(COURSE, cache_dir=tmp_path)
    stores = {e: references(e)._store for e in ("ex01", "ex02", "ex03")}
    assert len(calls) == 1
    assert {s.fingerprint for s in stores.values()} == {answers_fingerprint(COURSE)}


def test_a_fingerprint_given_is_used_as_it_is(monkeypatch, tmp_path):
    calls = _counting(monkeypatch)
    references = LiveReferences(COURSE, cache_dir=tmp_path, fingerprint="f" * 64)
    assert references("ex01")._store.fingerprint == "f" * 64 and not calls


def test_the_gradebooks_fingerprint_follows_the_answers_the_exercises_and_the_language():
    base = answers_fingerprint(COURSE)
    fp = course_fingerprint(COURSE, ["ex01", "ex02"], "zh", base)
    assert fp == course_fingerprint(COURSE, ["ex01", "ex02"], "zh")  # digested when not given
    others = (course_fingerprint(COURSE, ["ex01"], "zh", base), course_fingerprint(COURSE, ["ex01", "ex02"], "en", base),
              course_fingerprint(COURSE, ["ex01", "ex02"], "zh", "0" * 64))
    assert len({fp, *others}) == 4
