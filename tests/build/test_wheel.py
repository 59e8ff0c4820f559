"""从 wheel 安装：一个新的环境里，工具包照样满分评分。

The kit as a real package: the wheel built from the instructor's kit (`pip wheel . --no-deps`,
named gpt_course_grader_instructor: it carries the reference) is installed
into a fresh virtual environment (torch and the other dependencies come from this one through a
.pth file, so nothing is downloaded), and there, away from the checkout:
`grade --version` and `python -m grader --version`, `grade list`, `grade init DIR` then
`grade ex01` on the stubs, and a correct submission graded at full marks (ex06–ex12, which read
tiny Shakespeare, included), with the lesson's data found through GPT_COURSE_DATA (an empty
cache, downloads going to a closed port), and again through the cache `grade data --dir` fills.
Beside the installed package lies another distribution's `datasets/` folder with a
`catalog.toml` of its own (as Hugging Face's `datasets` would): the kit reads only the catalog
it carries. The wheel and its environment are built once per session.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import grader
from tests import corpus

ROOT = Path(__file__).resolve().parents[2]
CORPUS_EXERCISES = ["ex06", "ex07", "ex08", "ex09", "ex10", "ex11", "ex12"]  # read tiny Shakespeare
SOURCES = ["grader", "exercises", "solutions", "datasets", "course.toml", "pyproject.toml", "setup.py",
           "MANIFEST.in", "README.md"]


def _copy_sources(dest: Path) -> Path:
    """The files a wheel is built from, copied (the build writes build/ where it runs)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "answers.bin", ".grade*")
    for name in SOURCES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, dest / name)
    return dest


@pytest.fixture(scope="session")
def wheel(tmp_path_factory) -> Path:
    src = _copy_sources(tmp_path_factory.mktemp("src"))
    out = tmp_path_factory.mktemp("wheel")
    # --no-build-isolation: setuptools from this environment, so the test reaches no index
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
                    "--quiet", "-w", str(out)], check=True, timeout=300, cwd=src, env=_offline())
    (found,) = out.glob("*.whl")
    return found


