"""Hidden stays hidden: what a student can read of a hidden check, and inputs drawn per run.

Written the way a student harvesting hidden tests writes a submission: ex02's
`masked_mean_nll` (hidden checks only) prints its inputs, raises with them in the message,
raises an exception class named after them, and returns a tensor whose length spells one of
them. Every report a student reads (text, json, junit, gradescope, github, classroom, and
`grade batch`'s per-student reports) must show none of it; the instructor's files
(`--show-hidden`, `grade batch`'s results.json under "instructor") keep it all. With a
course secret the hidden inputs change with the secret and with the submission, and the
reference still agrees.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GRADE = str(Path(sys.executable).parent / "grade")
pytestmark = pytest.mark.skipif(not (ROOT / "solutions").is_dir(), reason="needs the instructor's kit")

HARVEST = '''

import torch as _torch

_right_masked = masked_mean_nll
_right_softmax = stable_softmax


def masked_mean_nll(logits, labels, ignore_index=-100):
    seen = "HARVEST" + "|".join(str(x) for x in labels.tolist()) + "|" + repr(logits.flatten()[:3].tolist())
    print(seen)
    n = logits.shape[0]
    if ignore_index != -100:
        return _torch.zeros(770000 + int(labels[1]))  # the input, spelled as a length
    if n == 8:
        raise ValueError(seen)
    if n == 6:
        raise type("LEAKCLASS" + str(int(labels[0])), (Exception,), {})(seen)
    return _right_masked(logits, labels, ignore_index) * 1.5


def stable_softmax(logits):
    print("HARVEST-SOFTMAX", logits.flatten()[:2].tolist())
    return _right_softmax(logits)
'''


def grade(*args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`grade ARGS` as a process of its own (a batch: its judges fork)."""
    return subprocess.run([GRADE, *args], capture_output=True, text=True, timeout=600, cwd=cwd or ROOT,
                          env={**os.environ, "GRADE_LANG": "en", **(env or {})})


