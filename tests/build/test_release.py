"""`grade release OUT`: the student kit holds no solution source and grades on its own.

The release is built once (it records the reference's answers to the public checks) and
then used the way a student uses it: `grade all` run from inside the release folder, with
the release's own `grader` package first on the path, on a correct submission (every
check passes) and on a wrong one (it fails, and the known mistake is still named although
the mistakes' code is not shipped). The leak search is written here on its own, the way
someone hunting for answers would: every string and bytes blob of every file decoded
(base64, base85, ascii85, hex; zlib, gzip, bz2, lzma; the recorded answers read), every
bytecode file disassembled into code objects, and each solution function's body looked for
in all of it; a planted, sealed copy of a solution proves the search finds one. One test
installs a copy of the release into a fresh virtual environment with a plain
`pip install --no-index .` (build isolation on, no pip configuration, no network).
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
                 "grader/mistakes/__init__.py", "grader/pieces/__init__.py", "_build/flit_core/buildapi.py",
                 "_build/flit_core-LICENSE"):
        assert (release / name).is_file(), name
    assert sorted(p.name for p in (release / "grader" / "mistakes").glob("*.py")) == ["__init__.py"]
    # the correct pieces of earlier exercises are the answers to ex08, ex09, ex11: not shipped
    assert sorted(p.name for p in (release / "grader" / "pieces").rglob("*") if p.is_file()) == ["__init__.py"]
    assert "OWN_FILES = True" in (release / "grader" / "pieces" / "__init__.py").read_text(encoding="utf-8")
    assert not list(release.rglob("*.pyc")) and not list(release.rglob(".course-secret"))
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


def _decoded(data: bytes, depth: int = 3) -> list[bytes]:
    """`data` and whatever it decodes or decompresses to, up to `depth` layers."""
    import base64
    import binascii
    import bz2
    import gzip
    import lzma

    def decodings(blob: bytes) -> list[bytes]:
        out = []
        compact = re.sub(rb"\s+", b"", blob)
        for fn in (zlib.decompress, gzip.decompress, bz2.decompress, lzma.decompress,
                   lambda b: zlib.decompress(b, -15)):
            try:
                out.append(fn(blob))
            except Exception:
                pass
        if len(compact) >= 16:
            for fn in (lambda b: base64.b64decode(b, validate=True), base64.b85decode, base64.a85decode,
                       base64.b32decode, binascii.unhexlify):
                try:
                    out.append(fn(compact))
                except Exception:
                    pass
        return [o for o in out if o and o != blob]

    found, frontier = [data], [data]
    for _ in range(depth):
        frontier = [d for blob in frontier for d in decodings(blob) if d not in found]
        found += frontier
    return found


def _blobs_of(path: Path) -> list[bytes]:
    """A file's bytes; for Python, every str/bytes constant and each module's constants joined;
    for the recorded answers, every string inside them."""
    data = path.read_bytes()
    blobs = [data]
    if path.suffix == ".py":
        consts = [n.value if isinstance(n.value, bytes) else n.value.encode()
                  for n in ast.walk(ast.parse(data)) if isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes))]
        blobs += consts + [b"".join(consts)]
    out = []
    for blob in blobs:
        for decoded in _decoded(blob):
            out.append(decoded)
            try:
                import grader.sandbox.wire as wire

                value = wire.decode(decoded)
            except Exception:
                continue
            stack = [value]
            while stack:
                v = stack.pop()
                if isinstance(v, str):
                    out.append(v.encode())
                elif isinstance(v, dict):
                    stack += list(v.keys()) + list(v.values())
                elif isinstance(v, (list, tuple)):
                    stack += list(v)
    return out


def _norm(text: str) -> str:
    lines = [re.sub(r"\s+#.*$", "", l).strip() for l in text.splitlines()]
    return "\n" + "\n".join(re.sub(r"\s+", " ", l) for l in lines if l and not l.startswith("#")) + "\n"


def _solution_code(course) -> dict[str, bytes]:
    """Each solution function's bytecode, compiled here."""
    import types

    codes = {}
    for path in sorted(course.solutions_dir.glob("*.py")):
        stack = [compile(path.read_text(encoding="utf-8"), str(path), "exec")]
        while stack:
            code = stack.pop()
            stack += [c for c in code.co_consts if isinstance(c, types.CodeType)]
            if code.co_name != "<module>" and len(code.co_code) > 16:
                codes[f"{path.name}:{code.co_name}"] = code.co_code
    return codes


def hunt(course, root: Path) -> list[str]:
    """Every place under `root` where a solution's body can be recovered from."""
    import marshal

    bodies = solution_bodies(course)
    codes = _solution_code(course)
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = str(path.relative_to(root))
        if path.suffix in (".pyc", ".pyo"):
            code = marshal.loads(path.read_bytes()[16:])
            stack = [code]
            while stack:
                c = stack.pop()
                stack += [k for k in c.co_consts if hasattr(k, "co_code")]
                found += [f"{rel}: bytecode of {w}" for w, b in codes.items() if c.co_code == b]
            continue
        for blob in _blobs_of(path):
            found += [f"{rel}: bytecode of {w}" for w, b in codes.items() if b in blob]
            text = _norm(blob.decode("utf-8", "replace"))
            found += [f"{rel}: {where}" for where, lines in bodies if "\n" + "\n".join(lines) + "\n" in text]
    return sorted(set(found))


def test_no_solution_source(release, course):
    """No solution body in the release, as text, in a decoded or decompressed blob, in the
    recorded answers, or as bytecode; the build's own search agrees."""
    bodies = solution_bodies(course)
    assert len(bodies) >= len(course.exercises)
    assert hunt(course, release) == []
    assert find_solution_leaks(course, release) == []


