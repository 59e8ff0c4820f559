"""Gradescope 评分包：在一个和 Gradescope 一样布局的目录里端到端运行 run_autograder。

`grade gradescope OUT.zip` builds the bundle; the test lays out a folder the way Gradescope
does (`source/` = the unzipped bundle, `submission/`, `results/`), with `venv/` pointing at
this machine's environment and the bundle's own `kit/` on PYTHONPATH instead of what setup.sh
would install, closes the kit's secrets as setup.sh does (`grade close-secrets`), and runs the
bundle's own `run_autograder` with AUTOGRADER_ROOT there, as root: its workers drop to the
container tier's uid, which reads the interpreter through tests/sandbox/as_user.py. Uploads: the exercises inside a folder, a zip
of a repository together with an attack that writes results/results.json itself and prints
fake JSON; two uploads that differ only in what a hidden check decides.
Each time results.json must be the kit's, shaped as Gradescope's specification says, in the
bundle's language (Chinese here), with nothing a hidden check decided in what a student
always sees.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import pytest

from tests.sandbox.as_user import as_user_prefix, needs_root, passable_folder

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(sys.executable).parent.parent
COURSE_ORDER = ["ex01", "ex02", "ex03", "ex04", "ex05", "ex06", "ex07", "ex08", "ex09", "ex10", "ex11", "ex12", "ex13"]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundle") / "autograder.zip"
    proc = subprocess.run([str(VENV / "bin" / "grade"), "--lang", "zh", "gradescope", str(out),
                           "--hidden-visibility", "after_due_date"], capture_output=True, text=True, timeout=120,
                          cwd=out.parent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture(scope="module")
def place():
    """Where the autograder folders are: every uid may pass (the workers read the corpus there)."""
    folder = passable_folder("grade-gradescope-")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _env(root: Path) -> dict:
    """The bundle's kit as setup.sh installs it, with caches of the run's own (not the suite's)."""
    return {**os.environ, "AUTOGRADER_ROOT": str(root), "PYTHONPATH": str(root / "source" / "kit"),
            "XDG_CACHE_HOME": str(root / "cache"), "PYTHONDONTWRITEBYTECODE": "1"}


def _autograder(bundle: Path, place: Path) -> Path:
    """A folder laid out like Gradescope's /autograder, the bundle unzipped into source/ and its
    kit's secrets closed (setup.sh's `grade close-secrets`)."""
    root = Path(tempfile.mkdtemp(dir=place)) / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "results").mkdir()
    with zipfile.ZipFile(bundle) as archive:
        archive.extractall(root / "source")
        for info in archive.infolist():  # extractall drops the permission bits
            os.chmod(root / "source" / info.filename, (info.external_attr >> 16) & 0o777 or 0o644)
    for folder, _, _ in os.walk(root.parent):
        os.chmod(folder, 0o755)
    (root / "venv").symlink_to(VENV)  # instead of setup.sh's install
    closing = subprocess.run([str(VENV / "bin" / "grade"), "close-secrets"], capture_output=True, text=True,
                             env=_env(root), cwd=root / "source" / "kit", timeout=300)
    assert closing.returncode == 0 and "solutions" in closing.stdout, closing.stdout + closing.stderr
    return root


def _run(root: Path) -> dict:
    proc = subprocess.run([*as_user_prefix(root.parent, None), str(root / "source" / "run_autograder")],
                          env=_env(root), capture_output=True, text=True, timeout=600, cwd="/")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    _check_spec(data)
    return data


def _check_spec(data: dict) -> None:
    """The fields Gradescope's specification lists, with the kinds it says."""
    assert isinstance(data["score"], (int, float)) and isinstance(data["execution_time"], (int, float))
    assert data["output_format"] == "text" and data["stdout_visibility"] == "hidden"
    assert data["visibility"] in ("visible", "hidden", "after_due_date", "after_published")
    numbers = []
    for test in data["tests"]:
        assert {"name", "number", "score", "max_score", "status", "output", "visibility"} <= set(test), test
        assert test["status"] in ("passed", "failed") and 0 <= test["score"] <= test["max_score"]
        assert test["visibility"] in ("visible", "after_due_date")  # built with --hidden-visibility after_due_date
        numbers.append(test["number"])
    assert numbers == sorted(numbers) and len(numbers) == len(set(numbers)), numbers  # ex09.10 after ex09.02
    exercises = list(dict.fromkeys(n.split(".")[0] for n in numbers))
    assert exercises == sorted(exercises, key=COURSE_ORDER.index)  # the course's order
    assert data["score"] == sum(t["score"] for t in data["tests"])