def grade_here(capfd, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """`grade ARGS` (one exercise) run in this process, from the kit's folder; its stdout and
    stderr are what click wrote and what anything it started wrote to this process's own file
    descriptors (a worker's print that escaped would be there), as a process of its own reports
    them. The course secret it claims is this process's own again afterwards."""
    from grader.judge import draws
    from tests.in_process import grade as grade_in_process

    capfd.readouterr()
    saved = dict(draws._claimed)
    try:
        run = grade_in_process(*args, cwd=ROOT, env={"GRADE_LANG": "en", **(env or {})})
    finally:
        draws._claimed.clear()
        draws._claimed.update(saved)
    escaped = capfd.readouterr()
    return subprocess.CompletedProcess(run.args, run.returncode, run.stdout + escaped.out, run.stderr + escaped.err)


@pytest.fixture(scope="module")
def harvester(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("harvest") / "sub"
    shutil.copytree(ROOT / "solutions", folder)
    path = folder / "ex02_nll.py"
    path.write_text(path.read_text(encoding="utf-8") + HARVEST, encoding="utf-8")
    return folder


def _secrets_in(text: str) -> list[str]:
    import re

    return [s for s in ("HARVEST", "LEAKCLASS") if s in text] + re.findall(r"77000\d", text)


def test_hiding_words_and_shapes():
    import torch

    from grader.judge.hiding import hidden_view, safe_error_name
    from grader.model.calls import Observation

    want = Observation(ok=True, value={"value": torch.tensor(1.5), "grad": torch.zeros(8, 32)})
    view = hidden_view(want, Observation(ok=True, value={"value": torch.tensor(2.0), "grad": torch.zeros(8, 32)}))
    # the key that differs is named (no value), and the same shape twice is not said
    assert view == {"expected": None, "got": None, "zh": "这一部分不同：`value`（值）",
                    "en": "this part differs: `value` (its value)"}
    spelled = hidden_view(want, Observation(ok=True, value={"x511": torch.zeros(511), "grad": torch.zeros(32, 8)}))
    assert spelled["got"] == "{'grad': T(32, 8), 1 other key}"  # 8 and 32 are the expected dims: shown
    assert "511" not in json.dumps(spelled) and "?" not in spelled["got"]
    raised = hidden_view(want, Observation(ok=False, error={"type": "Leak_3_1_4", "message": "3 1 4"}))
    assert raised["got"] == "raises Exception" and "3 1 4" not in json.dumps(raised)
    # the worker ended (os._exit(n), a signal): the grader's words, never "your code raised WorkerDied",
    # and no exit status (a submission could spell a hidden input in one)
    for expected in (want, Observation(ok=False, error={"type": "ValueError", "message": ""})):
        ended = hidden_view(expected, Observation(ok=False, error={"type": "WorkerDied", "message": "exit status 42"}))
        assert ended["got"] == "—" and "ended unexpectedly" in ended["en"] and "42" not in json.dumps(ended), ended
    assert safe_error_name("ValueError") == "ValueError"


def test_student_view_keeps_public_checks_and_hides_the_rest():
    from grader.model.course import load_course
    from grader.model.results import CheckResult, ExerciseResult, Finding, Text
    from grader.report.student_view import for_student

    course = load_course()
    secret = Finding("mismatch", "masked(tensor([[0.25, 7.5]]), tensor([3]))", expected="1.2345", got="9.87",
                     zh="值不同：期望 1.2345", en="values differ: expected 1.2345", traceback="File x.py, line 3",
                     output="HARVEST 0.25 7.5", answer="1.2345",
                     hidden_view={"expected": "T()", "got": "T()", "zh": "形状对，值不对", "en": "the right shape, wrong values"},
                     diagnosis={"id": "no_max", "section": "5.5", "zh": "没减最大值", "en": "no max subtracted", "hint": 2})
    title = Text("t", "t")
    checks = [CheckResult("ex02", "test_hidden", title, 2, False, public=False, finding=secret,
                          attachments={"history": [1], "shapes": [2]}),
              CheckResult("ex02", "test_passed", title, 1, True, public=False, shown=[("nll([0.25], 0)", "1.5", "1.5")]),
              CheckResult("ex02", "test_public", title, 1, False, public=True, finding=Finding("mismatch", "nll([1.0])",
                                                                                             expected="2.44", got="3"))]
    (result,) = for_student([ExerciseResult(course.exercise("ex02"), checks)])
    hidden, passed, public = result.checks
    text = json.dumps(hidden.finding.as_dict(), ensure_ascii=False)
    for leak in ("0.25", "7.5", "1.2345", "9.87", "HARVEST", "line 3"):
        assert leak not in text, leak
    assert hidden.finding.label == "masked(…)" and hidden.finding.expected == "T()"
    assert hidden.finding.diagnosis["id"] == "no_max" and hidden.points == 0
    assert hidden.attachments == {"shapes": [2]} and passed.shown == [] and passed.passed
    assert public is checks[2]  # public checks are shown as they are
    assert checks[0].finding is secret and secret.output  # the instructor's copy is untouched


def test_no_report_a_student_reads_echoes_a_hidden_input(harvester, tmp_path, capfd):
    # every format a student reads, written by one run (--format/--out pairs), then an
    # instructor's run asking for everything
    formats = ("text", "json", "junit", "gradescope", "github", "classroom")
    pairs = [arg for fmt in formats for arg in ("--format", fmt, "--out", str(tmp_path / f"student.{fmt}"))]
    proc = grade_here(capfd, "ex02", "--submission", str(harvester), *pairs)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert _secrets_in(proc.stdout + proc.stderr) == [], (proc.stdout[-3000:], proc.stderr[-3000:])
    for fmt in formats:
        report = (tmp_path / f"student.{fmt}").read_text(encoding="utf-8")
        assert _secrets_in(report) == [], (fmt, report[-3000:])
        if fmt == "text":
            # the function that raised, by its name in the stub (not the probe's own name, "masked")
            assert "masked_mean_nll(…)" in report and "raises ValueError" in report
            assert "T(1 dim)" in report and "?" not in report  # the spelled length is left out
    shown = grade_here(capfd, "ex02", "--submission", str(harvester), "--show-hidden", "--format", "json",
                       "--out", str(tmp_path / "full.json"), "--format", "text", "--out", str(tmp_path / "full.txt"))
    assert shown.returncode == 1, shown.stderr[-2000:]
    full = json.loads((tmp_path / "full.json").read_text(encoding="utf-8"))
    assert _secrets_in(json.dumps(full["exercises"])) == []  # the student's part, even here
    instructor = json.dumps(full["instructor"])
    assert "HARVEST" in instructor and "LEAKCLASS" in instructor and "T(77000" in instructor
    assert "HARVEST" in (tmp_path / "full.txt").read_text(encoding="utf-8")  # an instructor asked for everything


SPY_EX01 = '''

import importlib as _importlib
import os as _os


def shift_pairs(tokens):
    try:  # the judge's copy, forked? (the official tier's workers have no judge at all)
        held = getattr(_importlib.import_module("grader.judge.draws"), "_claimed", {})
    except ImportError:
        held = "absent"
    raise ValueError("SECRET=" + repr(_os.environ.get("GRADE_COURSE_SECRET")) + " HELD=" + repr(held))
'''


@pytest.fixture(scope="module")
def submissions(harvester, tmp_path_factory) -> dict[str, Path]:
    """a: the reference; b: the same but for a comment in ex02 (another file, the same answers);
    spy: a's ex02, and an ex01 that tells what its worker holds of the secret; mallory: the
    harvester."""
    folder = tmp_path_factory.mktemp("submissions")
    a, b, spy = folder / "a", folder / "b", folder / "spy"
    for copy in (a, b, spy):
        shutil.copytree(ROOT / "solutions", copy)
    (b / "ex02_nll.py").write_text((b / "ex02_nll.py").read_text(encoding="utf-8") + "\n# resubmitted\n",
                                   encoding="utf-8")
    (spy / "ex01_windows.py").write_text((spy / "ex01_windows.py").read_text(encoding="utf-8") + SPY_EX01,
                                         encoding="utf-8")
    return {"a": a, "b": b, "spy": spy, "mallory": harvester}


def batch(run: Path, secret: str, folders: dict[str, Path], *options: str) -> tuple[subprocess.CompletedProcess, Path]:
    """One `grade batch` in `run` (a folder not named after the secret) of a cohort of `folders`
    under `secret` ("": none); its process and OUT folder. The secret is in nothing it prints
    or writes."""
    cohort, out = run / "cohort", run / "out"
    for name, folder in folders.items():
        shutil.copytree(folder, cohort / name)
    proc = grade("batch", str(cohort), "--out", str(out), "-j", "1", "--no-progress", *options,
                 env={"GRADE_COURSE_SECRET": secret})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    written = [f.read_text(encoding="utf-8", errors="replace") for f in out.rglob("*") if f.is_file()]
    assert not secret or all(secret not in text for text in [proc.stdout, proc.stderr, *written])
    return proc, out


def _students(out: Path) -> dict:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))["students"]


