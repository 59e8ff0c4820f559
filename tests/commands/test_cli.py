"""The `grade` command as a student, an instructor and CI use it: in this process through click's
runner where the command's contract is the point (exit codes, messages, reports), as a real
process where the process is (Ctrl-C, a kit imported from another folder)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from tests.in_process import grade
from tests.kit import make_course


def test_list_shows_every_exercise(root):
    run = grade("list")
    assert run.returncode == 0
    for n in range(1, 6):
        assert f"ex0{n}" in run.stdout


def test_reference_passes_ch05(root):
    run = grade("--lang", "en", "ex01", "--reference")
    assert run.returncode == 0, run.stdout + run.stderr
    assert "all checks passed" in run.stdout


def test_stub_fails_cleanly_in_one_line(root, tmp_path):
    shutil.copytree(root / "exercises", tmp_path / "exercises")  # a student's folder (gets a state file)
    run = grade("ex03", cwd=tmp_path)
    assert run.returncode == 1
    assert "未完成 / not implemented yet" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr
    assert len([l for l in run.stdout.splitlines() if "not implemented" in l]) == 1


def test_a_deleted_exercise_file_says_it_is_gone_not_unfinished(root, tmp_path):
    """Deleted or renamed, hidden checks included: one line naming the file and how to get it back."""
    shutil.copytree(root / "exercises", tmp_path / "exercises")
    (tmp_path / "exercises" / "ex03_param_budget.py").unlink()
    run = grade("--lang", "en", "ex03", cwd=tmp_path)
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert lines[1].strip().startswith("exercises/ex03_param_budget.py is not there (deleted or renamed?)"), lines
    assert "grade init" in lines[1] and "not implemented" not in run.stdout and len(lines) == 3
    report = json.loads(grade("ex03", "--format", "json", cwd=tmp_path).stdout)
    told = {c["message"].rpartition("; ")[2] for c in report["exercises"][0]["checks"]}
    assert told == {"ex03_param_budget.py 不在提交目录中"}, told  # hidden checks too: never "your code raised"


def test_a_missing_file_is_named_in_the_submission_folder_given(root, tmp_path, in_process_runner):
    """Under `--submission DIR` the line names DIR's file, not an `exercises/` the student never had."""
    (tmp_path / "handed-in").mkdir()
    shutil.copy(root / "solutions" / "ex01_windows.py", tmp_path / "handed-in")
    run = grade("--lang", "en", "ex03", "--submission", "handed-in", cwd=tmp_path)
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr
    assert run.stdout.splitlines()[1].strip().startswith("handed-in/ex03_param_budget.py is not there"), run.stdout


def test_usage_errors_exit_2(root, tmp_path):
    unknown = grade("ex99", cwd=tmp_path)
    assert unknown.returncode == 2 and "ex99" in unknown.stderr
    missing = grade("ex01", "--submission", str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "nowhere" in missing.stderr
    hint = grade("hint", "ex01", "--submission", str(tmp_path / "nowhere"))
    assert hint.returncode == 2 and "nowhere" in hint.stderr
    for run in (unknown, missing, hint):
        assert "Traceback" not in run.stdout + run.stderr


def test_a_report_file_that_cannot_be_written_is_refused_before_grading(root, tmp_path):
    out = tmp_path / "out"  # a batch's OUT: its cohort file and lock
    out.mkdir()
    (out / "cohort.json").write_text('{"cohort": "/srv/cohort"}\n')
    (out / ".grade-batch.lock").write_text("")
    (out / "grades.csv").write_text("student,total\n")
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "ex01_windows.py").write_text("X = 1\n")
    os.mkfifo(tmp_path / "pipe")
    os.symlink(sub / "ex01_windows.py", tmp_path / "to-code.json")  # what is written is where a link leads
    os.symlink(tmp_path / "pipe", tmp_path / "to-pipe.json")
    for where, said in ((tmp_path / "nowhere" / "report.txt", "does not exist"), (tmp_path, "is a directory"),
                        (out / "grades.csv", "OUT"), (sub / "ex01_windows.py", "code file"), (tmp_path / "pipe", "FIFO"),
                        (tmp_path / "to-code.json", "code file"), (tmp_path / "to-pipe.json", "FIFO")):
        run = grade("--lang", "en", "ex01", "--reference", "--out", str(where))
        assert run.returncode == 2 and said in run.stderr, run.stderr
        assert "Traceback" not in run.stdout + run.stderr
    assert (out / "grades.csv").read_text() == "student,total\n" and (sub / "ex01_windows.py").read_text() == "X = 1\n"
    written = grade("ex01", "--reference", "--format", "json", "--out", str(tmp_path / "report.json"))
    assert written.returncode == 0 and json.loads((tmp_path / "report.json").read_text())["score"] == 10