def _by_exercise(data: dict) -> dict[str, tuple[int, int]]:
    scores: dict[str, list[int]] = {}
    for test in data["tests"]:
        got = scores.setdefault(test["number"].split(".")[0], [0, 0])
        got[0] += test["score"]
        got[1] += test["max_score"]
    return {k: tuple(v) for k, v in scores.items()}


def _solution(name: str) -> bytes:
    return (ROOT / "solutions" / name).read_bytes()


def test_bundle_layout(bundle):
    names = set(zipfile.ZipFile(bundle).namelist())
    assert {"setup.sh", "run_autograder", "gradescope.json", "kit/pyproject.toml", "kit/course.toml",
            "kit/grader/per_exercise/ex01/checks.py",
            "kit/grader/per_exercise/ex01/hints.toml", "kit/solutions/ex01_windows.py"} <= names
    setup = zipfile.ZipFile(bundle).read("setup.sh").decode()
    assert "torch==2.13.0" in setup and "python3.11" in setup and "rm -rf \"$SOURCE/kit\"" in setup
    assert zipfile.ZipFile(bundle).getinfo("run_autograder").external_attr >> 16 & 0o111
    # hidden inputs drawn per submission there too: a secret of the bundle's own, root's alone
    secret = zipfile.ZipFile(bundle).read("course-secret")
    assert len(secret) >= 32 and zipfile.ZipFile(bundle).getinfo("course-secret").external_attr >> 16 & 0o077 == 0
    assert "GRADE_COURSE_SECRET" in zipfile.ZipFile(bundle).read("run_autograder").decode()


@needs_root
def test_folder_wrapped_upload(bundle, place):
    root = _autograder(bundle, place)
    folder = root / "submission" / "my-work" / "exercises"
    folder.mkdir(parents=True)
    for name in ("ex01_windows.py", "ex03_param_budget.py", "ex07_split.py"):
        (folder / name).write_bytes(_solution(name))
    (root / "submission" / "ex03_param_budget.py").write_text("raise SystemExit\n")  # shallower: wins
    data = _run(root)
    scores = _by_exercise(data)
    assert scores["ex01"][0] == scores["ex01"][1] == 10 and scores["ex07"][0] == scores["ex07"][1] > 0
    assert scores["ex03"][0] == 0 and scores["ex02"][0] == 0
    assert data["score"] == 10 + scores["ex07"][1]
    assert "my-work/exercises/ex01_windows.py" in data["output"] and "ex02_nll.py" in data["output"]
    numbers = [t["number"] for t in data["tests"]]
    assert any(n.endswith(".10") for n in numbers) and numbers == sorted(numbers)


@needs_root
def test_zip_upload_and_an_attack(bundle, place):
    """One upload: ex01 inside a zipped repository, and a loose ex03 that writes
    results/results.json itself (everywhere it might be) and prints fake JSON."""
    root = _autograder(bundle, place)
    with zipfile.ZipFile(root / "submission" / "submission.zip", "w") as archive:
        archive.writestr("gpt-course-main/exercises/ex01_windows.py", _solution("ex01_windows.py"))
        archive.writestr("__MACOSX/gpt-course-main/exercises/ex01_windows.py", b"\x00\x05junk")
    results = root / "results" / "results.json"
    fake = json.dumps({"score": 1000, "tests": [{"name": "all", "score": 1000, "max_score": 1000}]})
    attack = (f"import json, os, sys\n"
              f"for path in ({str(results)!r}, '/autograder/results/results.json', 'results/results.json'):\n"
              f"    try:\n"
              f"        os.makedirs(os.path.dirname(path), exist_ok=True)\n"
              f"        open(path, 'w').write({fake!r})\n"
              f"    except OSError:\n"
              f"        pass\n"
              f"print({fake!r})\n"
              f"sys.stdout.flush()\n").encode() + _solution("ex03_param_budget.py")
    (root / "submission" / "ex03_param_budget.py").write_bytes(attack)
    (root / "submission" / "results").mkdir()
    (root / "submission" / "results" / "results.json").write_text(fake)
    data = _run(root)
    scores = _by_exercise(data)
    assert scores["ex01"] == (10, 10)  # found in the zip, the __MACOSX copy ignored
    assert scores["ex03"][0] <= scores["ex03"][1] < 1000
    assert data["score"] == scores["ex01"][0] + scores["ex03"][0] < 1000
    assert len(data["tests"]) > 20 and all(t["max_score"] < 1000 for t in data["tests"])
    assert "gpt-course-main/exercises/ex01_windows.py" in data["output"]


