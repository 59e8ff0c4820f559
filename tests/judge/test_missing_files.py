"""An exercise whose file is not in the submission folder: every check fails as missing, and
grading it starts no worker and computes no reference answer, so a partial upload (Gradescope,
a cohort where some hand in part of the course) costs only what was handed in."""

from __future__ import annotations

import shutil

from grader.judge.references import LiveReferences
from grader.model.course import load_course
from grader.run.session import GradingSession, run_checks
from grader.run.startup import corpus_provider, load_judge, start_zygote

COURSE = load_course()


class CountingZygote:
    """The zygote, counting the workers it is asked for."""

    def __init__(self, zygote):
        self.zygote, self.spawned = zygote, 0

    def spawn(self):
        self.spawned += 1
        return self.zygote.spawn()

    def __getattr__(self, name):
        return getattr(self.zygote, name)


def test_a_missing_file_fails_every_check_with_no_worker_and_no_reference(tmp_path):
    shutil.copy(COURSE.solutions_dir / COURSE.exercise("ex01").file, tmp_path)
    live, asked = LiveReferences(COURSE), []

    def references(exercise_id):
        asked.append(exercise_id)
        return live(exercise_id)

    zygote = CountingZygote(start_zygote(COURSE))
    load_judge()
    try:
        (ex12,) = run_checks(GradingSession(COURSE, ["ex12"], submission=tmp_path, zygote=zygote,
                                            references=references, corpus=corpus_provider(COURSE)))
        assert zygote.spawned == 0 and asked == []  # no worker, no reference (ex12's trains the lesson's model)
        (ex01,) = run_checks(GradingSession(COURSE, ["ex01"], submission=tmp_path, zygote=zygote,
                                            references=references, corpus=corpus_provider(COURSE)))
        assert zygote.spawned >= 1 and asked  # the handed-in exercise is graded as ever
    finally:
        zygote.close()
    assert ex01.score == ex01.max_score == COURSE.exercise("ex01").points
    graded = [c for c in ex12.checks if not c.manual]
    assert graded and len(graded) == len({c.name for c in graded})
    for check in graded:
        assert not check.passed and check.finding.kind == "missing", check
        assert check.finding.en == "ex12_train_bigram.py is not in the submission folder", check.finding.en
        assert check.finding.zh == "ex12_train_bigram.py 不在提交目录中", check.finding.zh
    assert ex12.score == 0 and ex12.max_score == COURSE.exercise("ex12").points


def test_a_link_or_an_empty_file_is_still_the_workers_to_judge(tmp_path):
    """Something at the file's place, even a dangling link, is read by the worker as before."""
    (tmp_path / "ex01_windows.py").symlink_to(tmp_path / "elsewhere.py")
    (tmp_path / "ex07_split.py").write_text("", encoding="utf-8")
    session = GradingSession(COURSE, ["ex01", "ex07", "ex12"], submission=tmp_path)
    assert session.missing_file("ex01") is None and session.missing_file("ex07") is None
    assert session.missing_file("ex12") == "ex12_train_bigram.py"
    assert GradingSession(COURSE, ["ex12"]).missing_file("ex12") is None  # no folder: the worker's cwd
