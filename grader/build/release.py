"""`grade release OUT`: the student kit, built from the instructor's kit.

What goes in: the stubs (`exercises/`), the grader package, the data set loader
(`datasets/catalog.toml` and its README), `course.toml`, a `pyproject.toml` that builds
offline, a README for students, and `grader/answers.bin`: the reference's answers to the
public checks, recorded now (see `grader.judge.recorded`).

What stays out, in every form (plain, compressed, encoded, bytecode): `solutions/`; the
known mistakes' code (`grader/mistakes/exNN.py`: the release knows their messages from the
recorded answers); the hidden checks (each check module is trimmed to its public checks,
and to the helpers and constants those use); the correct pieces of earlier exercises
(`grader/pieces/get_batch.py`, `bigram.py`, `estimate_loss.py`: the answers to ex08, ex09
and ex11). Without them the release grades ex10-ex12 with the student's own earlier files
(`grader.pieces.OWN_FILES`), and the report says so; the official grade uses the correct
pieces and also runs the hidden checks.

The release builds with flit_core, copied into `_build/` (its licence beside it) and named
as an in-tree backend, so `pip install --no-index .` needs nothing from an index.

Every file of the built release is searched for every function body of `solutions/` and
each of its answer lines, and for the hand answers (ANSWER_PARAMS and the like), decoded
from any blob they could hide in (`grader.build.leaks`); any match stops the build, once
before the answers are recorded and once after. The recorded answers hold the hand answers,
and every output equal to one, sealed (`grader.build.hand_answers`, `grader.judge.sealed`):
the release tells right from wrong without holding them.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
from pathlib import Path

import click

from grader.build.leaks import find_solution_leaks
from grader.model.course import Course

__all__ = ["build_release", "find_solution_leaks", "trim_check_module", "visible_checks", "fresh_output_folder"]

# --------------------------------------------------------------------------- trimming checks


def _decorator_names(node) -> set[str]:
    """`@pytest.mark.public` -> {"public"}; `@pytest.mark.points(2)` -> {"points"}."""
    names = set()
    for dec in getattr(node, "decorator_list", []):
        target = dec.func if isinstance(dec, ast.Call) else dec
        if isinstance(target, ast.Attribute):
            names.add(target.attr)
        elif isinstance(target, ast.Name):
            names.add(target.id)
    return names


def _module_marks(tree: ast.Module) -> set[str]:
    """Mark names in the module's `pytestmark` (a mark, or a list of marks)."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            values = node.value.elts if isinstance(node.value, (ast.List, ast.Tuple)) else [node.value]
            for value in values:
                target = value.func if isinstance(value, ast.Call) else value
                if isinstance(target, ast.Attribute):
                    names.add(target.attr)
    return names


def _defined_names(node) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "module", None) != "__future__":
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _used_names(node) -> set[str]:
    """The names `node` reads, a check's arguments included (pytest finds a fixture by them)."""
    return {n.id if isinstance(n, ast.Name) else n.arg for n in ast.walk(node) if isinstance(n, (ast.Name, ast.arg))}