@pytest.mark.parametrize("command", ["release", "nbgrader", "init", "gradescope"])
def test_an_output_folder_that_cannot_be_made_is_a_usage_error(tmp_path, command):
    afile = tmp_path / "afile"
    afile.write_text("x")
    batch_out = tmp_path / "out"  # a batch's OUT: its cohort file and lock
    batch_out.mkdir()
    (batch_out / "cohort.json").write_text('{"cohort": "/srv/cohort"}\n')
    (batch_out / ".grade-batch.lock").write_text("")
    for out in (afile / "below", afile / "below.zip", batch_out / "made", batch_out / "made.zip") + (
            () if command == "gradescope" else (afile,)):
        run = grade(command, str(out))
        assert run.returncode == 2 and "Traceback" not in run.stdout + run.stderr, (out, run.stderr)
    assert afile.read_text() == "x" and sorted(p.name for p in batch_out.iterdir()) == [".grade-batch.lock",
                                                                                       "cohort.json"]


def test_json_parses_and_scores_add_up(root, tmp_path, in_process_runner):
    sub = tmp_path / "sub"
    sub.mkdir()
    shutil.copy(root / "solutions" / "ex01_windows.py", sub)
    out = tmp_path / "result.json"
    run = grade("all", "--submission", str(sub), "--format", "json", "--out", str(out), "--lang", "en")
    assert run.returncode == 1  # only ex01 is there
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["score"] == sum(e["score"] for e in data["exercises"])
    assert data["max_score"] == sum(e["max_score"] for e in data["exercises"])
    for ex in data["exercises"]:
        assert ex["score"] == sum(c["score"] for c in ex["checks"])
        assert {"id", "title", "score", "max_score", "checks"} <= set(ex)
        for c in ex["checks"]:
            assert {"name", "passed", "score", "max_score", "message"} <= set(c)
    by_id = {e["id"]: e for e in data["exercises"]}
    assert by_id["ex01"]["score"] == by_id["ex01"]["max_score"] > 0
    assert by_id["ex02"]["score"] == 0 and "not in the submission folder" in by_id["ex02"]["checks"][0]["message"] or True


def test_a_wrong_answer_shows_expected_against_got_and_the_mistake(root, tmp_path, in_process_runner):
    sub = tmp_path / "sub"
    sub.mkdir()
    source = (root / "solutions" / "ex01_windows.py").read_text(encoding="utf-8")
    (sub / "ex01_windows.py").write_text(source + '''

def shift_pairs(tokens):
    if len(tokens) < 2:
        raise ValueError("need two tokens")
    return tokens[:-1], tokens[:-1]
''', encoding="utf-8")
    run = grade("--lang", "en", "ex01", "--submission", str(sub))
    assert run.returncode == 1
    assert "✗" in run.stdout and "expected" in run.stdout and "got" in run.stdout
    assert "diagnosis" in run.stdout
    assert "Traceback" not in run.stdout + run.stderr


@pytest.mark.parametrize("body", ["raise RuntimeError('boom')", "import sys; sys.exit(3)", "while True: pass"])
def test_a_student_file_that_misbehaves_at_import_is_reported(tmp_path, body):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "ex01_windows.py").write_text(body + "\n", encoding="utf-8")
    course = make_course(tmp_path, timeout=1, exercises=("ex01",))  # the endless import: stopped at 1 s
    run = grade("--course", str(course), "--lang", "en", "ex01", "--submission", str(sub))
    assert run.returncode == 1
    assert "Traceback (most recent call last)" not in run.stdout + run.stderr