def _reference_agrees(students: dict, names) -> None:
    """ex02 at full marks for each of `names` (the reference's ex02, whatever was drawn)."""
    for name in names:
        exercises = {e["id"]: e for e in students[name]["exercises"]}
        assert exercises["ex02"]["score"] == exercises["ex02"]["max_score"] > 0, name


@pytest.fixture(scope="module")
def plain_batch(submissions, tmp_path_factory) -> Path:
    """The batch with no course secret, ex02 only, with per-student text and gradescope reports:
    a and b (test_hidden_inputs_are_drawn_per_secret_and_per_submission) and mallory
    (test_batch_keeps_both_views_apart); its OUT folder."""
    folders = {name: submissions[name] for name in ("a", "b", "mallory")}
    _, out = batch(tmp_path_factory.mktemp("plain"), "", folders, "--only", "ex02",
                   "--format", "text", "--format", "gradescope")
    return out


def test_batch_keeps_both_views_apart(plain_batch):
    student = _students(plain_batch)["mallory"]
    assert _secrets_in(json.dumps(student["exercises"])) == []
    assert "HARVEST" in json.dumps(student["instructor"])
    reports = list((plain_batch / "reports").iterdir())
    assert any(report.name.startswith("mallory") for report in reports), reports
    for report in reports:
        assert _secrets_in(report.read_text(encoding="utf-8")) == [], report.name


