"""`grade release OUT`: the student kit, built from the instructor's kit.

What goes in: the stubs (`exercises/`), the grader package, the data set loader
(`datasets/catalog.toml` and its README), `course.toml`, `pyproject.toml`, a README for
students, and `grader/answers.bin`: the reference's answers to the public checks,
recorded now (see `grader.judge.recorded`).

What stays out: `solutions/`; the known mistakes' code (`grader/mistakes/exNN.py`: the
release knows their messages from the recorded answers); the hidden checks (each check
module is trimmed to its public checks, and to the helpers and constants those use); the
kit's own tests and development files. A probe module that holds a correct piece of an
earlier exercise (`grader/pieces/`: later exercises' probes use them so that a bug
is charged once) is shipped sealed: its source compressed inside the module, so that it
does not read as a solution.

The built release is scanned for the body of every function in `solutions/`; any match
stops the build. `find_solution_leaks` is the same scan, for the tests.
"""

from __future__ import annotations

import ast
import base64
import re
import shutil
import zlib
from pathlib import Path

import click

from grader.model.course import Course

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
    if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return set()


def _used_names(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


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
    public-only run shows them), and only the helpers and constants they use.

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
            kept.append(node)  # imports, pytestmark, docstring, other statements
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


# --------------------------------------------------------------------------- finding solution source


