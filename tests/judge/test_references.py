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


def test_the_answer_store_is_its_owners_alone_from_the_start(tmp_path):
    """Made mid-run (the first slow answer), 0755 as umask 022 left it: as root without mounts the
    run's start had closed only what existed, and every later worker's uid could read it."""
    import os
    import stat

    from grader.judge.references import AnswerStore
    from grader.model.calls import Observation

    store = AnswerStore(tmp_path / "cache" / "answers", "fp", min_seconds=0.0)
    old = os.umask(0o022)
    try:
        store.put("k", Observation(ok=True, value=1))
        store.mark_warm("ex12")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "cache" / "answers").stat().st_mode) == 0o700
    assert store.get("k").value == 1 and store.is_warm("ex12")


SLOW_TRAINING = '''
import time


def train_bigram(train_data, val_data, vocab_size, **settings):
    time.sleep(1.2)  # slow enough to be kept on disk
    return BigramLanguageModel(vocab_size), [{"step": 0, "train": 4.0, "val": 4.0}]
'''


def test_an_answer_read_from_a_slow_run_is_kept_with_it(tmp_path, monkeypatch):
    """ex12's `history` trains the lesson's model; `full_training` reads the table of that same
    run, kept in the process. Both are kept on disk: the next process trains nothing."""
    from grader.judge import probe
    from grader.judge.references import AnswerStore, Reference, load_module_from
    from grader.judge.subjects import InProcessSubject
    from tests.corpus import FILE

    (tmp_path / "slow_ex12.py").write_text(SLOW_TRAINING, encoding="utf-8")
    calls = [probe("ex12.history", str(FILE)), probe("ex12.full_training", str(FILE))]

    def answers(module_name):
        module = load_module_from(tmp_path, "slow_ex12", module_name)
        reference = Reference("ex12", module, mistakes=[], store=AnswerStore(tmp_path / "answers", "fp"))
        return [reference.observe(a_call).value for a_call in calls], reference.slow_calls

    (history, table), slow = answers("slow_ex12_first")
    assert history[0]["step"] == 0 and table["weight"].shape == (65, 65) and slow == calls[:1]
    computed = []
    real = InProcessSubject.observe
    monkeypatch.setattr(InProcessSubject, "observe", lambda self, a_call: computed.append(a_call) or real(self, a_call))
    (again, table_again), _ = answers("slow_ex12_second")
    assert computed == [] and again == history and bool((table_again["weight"] == table["weight"]).all())


def test_an_answer_worth_keeping_but_not_slow_is_read_back_as_not_slow(tmp_path, monkeypatch):
    """An answer past `keep_seconds` but under `min_seconds` (ex06's on the corpus) is kept on
    disk, and the next process reads it instead of computing it; it is not a slow one there
    either, so a batch's warm-up computes no known mistake's answer to it."""
    from grader.judge import probe
    from grader.judge.references import AnswerStore, Reference, load_module_from
    from grader.judge.subjects import InProcessSubject
    from tests.corpus import FILE

    (tmp_path / "quick_ex12.py").write_text(SLOW_TRAINING.replace("time.sleep(1.2)", "time.sleep(0.3)"),
                                            encoding="utf-8")
    a_call = probe("ex12.history", str(FILE))

    def answer(module_name):
        module = load_module_from(tmp_path, "quick_ex12", module_name)
        # slow only past 30 s: however busy the machine, the 0.3 s answer is kept and not slow
        store = AnswerStore(tmp_path / "answers", "fp", min_seconds=30.0, keep_seconds=0.1)
        reference = Reference("ex12", module, mistakes=[], store=store)
        return reference.observe(a_call).value, reference.slow_calls, store

    history, slow, store = answer("quick_ex12_first")
    assert slow == [] and store.read(a_call.key()) == (store.get(a_call.key()), False)
    computed = []
    real = InProcessSubject.observe
    monkeypatch.setattr(InProcessSubject, "observe", lambda self, a_call: computed.append(a_call) or real(self, a_call))
    again, slow_again, _ = answer("quick_ex12_second")
    assert computed == [] and again == history and slow_again == []