def _is_test(node) -> bool:
    return (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")) or \
        (isinstance(node, ast.ClassDef) and node.name.startswith("Test"))


def visible_checks(source: str) -> tuple[list[str], list[str]]:
    """The names of a check module's (public, manual) checks."""
    tree = ast.parse(source)
    everything_public = "public" in _module_marks(tree)
    public, manual = [], []
    for node in tree.body:
        if _is_test(node):
            marks = _decorator_names(node)
            if "public" in marks or everything_public:
                public.append(node.name)
            elif "manual" in marks:
                manual.append(node.name)
    return public, manual


def trim_check_module(source: str) -> tuple[str, list[str]]:
    """The module with only its public checks (and manual ones, marked public so that a
    public-only run shows them), and only the helpers, constants and imports they use: the
    known mistakes go, and with them what only they import (the correct pieces of earlier
    exercises, which a release does not hold).

    Returns the new source and the names of the checks kept. Lines are cut from the
    original text, so the comments and layout of what is kept stay as written.
    """
    tree = ast.parse(source)
    public, manual = visible_checks(source)
    keep_tests = set(public) | set(manual)
    lines = source.splitlines(keepends=True)
    body = tree.body
    kept: list[ast.stmt] = []
    candidates: list[ast.stmt] = []  # definitions kept only if something kept uses them
    for node in body:
        if _is_test(node):
            if node.name in keep_tests:
                kept.append(node)
        elif _defined_names(node) and "pytestmark" not in _defined_names(node):
            candidates.append(node)
        else:
            kept.append(node)  # pytestmark, the docstring, other statements
    used = set().union(*(_used_names(n) for n in kept)) if kept else set()
    changed = True
    while changed:
        changed = False
        for node in list(candidates):
            if _defined_names(node) & used:
                kept.append(node)
                candidates.remove(node)
                used |= _used_names(node)
                changed = True
    dropped = [n for n in body if n not in kept]

    def first_line(node) -> int:
        start = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        while start > 1 and lines[start - 2].lstrip().startswith("#"):
            start -= 1  # comments directly above belong to the node
        return start

    cut = set()
    for node in dropped:
        cut.update(range(first_line(node), node.end_lineno + 1))
    add_public = {n.lineno: n for n in kept if _is_test(n) and n.name in manual}
    out = []
    for number, line in enumerate(lines, start=1):
        if number in cut:
            continue
        for node in add_public.values():
            if number == first_line(node):
                indent = re.match(r"\s*", line).group(0)
                out.append(f"{indent}@pytest.mark.public  # 发行版：人工批改项也显示 / release: the manual check is shown\n")
        out.append(line)
    text = re.sub(r"\n{4,}", "\n\n\n", "".join(out)).rstrip("\n") + "\n"
    note = ("# 学生发行版：只含公开检查；正式评分还会运行隐藏测试。\n"
            "# Student release: public checks only; the official grade also runs hidden tests.\n")
    return note + text, [n.name for n in tree.body if _is_test(n) and n.name in keep_tests]


# --------------------------------------------------------------------------- building

STUDENT_README = """# {title_zh}

{title_en}

## 安装 / Install

```bash
python -m venv .venv && source .venv/bin/activate
pip install torch==2.13.0          # 先装 torch 2.13：课文的数字由它算出 / first: the torch the lesson's numbers come from
pip install -e .                   # 然后装本工具包（不含参考答案）/ then this kit (no solutions in it)
grade data                         # 下载或指定 tiny Shakespeare / get tiny Shakespeare (bigram exercises)
```

工具包本身离线就能装（依赖装好之后 `pip install --no-index -e .` 不需要联网）。
The kit itself installs offline: once its dependencies are there, `pip install --no-index -e .`
needs no network.

## 做练习 / Doing the exercises

在 `exercises/` 里填写每个练习文件（文件顶部写着对应的课文章节），然后：
Fill in each file in `exercises/` (its top says which section of the course it is from), then:

```bash
grade list          # 所有练习、分值与状态 / every exercise, its points and status
grade ex03          # 检查一个练习 / check one exercise
grade all           # 检查全部 / check them all
grade hint ex03     # 下一级提示 / the next hint
grade watch         # 保存即评分 / re-grade on every save
```

每项检查一行：通过或失败、分值，失败时给出期望与实际（先比形状）。如果你的输出和某个
常见错误一致，会指出是哪一个错误，以及该重读课文的哪一节。
Each check is one line: pass or fail and its points; a failure shows what was expected
against what came back (shapes first), and names the known mistake your output matches
and the section to reread.

## 关于分数 / About the score

这里的检查只用公开的例子，参考答案是事先录制好的（`grader/answers.bin`），不需要联网。
**正式评分还会运行隐藏测试**（随机输入、边界情况），所以这里全部通过不等于满分。
ex10–ex12 建立在前面的练习上：这里用的是**你自己的** ex08、ex09、ex11 文件（前面的错误在这里
会再出现一次）；正式评分换成正确的实现，前面的错误不重复扣分。
ex04 的 `WHY_PARALLEL` 是书面回答，由老师人工批改，这里只显示“待人工评分”。
手算的答案（ANSWER_PARAMS 等）这个工具包自己也不知道：它只存了答案的摘要，所以这里只说对不对，
不说偏大还是偏小。
The checks here use the public examples only, against answers recorded from the
reference (`grader/answers.bin`); no network is needed. The hand-computed answers
(ANSWER_PARAMS and the like) are not in this kit, only a digest of each: here they are
right or not right, never "too large" or "too small". **The official grade also runs
hidden tests** (random inputs, edge cases), so passing everything here is not a full
score yet. ex10–ex12 build on earlier exercises: here they run with **your own** ex08,
ex09 and ex11 files (an earlier bug shows again there); the official grade swaps in
correct ones, so an earlier bug is charged once. ex04's `WHY_PARALLEL` is a written
answer graded by hand; here it shows as "awaiting manual grading".

## 目录 / What is here

| | |
|---|---|
| `exercises/` | 你要填写的文件 / the files you fill in |
| `course.toml` | 练习列表、分值与提示 / the exercises, points and hints |
| `grader/` | 评分工具 / the grader |
| `datasets/` | 数据集目录与说明 / the data set catalog and its README |
| `_build/` | 打包工具 flit_core（BSD 许可）/ the packaging backend flit_core (BSD licence) |
"""

# The pieces' modules (the answers to ex08, ex09, ex11) never ship; their package's
# __init__ does, switched to the student's own files.
PIECES_OWN_FILES = ("OWN_FILES = False\n", "OWN_FILES = True  # 学生发行版 / the student release\n")
# What a wheel of the release carries inside the package (grader.model.paths.kit_file).
KIT_FILES = ("course.toml", "exercises", "datasets/catalog.toml", "datasets/README.md")

RELEASE_BUILD_SYSTEM = """[build-system]
# flit_core, copied into _build/ by `grade release`: pip builds this kit with nothing to
# download, so `pip install --no-index .` works offline (once the dependencies are installed).
requires = []
build-backend = "flit_core.buildapi"
backend-path = ["_build"]

"""


def fresh_output_folder(course: Course, out: Path, *, force: bool) -> Path:
    """An empty folder to build into: never the kit itself, never a full folder without --force."""
    out = Path(out).resolve()
    root = course.root.resolve()
    if out == root or out in root.parents:
        raise click.UsageError(f"不能写进工具包自己 / will not write into the kit itself: {out}")
    if out.exists() and any(out.iterdir()):
        if not force:
            raise click.UsageError(f"{out} 不是空目录（加 --force 覆盖）/ is not empty (use --force to replace it)")
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def _own_files_pieces(source: str) -> str:
    """grader/pieces/__init__.py as the release ships it: OWN_FILES switched on."""
    old, new = PIECES_OWN_FILES
    if source.count(old) != 1:
        raise click.ClickException("grader/pieces/__init__.py: cannot switch it to the student's own files "
                                   f"(expected one line {old.strip()!r})")
    return source.replace(old, new)


def _copy_grader(src: Path, dst: Path, course: Course) -> dict[str, list[str]]:
    """The grader package without the known mistakes, the hidden checks and the pieces: each
    exercise's checks trimmed to its public ones, its hints with the fixes level written in."""
    kept: dict[str, list[str]] = {}
    ids = {ex.id for ex in course.exercises}
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if "__pycache__" in rel.parts or path.is_dir() or path.is_symlink() or path.suffix in (".pyc", ".pyo"):
            continue
        if rel.parts[0] == "pieces" and rel.name != "__init__.py":
            continue
        if rel.name == "answers.bin" or rel.parts[0] == "_kit":
            continue
        if rel.parts[0] == "per_exercise" and len(rel.parts) > 2 and rel.parts[1] not in ids:
            continue  # an exercise not in the course
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel.parts[0] == "per_exercise" and len(rel.parts) == 3 and rel.name == "checks.py":
            text, names = trim_check_module(path.read_text(encoding="utf-8"))
            target.write_text(text, encoding="utf-8")
            kept[rel.parts[1]] = names
            continue
        if rel.parts[0] == "per_exercise" and len(rel.parts) == 3 and rel.name == "hints.toml":
            target.write_text(_hints_with_fixes(path.read_text(encoding="utf-8"), course.exercise(rel.parts[1])),
                              encoding="utf-8")
            continue
        if rel.parts == ("pieces", "__init__.py"):
            target.write_text(_own_files_pieces(path.read_text(encoding="utf-8")), encoding="utf-8")
            continue
        shutil.copy2(path, target)
    return kept


def _hints_with_fixes(text: str, ex) -> str:
    """An exercise's hints.toml as the release ships it: its last level, the fixes, written in
    (the release holds no known mistakes to build it from)."""
    import tomlkit

    from grader.student.hints import ladder

    levels = ladder(ex)
    if len(levels) == len(ex.hints):
        return text
    doc = tomlkit.parse(text)
    fixes = tomlkit.table()
    fixes.add(tomlkit.comment("written by grade release from the known mistakes' fixes"))
    fixes.add("zh", levels[-1].zh)
    fixes.add("en", levels[-1].en)
    doc["fixes"] = fixes
    return tomlkit.dumps(doc)


def release_course_toml(text: str, course: Course) -> str:
    """course.toml as the release ships it: each exercise's points written down (its checks are
    trimmed to the public ones there, so they no longer add up to them)."""
    import tomlkit

    doc = tomlkit.parse(text)
    for table in doc["exercises"]:
        table["points"] = course.exercise(str(table["id"])).points
    return tomlkit.dumps(doc)


def release_pyproject(kit_pyproject: str) -> str:
    """The kit's pyproject.toml for the release: its [project] tables as written, built by
    the vendored flit_core (the kit's setuptools tables and hooks left out), under the student
    distribution's name (`gpt-course-grader`: the instructor's kit is `…-instructor`).

    The text is cut at table headers, not parsed and rewritten, so comments stay.

    >>> import tomllib
    >>> tomllib.loads(release_pyproject('[project]\\nname = "gpt-course-grader-instructor"\\n'))["project"]["name"]
    'gpt-course-grader'
    """
    import tomllib

    from grader.model.paths import STUDENT_DISTRIBUTION

    tomllib.loads(kit_pyproject)  # a broken file stops here, with tomllib's message
    tables = re.split(r"(?m)^(?=\[)", kit_pyproject)
    kept = [t for t in tables if re.match(r"\[project(\.[\w-]+)?\]", t)]
    kept = [re.sub(r'(?m)^name\s*=\s*"[^"\n]*"', f'name = "{STUDENT_DISTRIBUTION}"  # the student release: no solutions',
                   t, count=1) if t.startswith("[project]") else t for t in kept]
    text = RELEASE_BUILD_SYSTEM + "".join(kept).rstrip("\n") + '\n\n[tool.flit.module]\nname = "grader"\n'
    if tomllib.loads(text).get("project", {}).get("name") != STUDENT_DISTRIBUTION:
        raise click.ClickException(f"pyproject.toml: the release could not be named {STUDENT_DISTRIBUTION} "
                                   "(its [project] table has no `name = \"…\"` line)")
    return text


def _vendor_flit_core(out: Path) -> None:
    """flit_core (pure Python, no dependencies, BSD-3-Clause) into out/_build/, with its licence."""
    from importlib import metadata

    spec = importlib.util.find_spec("flit_core")
    if spec is None or not spec.submodule_search_locations:
        raise click.ClickException("flit_core 没有安装：pip install -e '.[instructor]' / flit_core is not installed "
                                   "(the release is built with it): pip install -e '.[instructor]'")
    source = Path(list(spec.submodule_search_locations)[0])
    shutil.copytree(source, out / "_build" / "flit_core",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "tests"))
    # its own licence (the vendored tomli's travels inside the copied tree)
    licence = next((f for f in metadata.distribution("flit_core").files or ()
                    if re.search(r"\.dist-info/(licenses/)?LICENSE$", str(f))), None)
    if licence is not None:
        (out / "_build" / "flit_core-LICENSE").write_text(licence.read_text(encoding="utf-8"), encoding="utf-8")