def _offline(**extra) -> dict:
    env = {**os.environ, "PIP_NO_INDEX": "1", "http_proxy": "http://127.0.0.1:9",
           "https_proxy": "http://127.0.0.1:9", "PYTHONPATH": "", "GRADE_LANG": "en", "GRADE_COURSE": ""}
    env.pop("GRADE_COURSE")
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def venv(wheel, tmp_path_factory) -> Path:
    venv = tmp_path_factory.mktemp("venv")
    venv.chmod(0o755)  # pytest's folders are their owner's alone; the official tier's workers run as another uid
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # torch, click, pytest …: this environment's, after the new one's own (the wheel's grader first)
    Path(site, "_base_env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    str(wheel)], check=True, env=_offline(), timeout=300)
    foreign = Path(site, "datasets")  # another distribution's package beside grader/
    foreign.mkdir()
    (foreign / "__init__.py").write_text("", encoding="utf-8")
    (foreign / "catalog.toml").write_text("[[datasets]]\nname = 'not the course'\n", encoding="utf-8")
    return venv


def _lost(report: dict) -> list:
    return [(e["id"], c["name"], c["message"]) for e in report["exercises"] for c in e["checks"]
            if not c["passed"] and not c["manual"]]


def test_wheel_carries_the_course(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "grader/_kit/course.toml" in names and "grader/_kit/datasets/catalog.toml" in names
    # the instructor's wheel: the reference inside, and its name says so (students install the release)
    assert wheel.name.startswith("gpt_course_grader_instructor-"), wheel.name
    assert {f"grader/_kit/solutions/{p.name}" for p in (ROOT / "solutions").glob("ex*.py")} <= names
    assert not any(name.endswith("input.txt") for name in names)  # the corpus: `grade data` fetches it
    assert {f"grader/_kit/exercises/{p.name}" for p in (ROOT / "exercises").glob("ex*.py")} <= names
    assert "grader/__main__.py" in names and "grader/per_exercise/README.md" in names
    units = ROOT / "grader" / "per_exercise"
    # each exercise's folder whole: its checks, probes, fixtures and hint ladder
    assert {f"grader/per_exercise/{p.relative_to(units).as_posix()}" for p in units.glob("ex*/*")
            if p.suffix in (".py", ".toml")} <= names


def test_installed_kit_runs_away_from_the_checkout(venv, tmp_path):
    env = _offline()
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import grader; print(grader.__file__)"],
                           cwd=tmp_path, check=True, capture_output=True, text=True, env=env).stdout.strip()
    assert where.startswith(str(venv)), where
    for command in ([str(venv / "bin" / "grade"), "--version"], [str(venv / "bin" / "python"), "-m", "grader", "--version"]):
        proc = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0 and proc.stdout.strip() == f"grade {grader.__version__}", proc.stdout + proc.stderr
    listing = subprocess.run([str(venv / "bin" / "grade"), "list"], cwd=tmp_path, capture_output=True, text=True,
                             env=env, timeout=120)
    assert listing.returncode == 0, listing.stdout + listing.stderr
    assert "ex01" in listing.stdout and "ex13" in listing.stdout
    init = subprocess.run([str(venv / "bin" / "grade"), "init", "mine"], cwd=tmp_path, capture_output=True,
                          text=True, env=env, timeout=120)
    assert init.returncode == 0, init.stdout + init.stderr
    assert sorted(p.name for p in (tmp_path / "mine" / "exercises").glob("*.py")) == \
        sorted(p.name for p in (ROOT / "exercises").glob("ex*.py"))
    stub = subprocess.run([str(venv / "bin" / "grade"), "ex01"], cwd=tmp_path / "mine", capture_output=True,
                          text=True, env=env, timeout=300)
    assert stub.returncode == 1 and "not implemented" in stub.stdout, stub.stdout + stub.stderr


def test_installed_kit_grades_a_correct_submission_at_full_marks(venv, tmp_path):
    submission = tmp_path / "submission"
    shutil.copytree(ROOT / "solutions", submission, ignore=shutil.ignore_patterns("__pycache__"))
    data = corpus.FOLDER  # the repository's copy; the wheel carries none
    # an empty cache: the corpus can only come from GPT_COURSE_DATA
    env = _offline(GPT_COURSE_DATA=str(data), XDG_CACHE_HOME=str(tmp_path / "cache"),
                   GPT_COURSE_DATA_URL="http://127.0.0.1:9/input.txt")
    out = tmp_path / "result.json"
    proc = subprocess.run([str(venv / "bin" / "grade"), "all", "--submission", str(submission), "--format", "json",
                           "--out", str(out)], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    assert out.is_file(), proc.stdout + proc.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert _lost(report) == [] and report["score"] == report["max_score"] > 100, _lost(report)
    scores = {e["id"]: (e["score"], e["max_score"]) for e in report["exercises"]}
    assert all(scores[ex][0] == scores[ex][1] > 0 for ex in CORPUS_EXERCISES), scores
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_installed_kit_finds_the_corpus_grade_data_cached(venv, tmp_path):
    """`grade data --dir` copies the corpus into the user's cache; later runs need no folder."""
    env = _offline(XDG_CACHE_HOME=str(tmp_path / "cache"), GPT_COURSE_DATA_URL="http://127.0.0.1:9/input.txt")
    env.pop("GPT_COURSE_DATA", None)
    grade = str(venv / "bin" / "grade")
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "from grader.data.catalog import "
                            "default_catalog_path as p; print(p())"], cwd=tmp_path, env=env, check=True,
                           capture_output=True, text=True).stdout.strip()
    assert where.startswith(str(venv)) and where.endswith("grader/_kit/datasets/catalog.toml"), where
    missing = subprocess.run([grade, "data", "--no-download"], cwd=tmp_path, capture_output=True, text=True,
                             env=env, timeout=120)
    assert missing.returncode == 1 and "GPT_COURSE_DATA" in missing.stdout + missing.stderr
    cached = subprocess.run([grade, "data", "--dir", str(corpus.FOLDER)], cwd=tmp_path, capture_output=True,
                            text=True, env=env, timeout=120)
    assert cached.returncode == 0, cached.stdout + cached.stderr
    assert (tmp_path / "cache" / "gpt-course" / "tinyshakespeare" / "input.txt").is_file()
    submission = tmp_path / "submission"
    submission.mkdir()
    shutil.copy(ROOT / "solutions" / "ex07_split.py", submission)
    out = tmp_path / "ex07.json"
    proc = subprocess.run([grade, "ex07", "--submission", str(submission), "--format", "json", "--out", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    report = json.loads(out.read_text(encoding="utf-8"))
    assert _lost(report) == [] and report["score"] == report["max_score"] > 0, _lost(report)
    assert proc.returncode == 0, proc.stdout + proc.stderr
