"""`grade release OUT`: the student kit holds no solution source and grades on its own.

The release is built once (it records the reference's answers to the public checks) and
then used the way a student uses it: `grade all` run from inside the release folder, with
the release's own `grader` package first on the path, on a correct submission (every
check passes) and on a wrong one (it fails, and the known mistake is still named although
the mistakes' code is not shipped). One test installs a copy of the release into a fresh
virtual environment with `pip install -e .`, offline, and runs `grade ex03` there.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from grader.model.course import load_course
from grader.build.release import build_release, find_solution_leaks, visible_checks

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not (ROOT / "solutions").is_dir(), reason="needs the instructor's kit")


@pytest.fixture(scope="module")
def course():
    return load_course()


@pytest.fixture(scope="module")
def release(course, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "gpt-course"
    build_release(course, out, echo=lambda *_: None)
    return out


def run_grade(release: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """`grade ...` with the release's own grader package (not the instructor's) imported."""
    env = {**os.environ, "PYTHONPATH": str(release), "GRADE_LANG": "en"}
    code = ("import grader, sys; assert grader.__file__.startswith(sys.argv[1]), grader.__file__; "
            "sys.argv = ['grade'] + sys.argv[2:]; from grader.commands.main import entry; entry()")
    return subprocess.run([sys.executable, "-c", code, str(release), *args], cwd=cwd or release, env=env,
                          capture_output=True, text=True, timeout=600)


def solution_bodies(course) -> list[tuple[str, list[str]]]:
    """Each solution function's body (after its docstring) as stripped code lines."""
    bodies = []
    for path in sorted(course.solutions_dir.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            body = node.body[1:] if ast.get_docstring(node) is not None else node.body
            if not body or all(isinstance(s, ast.Raise) for s in body):
                continue
            text = "\n".join(source.splitlines()[body[0].lineno - 1: body[-1].end_lineno])
            lines = [re.sub(r"\s+#.*$", "", l).strip() for l in text.splitlines()]
            bodies.append((f"{path.name}:{node.name}", [l for l in lines if l and not l.startswith("#")]))
    return bodies


def test_layout(release, course):
    assert not (release / "solutions").exists()
    for ex in course.exercises:
        assert (release / "exercises" / ex.file).is_file()
        assert (release / "grader" / "checks" / ex.check_module).is_file()
    for name in ("course.toml", "pyproject.toml", "README.md", "datasets/catalog.toml", "grader/answers.bin",
                 "grader/cli.py", "grader/mistakes/__init__.py"):
        assert (release / name).is_file(), name
    assert sorted(p.name for p in (release / "grader" / "mistakes").glob("*.py")) == ["__init__.py"]
    assert not list(release.rglob("tests")) and not list(release.rglob("__pycache__"))
    assert "正式评分还会运行隐藏测试" in (release / "README.md").read_text(encoding="utf-8")


def test_only_public_checks_are_shipped(release, course):
    for ex in course.exercises:
        shipped = (release / "grader" / "checks" / ex.check_module).read_text(encoding="utf-8")
        original = (course.checks_dir / ex.check_module).read_text(encoding="utf-8")
        public, manual = visible_checks(original)
        names = [n.name for n in ast.parse(shipped).body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
        assert sorted(names) == sorted(public + manual), ex.id
        hidden = [n.name for n in ast.parse(original).body
                  if isinstance(n, ast.FunctionDef) and n.name.startswith("test") and n.name not in names]
        for name in hidden:
            assert name not in shipped, (ex.id, name)


def test_no_solution_source(release, course):
    """Search every text file of the release for each solution function's body."""
    texts = {}
    for path in release.rglob("*"):
        if path.is_file() and path.suffix != ".bin":
            lines = [re.sub(r"\s+#.*$", "", l).strip() for l in path.read_text(encoding="utf-8", errors="replace").splitlines()]
            texts[path] = "\n" + "\n".join(l for l in lines if l and not l.startswith("#")) + "\n"
    bodies = solution_bodies(course)
    assert len(bodies) >= len(course.exercises)
    for where, lines in bodies:
        needle = "\n" + "\n".join(lines) + "\n"
        found = [str(p.relative_to(release)) for p, text in texts.items() if needle in text]
        assert not found, f"the body of {where} is in {found}"
    assert find_solution_leaks(course, release) == []


def test_answers_are_not_readable_text(release, course):
    blob = (release / "grader" / "answers.bin").read_bytes()
    for ex in course.exercises:  # a mistake's message is stored in the blob, but not as text
        for mistake in __import__("grader.judge.mistakes", fromlist=["x"]).mistakes_for(ex.id):
            assert mistake.en.encode() not in blob and mistake.zh.encode() not in blob
    assert zlib.decompress(blob)  # the blob is zlib-compressed plain data


def test_stubs_fail_and_mention_hidden_tests(release):
    proc = run_grade(release, "ex03")
    assert proc.returncode == 1, proc.stderr
    assert "not implemented" in proc.stdout
    assert "hidden tests" in proc.stdout


def test_correct_submission_passes(release, course, tmp_path):
    submission = tmp_path / "correct"
    shutil.copytree(course.solutions_dir, submission)
    proc = run_grade(release, "all", "--submission", str(submission), "--format", "json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report["score"] == report["max_score"] > 0
    assert [e["id"] for e in report["exercises"]] == [e.id for e in course.exercises]


def test_wrong_submission_fails_and_is_diagnosed(release, course, tmp_path):
    """ex01's make_windows drops the last window: the release names the mistake from the
    recorded answers (its code is not in the release)."""
    submission = tmp_path / "wrong"
    shutil.copytree(course.solutions_dir, submission)
    path = submission / "ex01_windows.py"
    source = path.read_text(encoding="utf-8")
    path.write_text(source + "\n\n_right = make_windows\n\n"
                    "def make_windows(tokens, block_size, stride=1):\n"
                    "    return _right(tokens, block_size, stride)[:-1]\n", encoding="utf-8")
    proc = run_grade(release, "all", "--submission", str(submission), "--format", "json")
    assert proc.returncode == 1, proc.stderr
    report = json.loads(proc.stdout)
    ex01 = next(e for e in report["exercises"] if e["id"] == "ex01")
    assert ex01["score"] < ex01["max_score"]
    assert any(c["diagnosis"] == "off_by_one_drop_last" for c in ex01["checks"]), ex01
    others = [e for e in report["exercises"] if e["id"] != "ex01"]
    assert all(e["score"] == e["max_score"] for e in others)


def test_pip_install_offline_elsewhere(release, tmp_path):
    """A copy of the release, installed with `pip install -e .` into a new environment
    with no network, runs `grade ex03` against its own grader."""
    copy = tmp_path / "elsewhere" / "kit"
    shutil.copytree(release, copy)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # torch and the other dependencies come from this environment (no download)
    base_site = subprocess.run([sys.executable, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "_base_env.pth").write_text(base_site + "\n")
    offline = {**os.environ, "PIP_NO_INDEX": "1", "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
               "PYTHONPATH": "", "GRADE_LANG": "en"}
    # pip and setuptools (the build backend) are this environment's too, so nothing is fetched
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "-e", str(copy)], check=True, env=offline, timeout=300, cwd=copy)
    where = subprocess.run([str(python), "-c", "import grader; print(grader.__file__)"], cwd=tmp_path,
                           check=True, capture_output=True, text=True, env=offline).stdout.strip()
    assert where.startswith(str(copy)), where
    proc = subprocess.run([str(venv / "bin" / "grade"), "ex03"], cwd=copy, env=offline, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the stubs: not implemented
    assert "not implemented" in proc.stdout and "hidden tests" in proc.stdout