def _body_without_docstring(func) -> list[ast.stmt]:
    body = list(func.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    return body


def _is_stub_body(body: list[ast.stmt]) -> bool:
    return not body or all(isinstance(s, (ast.Raise, ast.Pass)) or
                           (isinstance(s, ast.Expr) and isinstance(s.value, ast.Call) and
                            isinstance(s.value.func, ast.Attribute) and s.value.func.attr == "__init__")
                           for s in body)


def _functions(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _norm_lines(text: str) -> list[str]:
    """Code lines without indentation, comments or blank lines (for a text search)."""
    out = []
    for line in text.splitlines():
        line = re.sub(r"\s+#.*$", "", line).strip()
        if line and not line.startswith("#"):
            out.append(re.sub(r"\s+", " ", line))
    return out


def solution_fingerprints(course: Course) -> list[dict]:
    """Every function body in solutions/: where it is, its AST dump, its code lines."""
    found = []
    for path in sorted(course.solutions_dir.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
        for func in _functions(tree):
            body = _body_without_docstring(func)
            if _is_stub_body(body):
                continue
            segment = "\n".join(ast.get_source_segment(source, s, padded=True) or "" for s in body)
            found.append({"where": f"solutions/{path.name}:{func.name}",
                          "dump": "\n".join(ast.dump(s) for s in body),
                          "lines": _norm_lines(segment)})
    return found


TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg", ".ipynb", ".json", ".rst", ".in", ".sh"}


def find_solution_leaks(course: Course, root: Path, fingerprints: list[dict] | None = None) -> list[str]:
    """Places in `root` that hold a solution function's body (as code or as text)."""
    fingerprints = solution_fingerprints(course) if fingerprints is None else fingerprints
    by_dump = {}
    for fp in fingerprints:
        by_dump.setdefault(fp["dump"], fp["where"])
    leaks = []
    for path in sorted(Path(root).rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(root)
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".py":
            try:
                tree = ast.parse(text)
            except SyntaxError:
                tree = None
            for func in _functions(tree) if tree else ():
                body = _body_without_docstring(func)
                if _is_stub_body(body):
                    continue
                dump = "\n".join(ast.dump(s) for s in body)
                if dump in by_dump:
                    leaks.append(f"{rel}:{func.name} has the body of {by_dump[dump]}")
        haystack = "\n" + "\n".join(_norm_lines(text)) + "\n"
        for fp in fingerprints:
            needle = "\n" + "\n".join(fp["lines"]) + "\n"
            if fp["lines"] and needle in haystack:
                leaks.append(f"{rel} contains the text of {fp['where']}")
    return sorted(set(leaks))


SEALED_TEMPLATE = '''"""{name} (sealed).

学生发行版：这个模块含有前面练习的正确实现（后面的练习评分时用），源码压缩存放，
以免读起来就是答案。/ Student release: this module holds correct pieces of earlier
exercises (used when later exercises are graded); its source is stored compressed so
that it does not read as a solution.
"""

import base64 as _base64
import zlib as _zlib

exec(compile(_zlib.decompress(_base64.b85decode(_SOURCE)).decode("utf-8"), __file__, "exec"))
'''


def seal_module(path: Path) -> None:
    """Rewrite a module so that its source is kept compressed inside it."""
    source = path.read_text(encoding="utf-8")
    blob = base64.b85encode(zlib.compress(source.encode("utf-8"), 9)).decode("ascii")
    text = SEALED_TEMPLATE.format(name=f"grader.probes.{path.stem}")
    head, _, tail = text.partition("import base64 as _base64")
    chunks = "\n".join(f"    {blob[i:i + 96]!r}" for i in range(0, len(blob), 96))
    path.write_text(head + f"_SOURCE = (\n{chunks}\n)\n\n" + "import base64 as _base64" + tail, encoding="utf-8")


# --------------------------------------------------------------------------- building

STUDENT_README = """# {title_zh}

{title_en}

## 安装 / Install

```bash
python -m venv .venv && source .venv/bin/activate
pip install torch==2.13.0          # 先装 CPU 版 torch / the CPU build of torch first
pip install -e .                   # 然后装本工具包 / then this kit
grade data                         # 下载或指定 tiny Shakespeare / get tiny Shakespeare (bigram exercises)
```

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
ex04 的 `WHY_PARALLEL` 是书面回答，由老师人工批改，这里只显示“待人工评分”。
The checks here use the public examples only, against answers recorded from the
reference (`grader/answers.bin`); no network is needed. **The official grade also runs
hidden tests** (random inputs, edge cases), so passing everything here is not a full
score yet. ex04's `WHY_PARALLEL` is a written answer graded by hand; here it shows as
"awaiting manual grading".

## 目录 / What is here

| | |
|---|---|
| `exercises/` | 你要填写的文件 / the files you fill in |
| `course.toml` | 练习列表、分值与提示 / the exercises, points and hints |
| `grader/` | 评分工具 / the grader |
| `datasets/` | 数据集目录与说明 / the data set catalog and its README |
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


def _copy_grader(src: Path, dst: Path, course: Course) -> dict[str, list[str]]:
    """The grader package without mistakes' code and hidden checks; the checks kept."""
    kept: dict[str, list[str]] = {}
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if "__pycache__" in rel.parts or path.is_dir() or path.suffix in (".pyc", ".pyo"):
            continue
        if rel.parts[0] == "mistakes" and rel.name != "__init__.py":
            continue
        if rel.name == "answers.bin":
            continue
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel.parts[0] == "checks" and rel.name.startswith("test_") and rel.suffix == ".py":
            exercise = next((e for e in course.exercises if e.check_module == rel.name), None)
            if exercise is None:
                continue  # a check module of an exercise not in the course
            text, names = trim_check_module(path.read_text(encoding="utf-8"))
            target.write_text(text, encoding="utf-8")
            kept[exercise.id] = names
            continue
        shutil.copy2(path, target)
    return kept


def build_release(course: Course, out: Path, *, force: bool = False, echo=click.echo) -> Path:
    """Build the student release in `out`; returns it. Raises click exceptions on misuse."""
    from grader.build.record import record_answers, save_answers
    from grader.judge.recorded import ANSWERS_FILE

    if not course.solutions_dir.is_dir():
        raise click.UsageError("这个工具包没有 solutions/，不能生成发行版 / this kit has no solutions/: "
                               "a release is built from the instructor's kit")
    out = fresh_output_folder(course, out, force=force)

    echo("录制公开检查的参考答案 / recording the reference's answers to the public checks …")
    answers = record_answers(course, [e.id for e in course.exercises], public_only=True)

    for ex in course.exercises:
        (out / "exercises").mkdir(exist_ok=True)
        shutil.copy2(course.exercises_dir / ex.file, out / "exercises" / ex.file)
    kept = _copy_grader(course.root / "grader", out / "grader", course)
    for ex_id, names in kept.items():
        recorded = answers["exercises"].get(ex_id, {}).get("checks", [])
        missing = sorted(set(recorded) - set(names))
        if missing:
            raise click.ClickException(f"{ex_id}: trimmed check module lost public checks {missing}")
    save_answers(answers, out / "grader" / ANSWERS_FILE)
    shutil.copy2(course.root / "course.toml", out / "course.toml")
    (out / "datasets").mkdir()
    for name in ("catalog.toml", "README.md"):
        if (course.root / "datasets" / name).is_file():
            shutil.copy2(course.root / "datasets" / name, out / "datasets" / name)
    # pyproject.toml already ships grader/answers.bin as package data
    shutil.copy2(course.root / "pyproject.toml", out / "pyproject.toml")
    (out / "README.md").write_text(STUDENT_README.format(title_zh=course.title.zh, title_en=course.title.en),
                                   encoding="utf-8")
    (out / ".gitignore").write_text("__pycache__/\n*.egg-info/\n.venv/\n.grade-state.json\n", encoding="utf-8")

    fingerprints = solution_fingerprints(course)
    leaks = find_solution_leaks(course, out, fingerprints)
    sealed = sorted({leak.split(":")[0].split(" ")[0] for leak in leaks
                     if leak.startswith(("grader/probes/", "grader/pieces/"))})
    for rel in sealed:
        seal_module(out / rel)
        echo(f"  封存 / sealed {rel} (它含有前面练习的正确实现 / it holds correct pieces of earlier exercises)")
    leaks = find_solution_leaks(course, out, fingerprints)
    if leaks:
        shutil.rmtree(out)
        raise click.ClickException("发行版里有参考答案的源码 / the release holds solution source:\n  " + "\n  ".join(leaks))
    n_checks = sum(len(v) for v in kept.values())
    echo(f"学生发行版已写入 / student release written to {out} "
         f"({len(course.exercises)} 个练习 / exercises, {n_checks} 项公开检查 / public checks)")
    return out