def _copy_kit_files(release: Path, target: Path) -> None:
    """The release's course files a wheel of it carries inside the package (grader/_kit/)."""
    for rel in KIT_FILES:
        src = release / rel
        if src.is_dir():
            for path in sorted(src.glob("*.py")):
                (target / rel).mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, target / rel / path.name)
        elif src.is_file():
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target / rel)


def _refuse_leaks(course: Course, out: Path, only: list[Path] | None = None) -> None:
    """Stop, and leave no release behind, when any file in `out` (or of `only` there) holds an
    answer (grader.build.leaks)."""
    leaks = find_solution_leaks(course, out, only=only)
    if leaks:
        shutil.rmtree(out)
        raise click.ClickException("发行版里有答案（参考答案的代码或手算的答案）/ the release holds answers "
                                   "(solution code or hand answers):\n  " + "\n  ".join(leaks))


def build_release(course: Course, out: Path, *, force: bool = False, echo=click.echo) -> Path:
    """Build the student release in `out`; returns it. Raises click exceptions on misuse."""
    from grader.build.hand_answers import hand_answers, seal_recorded
    from grader.build.record import record_answers, save_answers
    from grader.judge.recorded import ANSWERS_FILE

    if not course.solutions_dir.is_dir():
        raise click.UsageError("这个工具包没有 solutions/，不能生成发行版 / this kit has no solutions/: "
                               "a release is built from the instructor's kit")
    out = fresh_output_folder(course, out, force=force)
    for ex in course.exercises:
        (out / "exercises").mkdir(exist_ok=True)
        shutil.copy2(course.exercises_dir / ex.file, out / "exercises" / ex.file)
    kept = _copy_grader(course.root / "grader", out / "grader", course)
    (out / "course.toml").write_text(release_course_toml((course.root / "course.toml").read_text(encoding="utf-8"),
                                                         course), encoding="utf-8")
    (out / "datasets").mkdir()
    for name in ("catalog.toml", "README.md"):
        if (course.root / "datasets" / name).is_file():
            shutil.copy2(course.root / "datasets" / name, out / "datasets" / name)
    _copy_kit_files(out, out / "grader" / "_kit")
    (out / "pyproject.toml").write_text(release_pyproject((course.root / "pyproject.toml").read_text(encoding="utf-8")),
                                        encoding="utf-8")
    _vendor_flit_core(out)
    (out / "README.md").write_text(STUDENT_README.format(title_zh=course.title.zh, title_en=course.title.en),
                                   encoding="utf-8")
    (out / ".gitignore").write_text("__pycache__/\n*.egg-info/\n.venv/\n.grade-state.json\n", encoding="utf-8")
    _refuse_leaks(course, out)  # every file so far: a kit that leaks stops before the recording

    echo("录制公开检查的参考答案 / recording the reference's answers to the public checks …")
    answers = record_answers(course, [e.id for e in course.exercises], public_only=True)
    for ex_id, names in kept.items():
        recorded = answers["exercises"].get(ex_id, {}).get("checks", [])
        missing = sorted(set(recorded) - set(names))
        if missing:
            raise click.ClickException(f"{ex_id}: trimmed check module lost public checks {missing}")
    save_answers(seal_recorded(answers, hand_answers(course)), out / "grader" / ANSWERS_FILE)
    # the recorded answers are the one file written since every other was searched
    _refuse_leaks(course, out, only=[Path("grader") / ANSWERS_FILE])
    n_checks = sum(len(v) for v in kept.values())
    echo(f"学生发行版已写入 / student release written to {out} "
         f"({len(course.exercises)} 个练习 / exercises, {n_checks} 项公开检查 / public checks)")
    return out