def test_the_fingerprint_reads_torchs_version_without_importing_it():
    import subprocess
    import sys

    code = ("import sys; from grader.model.course import load_course; "
            "from grader.model.fingerprint import answers_fingerprint; answers_fingerprint(load_course()); "
            "print('torch' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and run.stdout.strip() == "False", run.stderr


COUNTED_TRAINING = '''
import time

TRAININGS = []


def train_bigram(train_data, val_data, vocab_size, **settings):
    TRAININGS.append(1)
    time.sleep(1.2)  # slow enough to be kept on disk
    return BigramLanguageModel(vocab_size), [{"step": 0, "train": 4.0, "val": 4.0}]
'''


def test_a_slow_answer_another_judge_is_computing_is_waited_for_not_computed_again(tmp_path):
    """Two judges need ex12's training at once (two students' `grade ex12`, two judges of a
    batch): one trains, the other waits for its lock and reads the answer it kept. Each judge
    here is a thread with its own reference and its own lock on the store, as two processes
    would have (the lock is the file's, not the process's)."""
    import threading

    from grader.judge import probe
    from grader.judge.references import AnswerStore, Reference, load_module_from
    from tests.corpus import FILE

    (tmp_path / "counted_ex12.py").write_text(COUNTED_TRAINING, encoding="utf-8")
    a_call = probe("ex12.history", str(FILE))
    modules = [load_module_from(tmp_path, "counted_ex12", f"counted_ex12_{n}") for n in range(2)]
    answers: dict[int, object] = {}

    def judge(n: int) -> None:
        reference = Reference("ex12", modules[n], mistakes=[], store=AnswerStore(tmp_path / "answers", "fp"))
        answers[n] = reference.observe(a_call).value

    judges = [threading.Thread(target=judge, args=(n,)) for n in range(2)]
    for thread in judges:
        thread.start()
    for thread in judges:
        thread.join(timeout=60)
    assert len(modules[0].TRAININGS) + len(modules[1].TRAININGS) == 1
    assert answers[0] == answers[1] and answers[0][0]["step"] == 0


def test_without_a_lock_the_answer_is_computed_all_the_same(tmp_path):
    """A cache folder that cannot be written: no lock, no file kept, the answer computed."""
    from grader.judge import probe
    from grader.judge.references import AnswerStore, Reference, load_module_from
    from tests.corpus import FILE

    (tmp_path / "counted_ex12.py").write_text(COUNTED_TRAINING, encoding="utf-8")
    module = load_module_from(tmp_path, "counted_ex12", "counted_ex12_unlocked")
    (tmp_path / "answers").write_text("a file where the folder would be", encoding="utf-8")
    reference = Reference("ex12", module, mistakes=[], store=AnswerStore(tmp_path / "answers", "fp"))
    assert reference.observe(probe("ex12.history", str(FILE))).value[0]["step"] == 0
    assert module.TRAININGS == [1]


def test_a_lock_held_too_long_is_waited_for_once(tmp_path, monkeypatch):
    """A process stopped while it held the lock (Ctrl-Z): this one waits `LOCK_WAIT` once, then
    computes without the lock, and asks for no lock again."""
    import pytest
    from filelock import UnixFileLock

    import grader.judge.references as references
    from grader.judge import probe
    from grader.judge.references import AnswerStore, Reference, load_module_from
    from tests.corpus import FILE

    monkeypatch.setattr(references, "LOCK_WAIT", 0.2)
    (tmp_path / "counted_ex12.py").write_text(COUNTED_TRAINING, encoding="utf-8")
    module = load_module_from(tmp_path, "counted_ex12", "counted_ex12_stopped")
    store = AnswerStore(tmp_path / "answers", "fp")
    (tmp_path / "answers").mkdir()
    held = UnixFileLock(str(store._path("lock:ex12")) + ".lock")
    held.acquire()
    try:
        reference = Reference("ex12", module, mistakes=[], store=store)
        assert reference.observe(probe("ex12.history", str(FILE))).value[0]["step"] == 0
        monkeypatch.setattr(references, "_os_file_lock", lambda: pytest.fail("asked for the lock again"))
        other = Reference("ex12", load_module_from(tmp_path, "counted_ex12", "counted_ex12_next"), mistakes=[],
                          store=store)
        assert other.observe(probe("ex12.history", str(FILE), 1)).ok
    finally:
        held.release()
    assert module.TRAININGS == [1]


def test_a_computation_that_needs_another_answer_of_its_exercise_does_not_wait_for_itself(tmp_path, monkeypatch):
    """The lock is held per store and counted: an answer computed while this store holds its
    exercise's lock (a reference that reads another of its answers) takes it again at once,
    and the store goes on using the lock."""
    import grader.judge.references as references
    from grader.judge.references import AnswerStore

    monkeypatch.setattr(references, "LOCK_WAIT", 0.2)
    store = AnswerStore(tmp_path / "answers", "fp")
    with store.computing("ex12"):
        with store.computing("ex12"):
            assert not store._unlocked  # taken again, not waited for until the store gave up locking
    assert not store._unlocked