@needs_root
def test_a_damaged_zip_member_is_said_and_the_rest_graded(bundle, place):
    """An upload whose zip holds ex01 with corrupt deflate data and ex03 compressed with LZMA
    and cut short: results.json is still written, those two are named as unreadable (not a
    traceback and an empty results folder, Gradescope's "autograder failed"), ex07 is graded."""
    root = _autograder(bundle, place)
    upload = root / "submission" / "work.zip"
    with zipfile.ZipFile(upload, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("ex01_windows.py", _solution("ex01_windows.py"))
    data = bytearray(upload.read_bytes())
    start = 30 + len("ex01_windows.py") + 5
    data[start:start + 40] = bytes(b ^ 0xFF for b in data[start:start + 40])
    upload.write_bytes(bytes(data))
    other = root / "submission" / "more.zip"
    with zipfile.ZipFile(other, "w", compression=zipfile.ZIP_LZMA) as archive:
        archive.writestr("ex03_param_budget.py", _solution("ex03_param_budget.py") * 3)
    cut = other.read_bytes()
    header = zipfile.ZipFile(other).infolist()[0]
    middle = header.header_offset + 30 + len(header.filename) + header.compress_size // 2
    other.write_bytes(cut[:middle] + b"\x00" * 64 + cut[middle + 64:])
    (root / "submission" / "ex07_split.py").write_bytes(_solution("ex07_split.py"))
    result = _run(root)
    scores = _by_exercise(result)
    assert scores["ex07"][0] == scores["ex07"][1] > 0 and scores["ex01"][0] == scores["ex03"][0] == 0
    assert "读不出来" in result["output"] and "ex01_windows.py" in result["output"]


CJK = re.compile("[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")  # Chinese, its punctuation too


@needs_root
def test_the_summary_students_always_see_holds_nothing_a_hidden_check_decided(bundle, place):
    """Two uploads: the reference ex01 and ex07, and the same with ex01's `count_targets` wrong
    (hidden checks only). What a student sees before the hidden tests are shown (the top-level
    output, the visible tests) is the same for both; the scores Gradescope keeps differ. Every
    line of that output is in the bundle's language."""
    runs = []
    for name, ex01 in (("right", _solution("ex01_windows.py")),
                       ("wrong", _solution("ex01_windows.py") + b"\n\ndef count_targets(*args, **kwargs):\n    return -1\n")):
        root = _autograder(bundle, place)
        (root / "submission" / "ex01_windows.py").write_bytes(ex01)
        (root / "submission" / "ex07_split.py").write_bytes(_solution("ex07_split.py"))
        runs.append(_run(root))
    right, wrong = runs
    assert right["score"] == wrong["score"] + 1  # test_count_targets: 1 point, hidden
    assert right["output"] == wrong["output"], (right["output"], wrong["output"])

    def seen(data):
        return [(t["number"], t["name"], t["score"], t["status"], t["output"]) for t in data["tests"]
                if t["visibility"] == "visible"]

    assert seen(right) == seen(wrong) and seen(right)
    hidden = {t["number"]: t["status"] for t in wrong["tests"] if t["visibility"] != "visible"}
    assert "failed" in hidden.values() and all(t["visibility"] == "after_due_date" for t in wrong["tests"]
                                                if t["number"] in hidden)
    # ex01 is 10 points; its public checks give 3 of them: no 9 or 10 out of 10, no total
    ex01 = next(line for line in wrong["output"].splitlines() if line.startswith("ex01"))
    assert "3/3" in ex01 and "/10" not in ex01 and "7 分" in ex01 and "截止日期后" in ex01, ex01
    assert f"{wrong['score']}/" not in wrong["output"] and f"{right['score']}/" not in right["output"]
    for line in wrong["output"].splitlines():
        assert not line.strip() or CJK.search(line), line  # the bundle's language: Chinese


def test_gradescopes_hidden_is_not_offered_for_tests_with_points(tmp_path):
    """Gradescope's `hidden` (never shown; the student's total hidden too) is for tests without
    points: every hidden check has points, so neither the bundle nor `grade all` takes it."""
    grade = str(VENV / "bin" / "grade")
    for command in (["gradescope", str(tmp_path / "autograder.zip")],
                    ["all", "--submission", str(tmp_path), "--format", "gradescope"]):
        proc = subprocess.run([grade, "--lang", "en", *command, "--hidden-visibility", "hidden"],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert "after_due_date" in proc.stderr
    assert not (tmp_path / "autograder.zip").exists()