@pytest.mark.parametrize("where", ["import", "call"])
def test_a_keyboard_interrupt_the_code_raises_is_its_own_error(root, tmp_path, where):
    """Not "the process exited (status 0)" nor an internal name: the worker ignores SIGINT, so a
    KeyboardInterrupt there is the code's, reported as any exception is."""
    sub = tmp_path / "sub"
    sub.mkdir()
    source = (root / "solutions" / "ex01_windows.py").read_text(encoding="utf-8")
    if where == "import":
        source += "\nraise KeyboardInterrupt('stop')\n"
    else:
        source = source.replace("def shift_pairs(tokens):", "def shift_pairs(tokens):\n    raise KeyboardInterrupt('stop')", 1)
    (sub / "ex01_windows.py").write_text(source, encoding="utf-8")
    run = grade("--lang", "en", "ex01", "--submission", str(sub))
    assert run.returncode == 1 and "KeyboardInterrupt: stop" in run.stdout, run.stdout
    assert "WorkerDied" not in run.stdout and "exit status" not in run.stdout


def test_ctrl_c_exits_130_not_1(grade_exe, tmp_path):
    """Ctrl-C while a check runs: 130, as a shell reports it (1 means a check failed), no traceback."""
    import secrets
    import signal
    import time

    from tests.processes import named

    token = "cc" + secrets.token_hex(5)  # the worker names itself so: the Ctrl-C comes while it runs the file
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "ex01_windows.py").write_text(f"import ctypes, time\nctypes.CDLL(None).prctl(15, {token.encode()!r}, 0, 0, 0)"
                                         "\ntime.sleep(60)\n", encoding="utf-8")

    def own_session():  # as a terminal's foreground job: its own group, Ctrl-C not ignored
        os.setsid()
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    for more in ([], ["--format", "gradescope", "--out", str(tmp_path / "results.json")]):
        proc = subprocess.Popen([grade_exe, "ex01", "--submission", str(sub), *more], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, preexec_fn=own_session)
        deadline = time.monotonic() + 120
        while not named(token) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # started, the worker in the file's import
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 130 and "Traceback" not in out + err, (proc.returncode, err[-2000:])
        # the checks done so far are no result: none shown (a 0/0 "all passed"), none written
        assert "ex01" not in out and "/" not in out, out
    assert not (tmp_path / "results.json").exists()


@pytest.fixture(scope="module")
def kit_without_data(root, tmp_path_factory):
    """A copy of the kit without the corpus a checkout carries in datasets/: where the data is nowhere."""
    kit = tmp_path_factory.mktemp("kit-without-data")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".grade*")
    for name in ("grader", "exercises", "solutions"):
        shutil.copytree(root / name, kit / name, ignore=ignore)
    for name in ("course.toml", "pyproject.toml", "datasets/catalog.toml"):  # the catalog, not the corpus
        (kit / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, kit / name)
    return kit


def _without_data(kit, tmp_path) -> dict:
    """The environment of a run of `kit` with no data anywhere and no network to fetch it from."""
    import socket

    with socket.socket() as s:  # a port on this machine where nothing listens: the "network" fails
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/input.txt"
    env = {k: v for k, v in os.environ.items() if k != "GPT_COURSE_DATA"}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), GPT_COURSE_DATA_URL=dead, GRADE_LANG="en", PYTHONPATH=str(kit))
    return env


