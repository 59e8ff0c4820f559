"""`grade release OUT`: the student kit holds no solution source and grades on its own.

The release is built once (it records the reference's answers to the public checks) and
then used the way a student uses it: `grade all` run from inside the release folder, with
the release's own `grader` package first on the path, on a correct submission (every
check passes) and on a wrong one (it fails, and the known mistake is still named although
the mistakes' code is not shipped). The leak search is written here on its own, the way
someone hunting for answers would: every string and bytes blob of every file decoded
(base64, base85, ascii85, hex; zlib, gzip, bz2, lzma; the recorded answers read), every
bytecode file disassembled into code objects, and each solution function's body, each of its
lines that the course does not give (not in a stub, course.toml or a hint level: the last, the fixes,
is built from the known mistakes) and each hand
answer (ANSWER_PARAMS and the like, in any way they are written, or in the recorded data)
looked for in all of it; a planted, sealed copy of a solution, a single line of one, and the
hand answers written out prove the searches find them, and a kit whose probe carries a
solution line is refused by `grade release` itself. The release still grades the hand
answers (sealed): right ones pass, wrong ones fail without the value. One test
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
from grader.build.release import build_release, find_solution_leaks, trim_check_module, visible_checks
from tests.in_process import grade

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not (ROOT / "solutions").is_dir(), reason="needs the instructor's kit")


@pytest.fixture(scope="module")
def course():
    return load_course()


@pytest.fixture(scope="module")
def built(course, tmp_path_factory) -> dict:
    """The release, built once, and each leak search the build ran: (folder, whether the recorded
    answers were in it yet, what was found, the files it searched), in order."""
    import grader.build.release as building

    out = tmp_path_factory.mktemp("release") / "gpt-course"
    searches = []
    search = building.find_solution_leaks

    def searched(course, root, *args, only=None, **kwargs):
        leaks = search(course, root, *args, only=only, **kwargs)
        files = {p.relative_to(root).as_posix() for p in Path(root).rglob("*") if p.is_file()}
        if only is not None:
            files &= {Path(p).as_posix() for p in only}
        searches.append((Path(root).resolve(), (Path(root) / "grader" / "answers.bin").is_file(), leaks, files))
        return leaks

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(building, "find_solution_leaks", searched)
        build_release(course, out, echo=lambda *_: None)
    files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}  # before any test runs in it
    return {"release": out, "searches": searches, "files": files}


@pytest.fixture(scope="module")
def release(built) -> Path:
    return built["release"]


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
        unit = release / "grader" / "per_exercise" / ex.id
        assert (unit / "checks.py").is_file() and (unit / "hints.toml").is_file()
        # the known mistakes live below the checks: none of them ships (the recorded answers name them)
        assert "MISTAKES" not in (unit / "checks.py").read_text(encoding="utf-8")
    for name in ("course.toml", "pyproject.toml", "README.md", "datasets/catalog.toml", "grader/answers.bin",
                 "grader/pieces/__init__.py", "_build/flit_core/buildapi.py", "_build/flit_core-LICENSE"):
        assert (release / name).is_file(), name
    # the correct pieces of earlier exercises are the answers to ex08, ex09, ex11: not shipped
    assert sorted(p.name for p in (release / "grader" / "pieces").rglob("*") if p.is_file()) == ["__init__.py"]
    assert "OWN_FILES = True" in (release / "grader" / "pieces" / "__init__.py").read_text(encoding="utf-8")
    assert not list(release.rglob("*.pyc")) and not list(release.rglob(".course-secret"))
    assert not list(release.rglob("tests")) and not list(release.rglob("__pycache__"))
    assert "正式评分还会运行隐藏测试" in (release / "README.md").read_text(encoding="utf-8")


def test_only_public_checks_are_shipped(release, course):
    for ex in course.exercises:
        shipped = (release / "grader" / "per_exercise" / ex.id / "checks.py").read_text(encoding="utf-8")
        original = (course.unit(ex.id) / "checks.py").read_text(encoding="utf-8")
        public, manual = visible_checks(original)
        names = [n.name for n in ast.parse(shipped).body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
        assert sorted(names) == sorted(public + manual), ex.id
        hidden = [n.name for n in ast.parse(original).body
                  if isinstance(n, ast.FunctionDef) and n.name.startswith("test") and n.name not in names]
        for name in hidden:
            assert name not in shipped, (ex.id, name)


TRIMMED = '''"""Checks."""

import pytest
import torch

from grader.judge import call, same
from grader.judge.mistakes import Mistake
from grader.pieces.get_batch import get_batch  # noqa: F401

pytestmark = pytest.mark.exercise("ex98")


@pytest.mark.public
@pytest.mark.points(1)
def test_shown(student, reference, corpus_path):
    """shown | shown"""
    same(student, reference, call("f", 1))


@pytest.mark.points(1)
def test_hidden(student, reference):
    """hidden | hidden"""
    same(student, reference, call("f", torch.ones(2)))


def _one_batch(data):
    return get_batch(data, 2, 1)


MISTAKES = [Mistake(id="one", section="1", zh="一", en="one", overrides={"f": _one_batch})]
'''


def test_a_trimmed_check_module_keeps_only_what_its_public_checks_use():
    """The hidden check, the known mistakes and what only they import (torch, Mistake, and the
    correct piece of an earlier exercise, which a release does not hold) go; the rest stays."""
    text, kept = trim_check_module(TRIMMED)
    assert kept == ["test_shown"]
    tree = ast.parse(text)
    names = {n.name if not isinstance(n, (ast.Import, ast.ImportFrom, ast.Assign))
             else ast.unparse(n) for n in tree.body if not isinstance(n, ast.Expr)}
    assert names == {"import pytest", "from grader.judge import call, same", "test_shown",
                     "pytestmark = pytest.mark.exercise('ex98')"}, names


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


def _blobs_of(path: Path, data_seen: list | None = None) -> list[bytes]:
    """A file's bytes; for Python, every str/bytes constant and each module's constants joined;
    for the recorded answers, every string inside them (and, into `data_seen`, the data)."""
    data = path.read_bytes()
    blobs = [data]
    if path.suffix == ".py":
        tree = ast.parse(data)
        consts = [n.value if isinstance(n.value, bytes) else n.value.encode()
                  for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes))]
        blobs += consts + [b"".join(consts)]
        for node in ast.walk(tree):  # a dict written out is data too
            if isinstance(node, ast.Dict) and data_seen is not None:
                try:
                    data_seen.append(ast.literal_eval(node))
                except ValueError:
                    pass
    out = []
    for blob in blobs:
        for decoded in _decoded(blob):
            out.append(decoded)
            try:
                import grader.sandbox.wire as wire

                value = wire.decode(decoded)
            except Exception:
                continue
            if data_seen is not None:
                data_seen.append(value)
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


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


def given_text(course) -> list[str]:
    """What the course gives students on purpose: the stubs' text, course.toml and every hint
    level (the last one, the fixes, states each known mistake's fix)."""
    from grader.student.hints import ladder

    paths = sorted(course.exercises_dir.glob("*.py")) + [course.root / "course.toml"]
    return [_squash(p.read_text(encoding="utf-8")) for p in paths] + \
        [_squash(level.zh + level.en) for ex in course.exercises for level in ladder(ex)]


def solution_lines(course) -> dict[str, str]:
    """Each line of a solution body, white space removed, long enough (24) to be an answer and
    not given by the course: the line -> where it is from."""
    given = given_text(course)
    return {_squash(line): where for where, lines in solution_bodies(course) for line in lines
            if len(_squash(line)) >= 24 and not any(_squash(line) in text for text in given)}


def hand_values(course) -> dict[str, object]:
    """The values solutions/ gives the constants a stub leaves NotImplemented (not prose)."""
    found = {}
    for ex in course.exercises:
        stub = ast.parse((course.exercises_dir / ex.file).read_text(encoding="utf-8"))
        asked = {t.id for n in stub.body if isinstance(n, ast.Assign) and isinstance(n.value, ast.Name)
                 and n.value.id == "NotImplemented" for t in n.targets}
        for node in ast.parse((course.solutions_dir / ex.file).read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) in asked:
                value = ast.literal_eval(node.value)
                if not isinstance(value, str):
                    found[node.targets[0].id] = value
    return found


def hand_written(text: str, values: dict) -> list[str]:
    """The hand answers written in a text: an int as digits (with , _ or no separators), a
    decimal within 0.005 of a hand float."""
    found = []
    for name, value in values.items():
        if isinstance(value, int) and re.search("|".join(re.escape(f) for f in (str(value), f"{value:,}", f"{value:_}")), text):
            found.append(name)
        if isinstance(value, float) and any(abs(float(t) - value) <= 0.005 for t in re.findall(r"\d+\.\d{2,}", text)):
            found.append(name)
    return found


def hand_in_data(value, values: dict) -> list[str]:
    """The hand answers in decoded data: an int or a float as above, or a dict with all the
    entries of a hand dict but one (lists read as tuples)."""
    def plain(v):
        return tuple(plain(x) for x in v) if isinstance(v, (list, tuple)) else v

    found, stack = [], [value]
    while stack:
        v = stack.pop()
        for name, want in values.items():
            if isinstance(want, dict) and isinstance(v, dict):
                if sum(1 for k, w in want.items() if k in v and plain(v[k]) == plain(w)) >= len(want) - 1:
                    found.append(name)
            elif type(want) is int and type(v) is int and v == want:
                found.append(name)
            elif type(want) is float and type(v) in (int, float) and abs(v - want) <= 0.005:
                found.append(name)
        if isinstance(v, dict):
            stack += list(v.values())
        elif isinstance(v, (list, tuple)):
            stack += list(v)
    return found


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
    lines = solution_lines(course)
    values = hand_values(course)
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
        data: list = []
        for blob in _blobs_of(path, data):
            found += [f"{rel}: bytecode of {w}" for w, b in codes.items() if b in blob]
            raw = blob.decode("utf-8", "replace")
            text = _norm(raw)
            found += [f"{rel}: {where}" for where, body in bodies if "\n" + "\n".join(body) + "\n" in text]
            flat = _squash(raw)
            found += [f"{rel}: a line of {where}" for line, where in lines.items() if line in flat]
            found += [f"{rel}: hand answer {name}" for name in hand_written(raw, values)]
        found += [f"{rel}: hand answer {name} in data" for value in data for name in hand_in_data(value, values)]
    return sorted(set(found))


def test_no_solution_source(built, course):
    """No solution body, no line of one the course does not give, and no hand answer in the
    release, as text, in a decoded or decompressed blob, in the recorded answers, or as
    bytecode; the build's own search agrees: its last one, run on the finished release (the
    recorded answers in it), found nothing, and every file of the finished release was in one
    of its searches (the last, once the answers were recorded, searched what the recording wrote)."""
    release = built["release"]
    bodies = solution_bodies(course)
    assert len(bodies) >= len(course.exercises)
    assert hunt(course, release) == []
    *earlier, (root, recorded, leaks, files) = built["searches"]
    assert (root, recorded, leaks) == (release.resolve(), True, [])
    assert files == {"grader/answers.bin"}
    assert earlier and all(leaks == [] for _, _, leaks, _ in earlier)
    searched = set().union(*(files for *_, files in built["searches"]))
    assert searched == built["files"]


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


OLD_EX08_PROBE = '''

def pairs_from_batch(mod, data, block_size, batch_size, seed):
    g = torch.Generator().manual_seed(seed)
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=g)  # (B,)
    x = torch.stack([data[i : i + block_size] for i in ix])  # (B, T)
    y = torch.stack([data[i + 1 : i + block_size + 1] for i in ix])  # (B, T)
    return [mod.context_target_pairs(x[b], y[b]) for b in range(batch_size)]
'''


def test_one_line_of_a_solution_or_a_hand_answer_is_found(release, course, tmp_path):
    """A probe that builds a "reference-style batch" with get_batch's own stack lines (what
    the release's ex08 probes did), and the hand answers written out or inside data, are
    found by both searches; the course's own hints (the fixes written into the release's
    hints.toml included), course.toml and stubs are not."""
    import grader.sandbox.wire as wire

    values = hand_values(course)
    assert set(values) == {"ANSWER_PARAMS", "ANSWER_FP16_BYTES", "HAND_NLL_LABEL_A", "SHAPE_ANSWERS"}
    planted = tmp_path / "planted"
    (planted / "ex08").mkdir(parents=True)
    probe = (release / "grader" / "per_exercise" / "ex08" / "probes.py").read_text(encoding="utf-8")
    (planted / "ex08" / "probes.py").write_text(probe + OLD_EX08_PROBE, encoding="utf-8")
    (planted / "notes.md").write_text(f"ANSWER_PARAMS is {values['ANSWER_PARAMS']:,}; the NLL is "
                                      f"{values['HAND_NLL_LABEL_A']:.2f}\n", encoding="utf-8")
    (planted / "shapes.py").write_text(f"SHAPES = {dict(values['SHAPE_ANSWERS'])!r}\n", encoding="utf-8")
    (planted / "data.bin").write_bytes(zlib.compress(wire.encode({"x": [values["ANSWER_FP16_BYTES"]]})))
    hunted, searched = hunt(course, planted), find_solution_leaks(course, planted)
    for found in (hunted, searched):
        text = "\n".join(found)
        assert "ex08/probes.py" in text and "ex08_get_batch.py:get_batch" in text, found
        for name, where in (("ANSWER_PARAMS", "notes.md"), ("HAND_NLL_LABEL_A", "notes.md"),
                            ("SHAPE_ANSWERS", "shapes.py"), ("ANSWER_FP16_BYTES", "data.bin")):
            assert any(where in leak and name in leak for leak in found), (name, found)
    clean = tmp_path / "clean"
    shutil.copytree(release / "grader" / "per_exercise", clean / "per_exercise")
    assert any("[fixes]" in p.read_text(encoding="utf-8") for p in (clean / "per_exercise").glob("*/hints.toml"))
    shutil.copy2(course.root / "course.toml", clean / "course.toml")
    assert hunt(course, clean) == [] and find_solution_leaks(course, clean) == []


@pytest.fixture(scope="module")
def leaky_kit(course, tmp_path_factory) -> Path:
    """A copy of the kit whose ex08 probes carry get_batch's stack lines again."""
    kit = tmp_path_factory.mktemp("leaky") / "kit"
    for name in ("grader", "exercises", "solutions", "datasets"):
        shutil.copytree(course.root / name, kit / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("course.toml", "pyproject.toml"):
        shutil.copy2(course.root / name, kit / name)
    probe = kit / "grader" / "per_exercise" / "ex08" / "probes.py"
    probe.write_text(probe.read_text(encoding="utf-8") + OLD_EX08_PROBE, encoding="utf-8")
    return kit


def test_grade_release_refuses_a_kit_whose_probe_holds_a_solution_line(leaky_kit, tmp_path):
    """`grade release` itself stops (before recording anything) and leaves no release."""
    out = tmp_path / "release"
    proc = grade("--course", str(leaky_kit / "course.toml"), "release", str(out), cwd=leaky_kit,
                 env={"GRADE_LANG": "en"})
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "grader/per_exercise/ex08/probes.py contains a line of solutions/ex08_get_batch.py:get_batch" in proc.stderr, proc.stderr
    assert "recording" not in proc.stdout and not out.exists()


HAND_CHECKS = {("ex02", "test_hand_nll_label_a"), ("ex03", "test_answer_params"), ("ex05", "test_shape_answers")}


@pytest.fixture(scope="module")
def wrong_run(release, course, tmp_path_factory) -> dict:
    """One `grade all` in the release, its report written as json and as text, of a student's
    exercises/ folder (graded from beside it, as a student does) that is the reference but for
    two unrelated faults: ex01's make_windows drops the last window, and three hand answers are
    wrong (ANSWER_PARAMS counted tied, HAND_NLL_LABEL_A off by 0.01, SHAPE_ANSWERS' hidden width
    and n_valid)."""
    values = hand_values(course)
    folder = tmp_path_factory.mktemp("wrong")
    submission = folder / "exercises"
    shutil.copytree(course.solutions_dir, submission)
    path = submission / "ex01_windows.py"
    source = path.read_text(encoding="utf-8")
    path.write_text(source + "\n\n_right = make_windows\n\n"
                    "def make_windows(tokens, block_size, stride=1):\n"
                    "    return _right(tokens, block_size, stride)[:-1]\n", encoding="utf-8")
    edits = {"ex03_param_budget.py": (f"ANSWER_PARAMS = {values['ANSWER_PARAMS']:_}",
                                      f"ANSWER_PARAMS = {values['ANSWER_PARAMS'] // 2:_}"),
             "ex02_nll.py": (f"HAND_NLL_LABEL_A = {values['HAND_NLL_LABEL_A']}",
                             f"HAND_NLL_LABEL_A = {values['HAND_NLL_LABEL_A'] + 0.01:.4f}")}
    for name, (old, new) in edits.items():
        text = (submission / name).read_text(encoding="utf-8")
        assert old in text, (name, old)
        (submission / name).write_text(text.replace(old, new), encoding="utf-8")
    shapes = dict(values["SHAPE_ANSWERS"], hidden=(2, 4, 9), n_valid=values["SHAPE_ANSWERS"]["n_valid"] + 1)
    with open(submission / "ex05_tinygpt_loss.py", "a", encoding="utf-8") as f:
        f.write(f"\n\nSHAPE_ANSWERS = {shapes!r}\n")
    json_out, text_out = folder / "report.json", folder / "report.txt"
    proc = run_grade(release, "all", "--format", "json", "--out", str(json_out), "--format", "text", "--out", str(text_out),
                     cwd=folder)
    assert json_out.is_file() and text_out.is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return {"proc": proc, "report": json.loads(json_out.read_text(encoding="utf-8")),
            "text": text_out.read_text(encoding="utf-8"), "values": values}


def test_the_release_grades_hand_answers_it_does_not_hold(wrong_run):
    """Wrong hand answers fail in the release, the known mistake is still named, and the report
    shows none of the right values; right ones pass (a correct submission scores everything:
    test_correct_submission_passes), and the other checks of their exercises are not charged
    (test_wrong_submission_fails_and_is_diagnosed)."""
    proc, report, values = wrong_run["proc"], wrong_run["report"], wrong_run["values"]
    assert proc.returncode == 1, proc.stderr[-3000:]
    checks = {(e["id"], c["name"]): c for e in report["exercises"] for c in e["checks"]}
    for key in sorted(HAND_CHECKS):
        assert checks[key]["score"] == 0, checks[key]
    assert checks[("ex03", "test_answer_params")]["diagnosis"] == "tied_untied_swapped"
    assert checks[("ex03", "test_answer_fp16_bytes")]["score"] > 0  # right, though sealed
    assert checks[("ex05", "test_trace_shapes_course_setting")]["score"] > 0
    text = wrong_run["text"]
    assert "The right value is not shown" in text, text[-3000:]
    assert hand_written(text + proc.stdout + proc.stderr, values) == [], text[-3000:]


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


def test_wrong_submission_fails_and_is_diagnosed(wrong_run):
    """ex01's make_windows drops the last window: the release names the mistake from the
    recorded answers (its code is not in the release), and charges nothing else for it: every
    other exercise scores full marks, but for the hand answers written wrong on purpose (only
    their own checks lose points)."""
    proc, report = wrong_run["proc"], wrong_run["report"]
    assert proc.returncode == 1, proc.stderr
    ex01 = next(e for e in report["exercises"] if e["id"] == "ex01")
    assert ex01["score"] < ex01["max_score"]
    assert any(c["diagnosis"] == "off_by_one_drop_last" for c in ex01["checks"]), ex01
    others = [e for e in report["exercises"] if e["id"] != "ex01"]
    hand_exercises = {ex_id for ex_id, _ in HAND_CHECKS}
    assert all(e["score"] == e["max_score"] for e in others if e["id"] not in hand_exercises)
    lost = {(e["id"], c["name"]) for e in others for c in e["checks"] if c["score"] < c["max_score"]}
    assert lost == HAND_CHECKS, lost


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
    (and say so). A wrong ex08 now costs ex11 too; a missing ex08 is named, not a traceback.
    Graded as a student grades their own folder (`grade ex11` beside exercises/: the practice
    tier); test_correct_submission_passes grades own files in the official tier's sandbox."""
    student = tmp_path / "own"
    submission = student / "exercises"
    submission.mkdir(parents=True)
    for name in ("ex08_get_batch.py", "ex09_bigram.py", "ex11_estimate_loss.py"):
        shutil.copy2(course.solutions_dir / name, submission / name)
    proc = run_grade(release, "ex11", cwd=student)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "graded here with your own ex08, ex09 and ex11 files" in proc.stdout
    wrong = (course.solutions_dir / "ex08_get_batch.py").read_text(encoding="utf-8")
    (submission / "ex08_get_batch.py").write_text(
        wrong + "\n\n_right = get_batch\n\n\ndef get_batch(data, block_size, batch_size, generator=None):\n"
        "    x, y = _right(data, block_size, batch_size, generator=generator)\n    return x, x\n", encoding="utf-8")
    proc = run_grade(release, "ex11", cwd=student)
    assert proc.returncode == 1, proc.stdout[-3000:]
    (submission / "ex08_get_batch.py").unlink()
    proc = run_grade(release, "ex11", cwd=student)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    assert "ex08_get_batch.py is not in the submission folder" in proc.stdout, proc.stdout
