"""Gradescope 评分包：在一个和 Gradescope 一样布局的目录里端到端运行 run_autograder。

`grade gradescope OUT.zip` builds the bundle; the test lays out a folder the way Gradescope
does (`source/` = the unzipped bundle, `submission/`, `results/`), with `venv/` pointing at
this machine's environment and the bundle's own `kit/` on PYTHONPATH instead of what setup.sh
would install, closes the kit's secrets as setup.sh does (`grade close-secrets`), and runs the
bundle's own `run_autograder` with AUTOGRADER_ROOT there, as root: its workers drop to the
container tier's uid, which reads the interpreter through tests/sandbox/as_user.py. Uploads:
the exercises inside a folder, twice, the two differing only in what a hidden check decides;
and one holding a zip of a repository, an attack that writes results/results.json itself and
prints fake JSON, and zips whose members cannot be read (each of these on exercises of its own).
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


WRONG_COUNT = b"\n\ndef count_targets(*args, **kwargs):\n    return -1\n"  # ex01: hidden checks only


def _plant_folder_wrapped(root: Path, ex01: bytes) -> None:
    """The exercises inside a folder (`my-work/exercises/`: ex01 as given, ex03 and ex07 the
    reference's), and a loose ex03 that does nothing, which is shallower and so wins."""
    folder = root / "submission" / "my-work" / "exercises"
    folder.mkdir(parents=True)
    for name in ("ex03_param_budget.py", "ex07_split.py"):
        (folder / name).write_bytes(_solution(name))
    (folder / "ex01_windows.py").write_bytes(ex01)
    (root / "submission" / "ex03_param_budget.py").write_text("raise SystemExit\n")  # shallower: wins


@pytest.fixture(scope="module")
def folder_uploads(bundle, place) -> dict[str, dict]:
    """Two folder-wrapped uploads, each graded by run_autograder: "right" (the reference's ex01)
    and "wrong" (the same but for ex01's `count_targets`, which only hidden checks call)."""
    runs = {}
    for name, ex01 in (("right", _solution("ex01_windows.py")), ("wrong", _solution("ex01_windows.py") + WRONG_COUNT)):
        root = _autograder(bundle, place)
        _plant_folder_wrapped(root, ex01)
        runs[name] = _run(root)
    return runs


@needs_root
def test_folder_wrapped_upload(folder_uploads):
    data = folder_uploads["right"]
    scores = _by_exercise(data)
    assert scores["ex01"][0] == scores["ex01"][1] == 10 and scores["ex07"][0] == scores["ex07"][1] > 0
    assert scores["ex03"][0] == 0 and scores["ex02"][0] == 0
    assert data["score"] == 10 + scores["ex07"][1]
    assert "my-work/exercises/ex01_windows.py" in data["output"] and "ex02_nll.py" in data["output"]
    numbers = [t["number"] for t in data["tests"]]
    assert any(n.endswith(".10") for n in numbers) and numbers == sorted(numbers)


def _plant_zip_and_attack(root: Path) -> None:
    """ex01 inside a zipped repository (with a __MACOSX copy of junk), and a loose ex03 that
    writes results/results.json itself (everywhere it might be) and prints fake JSON."""
    with zipfile.ZipFile(root / "submission" / "submission.zip", "w") as archive:
        archive.writestr("gpt-course-main/exercises/ex01_windows.py", _solution("ex01_windows.py"))
        archive.writestr("__MACOSX/gpt-course-main/exercises/ex01_windows.py", b"\x00\x05junk")
    results = root / "results" / "results.json"
    attack = (f"import json, os, sys\n"
              f"for path in ({str(results)!r}, '/autograder/results/results.json', 'results/results.json'):\n"
              f"    try:\n"
              f"        os.makedirs(os.path.dirname(path), exist_ok=True)\n"
              f"        open(path, 'w').write({FAKE!r})\n"
              f"    except OSError:\n"
              f"        pass\n"
              f"print({FAKE!r})\n"
              f"sys.stdout.flush()\n").encode() + _solution("ex03_param_budget.py")
    (root / "submission" / "ex03_param_budget.py").write_bytes(attack)
    (root / "submission" / "results").mkdir()
    (root / "submission" / "results" / "results.json").write_text(FAKE)


FAKE = json.dumps({"score": 1000, "tests": [{"name": "all", "score": 1000, "max_score": 1000}]})
DAMAGED = ("ex02_nll.py", "ex05_tinygpt_loss.py")  # what _plant_damaged_zips spoils


def _plant_damaged_zips(root: Path) -> None:
    """ex02 in a zip with corrupt deflate data, ex05 compressed with LZMA and cut short, and a
    loose ex07."""
    deflated, lzma_cut = DAMAGED
    upload = root / "submission" / "work.zip"
    with zipfile.ZipFile(upload, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(deflated, _solution(deflated))
    data = bytearray(upload.read_bytes())
    start = 30 + len(deflated) + 5
    data[start:start + 40] = bytes(b ^ 0xFF for b in data[start:start + 40])
    upload.write_bytes(bytes(data))
    other = root / "submission" / "more.zip"
    with zipfile.ZipFile(other, "w", compression=zipfile.ZIP_LZMA) as archive:
        archive.writestr(lzma_cut, _solution(lzma_cut) * 3)
    cut = other.read_bytes()
    header = zipfile.ZipFile(other).infolist()[0]
    middle = header.header_offset + 30 + len(header.filename) + header.compress_size // 2
    other.write_bytes(cut[:middle] + b"\x00" * 64 + cut[middle + 64:])
    (root / "submission" / "ex07_split.py").write_bytes(_solution("ex07_split.py"))


@pytest.fixture(scope="module")
def zip_upload(bundle, place) -> dict:
    """One upload graded by run_autograder holding both what _plant_zip_and_attack and what
    _plant_damaged_zips write (different exercises: each test below reads its own)."""
    root = _autograder(bundle, place)
    _plant_zip_and_attack(root)
    _plant_damaged_zips(root)
    return _run(root)


@needs_root
def test_zip_upload_and_an_attack(zip_upload):
    """ex01 found in a zipped repository; the attack's results.json and printed JSON are not
    what Gradescope reads."""
    data = zip_upload
    scores = _by_exercise(data)
    assert scores["ex01"] == (10, 10)  # found in the zip, the __MACOSX copy ignored
    assert scores["ex03"][0] <= scores["ex03"][1] < 1000
    assert data["score"] == scores["ex01"][0] + scores["ex03"][0] + scores["ex07"][0] < 1000  # ex07: loose, below
    assert len(data["tests"]) > 20 and all(t["max_score"] < 1000 for t in data["tests"])
    assert "gpt-course-main/exercises/ex01_windows.py" in data["output"]


@needs_root
def test_a_damaged_zip_member_is_said_and_the_rest_graded(zip_upload):
    """Zip members with corrupt deflate data or cut-short LZMA: results.json is still written,
    those two are named as unreadable (not a traceback and an empty results folder, Gradescope's
    "autograder failed"), the loose ex07 is graded."""
    result = zip_upload
    scores = _by_exercise(result)
    assert scores["ex07"][0] == scores["ex07"][1] > 0 and scores["ex02"][0] == scores["ex05"][0] == 0
    (unreadable,) = [line for line in result["output"].splitlines() if "读不出来" in line]
    assert all(name in unreadable for name in DAMAGED), unreadable


CJK = re.compile("[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")  # Chinese, its punctuation too


@needs_root
def test_the_summary_students_always_see_holds_nothing_a_hidden_check_decided(folder_uploads):
    """Two uploads that differ only in ex01's `count_targets` (hidden checks only). What a
    student sees before the hidden tests are shown (the top-level output, the visible tests) is
    the same for both; the scores Gradescope keeps differ. Every line of that output is in the
    bundle's language."""
    right, wrong = folder_uploads["right"], folder_uploads["wrong"]
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