def test_the_hunt_finds_hidden_answers(release, course, tmp_path):
    """The searches find a solution however it is wrapped: plain, base85+zlib sealed (what
    earlier releases shipped), base64+lzma, and as bytecode."""
    import base64
    import lzma
    import py_compile

    planted = tmp_path / "planted"
    for name in ("plain", "sealed", "lzma", "pyc"):
        (planted / name).mkdir(parents=True)
    source = (course.solutions_dir / "ex08_get_batch.py").read_text(encoding="utf-8")
    (planted / "plain" / "get_batch.py").write_text(source, encoding="utf-8")
    sealed = base64.b85encode(zlib.compress(source.encode(), 9)).decode()
    chunks = "\n".join(f"    {sealed[i:i + 96]!r}" for i in range(0, len(sealed), 96))
    (planted / "sealed" / "get_batch.py").write_text(
        f"import base64, zlib\n_SOURCE = (\n{chunks}\n)\nexec(zlib.decompress(base64.b85decode(_SOURCE)))\n")
    (planted / "lzma" / "blob.dat").write_bytes(base64.b64encode(lzma.compress(source.encode())))
    py_compile.compile(str(course.solutions_dir / "ex08_get_batch.py"), cfile=str(planted / "pyc" / "get_batch.pyc"))
    for name in ("plain", "sealed", "lzma", "pyc"):
        assert any("get_batch" in leak for leak in hunt(course, planted / name)), name
        assert any("ex08_get_batch.py:get_batch" in leak for leak in find_solution_leaks(course, planted / name)), name


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
    """A copy of the release, installed with a plain `pip install --no-index .` (build
    isolation on: the backend is the vendored flit_core) into a new environment with no
    network and no pip configuration, runs `grade` against its own, installed grader."""
    copy = tmp_path / "elsewhere" / "kit"
    shutil.copytree(release, copy)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # torch, the other dependencies and pip itself come from this environment (no download)
    base_site = subprocess.run([sys.executable, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "_base_env.pth").write_text(base_site + "\n")
    offline = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    offline.update({"PIP_CONFIG_FILE": os.devnull, "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
                    "PYTHONPATH": "", "GRADE_LANG": "en"})
    proc = subprocess.run([str(python), "-m", "pip", "install", "--no-index", "."], env=offline, timeout=300,
                          cwd=copy, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    where = subprocess.run([str(python), "-c", "import grader; print(grader.__file__)"], cwd=tmp_path,
                           check=True, capture_output=True, text=True, env=offline).stdout.strip()
    assert where.startswith(site), where  # the installed wheel, not the copy or the instructor's kit
    installed = Path(where).parent
    assert (installed / "answers.bin").is_file() and (installed / "_kit" / "course.toml").is_file()
    names = subprocess.run([str(python), "-c", "from importlib import metadata; print(sorted({d.metadata['Name'] for d in "
                            "metadata.distributions(path=[__import__('sys').argv[1]])}))", site],
                           check=True, capture_output=True, text=True, env=offline).stdout
    assert "'gpt-course-grader'" in names and "instructor" not in names, names  # the student distribution
    assert sorted(p.name for p in (installed / "pieces").glob("*.py")) == ["__init__.py"]
    student = tmp_path / "student"
    shutil.copytree(copy / "exercises", student / "exercises")
    proc = subprocess.run([str(venv / "bin" / "grade"), "ex03"], cwd=student, env=offline, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the stubs: not implemented
    assert "not implemented" in proc.stdout and "hidden tests" in proc.stdout


def test_the_release_is_named_for_students_and_the_instructors_kit_for_instructors():
    """A wheel says whom it is for: the repository builds `gpt-course-grader-instructor` (it
    carries solutions/), the release `gpt-course-grader` (none)."""
    import tomllib

    from grader.build.release import release_pyproject
    from grader.model.paths import INSTRUCTOR_DISTRIBUTION, STUDENT_DISTRIBUTION

    kit = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert tomllib.loads(kit)["project"]["name"] == INSTRUCTOR_DISTRIBUTION == "gpt-course-grader-instructor"
    release = tomllib.loads(release_pyproject(kit))
    assert release["project"]["name"] == STUDENT_DISTRIBUTION == "gpt-course-grader"
    assert release["project"]["dependencies"] == tomllib.loads(kit)["project"]["dependencies"]


def test_later_exercises_use_the_students_own_earlier_files(release, course, tmp_path):
    """The release has no correct get_batch: ex10-ex12 run on the student's own ex08/ex09/ex11
    (and say so). A wrong ex08 now costs ex11 too; a missing ex08 is named, not a traceback."""
    submission = tmp_path / "own"
    submission.mkdir()
    for name in ("ex08_get_batch.py", "ex09_bigram.py", "ex11_estimate_loss.py"):
        shutil.copy2(course.solutions_dir / name, submission / name)
    proc = run_grade(release, "ex11", "--submission", str(submission))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "graded here with your own ex08, ex09 and ex11 files" in proc.stdout
    wrong = (course.solutions_dir / "ex08_get_batch.py").read_text(encoding="utf-8")
    (submission / "ex08_get_batch.py").write_text(
        wrong + "\n\n_right = get_batch\n\n\ndef get_batch(data, block_size, batch_size, generator=None):\n"
        "    x, y = _right(data, block_size, batch_size, generator=generator)\n    return x, x\n", encoding="utf-8")
    proc = run_grade(release, "ex11", "--submission", str(submission))
    assert proc.returncode == 1, proc.stdout[-3000:]
    (submission / "ex08_get_batch.py").unlink()
    proc = run_grade(release, "ex11", "--submission", str(submission))
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert "ex08_get_batch.py is not in the submission folder" in proc.stdout, proc.stdout