def _inputs(report: dict, check: str) -> list[str]:
    for exercise in report["instructor"]["exercises"]:
        for c in exercise["checks"]:
            if c["name"] == check:
                return c["calls"]
    raise KeyError(check)


def test_hidden_inputs_are_drawn_per_secret_and_per_submission(submissions, plain_batch, tmp_path, capfd):
    """The reference passes every time; the inputs differ with the secret and with the file,
    and are the written ones without a secret; the same file and secret draw the same inputs
    in `grade batch` and in `grade ex02`. The secret never reaches the worker.

    A batch grades several submissions under one secret: one batch per secret (the one with no
    secret is shared with test_batch_keeps_both_views_apart), and one `grade ex02` run."""
    a, b, spy = submissions["a"], submissions["b"], submissions["spy"]
    plain = _students(plain_batch)
    _reference_agrees(plain, ("a", "b"))
    _, alpha_out = batch(tmp_path / "second", "alpha-secret", {"a": a, "b": b, "a-again": a}, "--only", "ex02")
    alpha = _students(alpha_out)
    _reference_agrees(alpha, alpha)
    _, beta_out = batch(tmp_path / "third", "beta-secret", {"a": a, "spy": spy}, "--only", "ex01", "--only", "ex02")
    beta = _students(beta_out)
    _reference_agrees(beta, beta)

    check = "test_nll_random_and_large"  # list inputs: the labels show the values drawn
    plain_a, alpha_a, beta_a, alpha_b = (_inputs(plain["a"], check), _inputs(alpha["a"], check),
                                         _inputs(beta["a"], check), _inputs(alpha["b"], check))
    assert plain_a == _inputs(plain["b"], check)  # no secret: the inputs as written
    assert len({tuple(x) for x in (plain_a, alpha_a, beta_a, alpha_b)}) == 4, (plain_a, alpha_a, beta_a, alpha_b)
    assert alpha_a == _inputs(alpha["a-again"], check)  # the same file, the same secret: the same draw
    assert beta_a == _inputs(beta["spy"], check)  # the same ex02 file
    proc = grade_here(capfd, "ex02", "--submission", str(a), "--format", "json", "--show-hidden",
                      env={"GRADE_COURSE_SECRET": "alpha-secret"})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    alone = json.loads(proc.stdout)
    assert alone["score"] == alone["max_score"] > 0 and _inputs(alone, check) == alpha_a  # and in another run
    spied = json.dumps(beta["spy"]["instructor"])
    assert re.search(r"SECRET=None HELD=(\{\}|'absent')", spied), spied[-2000:]


def test_the_secret_file_is_read_and_never_a_worker_input(tmp_path):
    from grader.judge import draws

    class FakeCourse:
        root = tmp_path

    (tmp_path / draws.SECRET_FILE).write_text("file-secret\n")
    saved = dict(draws._claimed)
    try:
        draws._claimed.clear()
        os.environ.pop(draws.SECRET_ENV, None)
        draws.claim_secret(FakeCourse())
        assert draws.course_secret(FakeCourse()) == b"file-secret"
        os.environ[draws.SECRET_ENV] = "env-secret"
        draws.claim_secret(FakeCourse())
        assert draws.course_secret() == b"env-secret" and draws.SECRET_ENV not in os.environ
    finally:
        os.environ.pop(draws.SECRET_ENV, None)
        draws._claimed.clear()
        draws._claimed.update(saved)
    assert draws.Draws().seed(12) == 12 and draws.Draws(b"k", "ex02:t").seed(12) != 12
    from grader.run.startup import secret_paths

    FakeCourse.solutions_dir, FakeCourse.exercises = tmp_path / "solutions", ()
    assert str(tmp_path / draws.SECRET_FILE) in secret_paths(FakeCourse())  # what no worker may see