def test_a_batch_without_the_data_grades_no_one_rather_than_charge_everyone(grade_exe, root, kit_without_data,
                                                                             tmp_path):
    """Every student's data checks would fail for the kit's reason: the batch says how to get
    the data and exits 3 before grading; a cohort that does not read the data is graded."""
    env = _without_data(kit_without_data, tmp_path)
    cohort = tmp_path / "cohort"
    (cohort / "ann").mkdir(parents=True)
    for name in ("ex01_windows.py", "ex06_char_tokenizer.py"):
        shutil.copy(root / "solutions" / name, cohort / "ann")
    run = subprocess.run([grade_exe, "batch", str(cohort), "--out", str(tmp_path / "out"), "--only", "ex01,ex06",
                          "--no-progress"], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 3 and "GPT_COURSE_DATA" in run.stderr and "Traceback" not in run.stderr, run.stderr
    assert not (tmp_path / "out" / "grades.csv").exists()
    run = subprocess.run([grade_exe, "batch", str(cohort), "--out", str(tmp_path / "out"), "--only", "ex01",
                          "--no-progress"], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr


def test_a_later_exercise_is_graded_without_the_earlier_files(root, tmp_path):
    # ex11 imports ex08's get_batch; a submission of ex11 alone is still graded on ex11 alone.
    sub = tmp_path / "sub"
    sub.mkdir()
    shutil.copy(root / "solutions" / "ex11_estimate_loss.py", sub)
    run = grade("--lang", "en", "ex11", "--submission", str(sub))
    assert run.returncode == 0, run.stdout + run.stderr


def test_without_data_or_network_the_message_says_how_to_get_it_once(grade_exe, kit_without_data, tmp_path):
    env = _without_data(kit_without_data, tmp_path)
    run = subprocess.run([grade_exe, "ex06", "--reference"], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 1
    assert "Traceback" not in run.stdout + run.stderr
    assert run.stdout.count("GPT_COURSE_DATA") == 1 and "grade data" in run.stdout
    assert "see above" in run.stdout


def test_a_folder_name_that_is_not_utf8_gives_valid_reports(root, tmp_path, in_process_runner):
    """A byte that is not UTF-8 in the folder's name (as Python's argv carries it): every format
    written whole and valid, no traceback (each run writes them all: --format/--out pairs)."""
    folder = os.path.join(os.fsencode(tmp_path), b"st\xfeudent")
    os.mkdir(folder)
    shutil.copy(root / "solutions" / "ex01_windows.py", os.fsdecode(folder))
    os.symlink(folder, os.path.join(os.fsencode(tmp_path), b"li\xfenk"))  # refused, its name in the message
    for name, code in ((b"st\xfeudent", 0), (b"li\xfenk", 1)):
        outs = {fmt: tmp_path / f"report-{code}.{fmt}" for fmt in ("json", "junit", "text")}
        run = grade("ex01", "--submission", os.fsdecode(os.path.join(os.fsencode(tmp_path), name)),
                    *(arg for fmt, out in outs.items() for arg in ("--format", fmt, "--out", str(out))))
        assert run.returncode == code and "Traceback" not in run.stderr, run.stderr[-2000:]
        for fmt, out in outs.items():
            text = out.read_bytes().decode("utf-8")  # valid UTF-8
            if fmt == "json":
                assert json.loads(text)["score"] == 10 * (1 - code)


def test_a_grade_init_folder_given_as_submission_is_graded_from_its_exercises(root, tmp_path, in_process_runner):
    """`--submission alice` where alice/exercises/ holds the files (as `grade init` makes it):
    read from there, as `grade batch` reads a student's folder."""
    (tmp_path / "alice" / "exercises").mkdir(parents=True)
    shutil.copy(root / "solutions" / "ex01_windows.py", tmp_path / "alice" / "exercises")
    run = grade("ex01", "--submission", str(tmp_path / "alice"))
    assert run.returncode == 0 and " 10/10" in run.stdout.splitlines()[0], run.stdout[-2000:]


def test_a_conftest_above_the_course_is_never_run(tmp_path):
    """A conftest.py in a folder above the course's checks (anyone may write /tmp/conftest.py)
    is not run in the grader's own process: once every folder above them was a collection step
    of the grader's pytest session, its conftest.py imported there."""
    course = make_course(tmp_path)
    ran = tmp_path / "ran"
    (tmp_path / "conftest.py").write_text(f"open({str(ran)!r}, 'w').close()\n", encoding="utf-8")
    run = grade("--course", str(course), "--lang", "en", "ex01", "--reference")
    assert run.returncode == 0, run.stdout + run.stderr
    assert not ran.exists()
