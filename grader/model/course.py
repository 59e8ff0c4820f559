"""Read course.toml into frozen dataclasses and validate it.

course.toml is the one place that lists the assignments and exercises, in order. Unknown
keys, missing keys and files that do not exist are errors with a clear message, raised as
`CourseError` (the command line turns it into exit code 2).
"""

from __future__ import annotations

import math
import stat
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path

from grader.model.paths import PACKAGE_DIR, kit_file


class CourseError(Exception):
    """course.toml is missing, malformed, or disagrees with the files."""


@dataclass(frozen=True)
class Text:
    zh: str
    en: str

    def __call__(self, lang: str) -> str:
        return self.en if lang == "en" else self.zh


def section_of(value) -> Text:
    """The course text's section an exercise cites, in both languages.

    course.toml writes it as a zh/en table, `{ zh = "5.2, 5.7 练习 1", en = "section 5.2, 5.7,
    exercise 1" }`; a plain string is the Chinese one, its English made by
    grader.model.messages.section_text (numbers and words translated, quoted headings kept):

    >>> section_of("5.2、5.7 练习 1").en
    'section 5.2, 5.7 exercise 1'
    """
    if isinstance(value, Text):
        return value
    from grader.model.messages import section_text

    return Text(zh=value, en=section_text(value, "en"))


@dataclass(frozen=True)
class Assignment:
    id: str
    title: Text


@dataclass(frozen=True)
class Exercise:
    id: str
    assignment: str
    file: str
    title: Text
    section: Text  # a plain string is taken as the Chinese one (see section_of)
    points: int  # the sum of its checks' points (check_points), unless course.toml says it (a release)
    timeout: float
    hints: tuple[Text, ...]  # the written levels of its hint ladder (its hints.toml); see grader.student.hints
    budget: float = 60.0  # seconds for all of the exercise's checks together (see grader.run.budgets)
    pieces: tuple[str, ...] = ()  # correct pieces of earlier exercises its probes put in place (grader.pieces)
    fixes: Text | None = None  # the fixes level written into a student release's hints.toml (no mistakes there)

    def __post_init__(self):
        object.__setattr__(self, "section", section_of(self.section))

    @property
    def module(self) -> str:
        """The module name of the exercise file (`ex03_param_budget`)."""
        return self.file.removesuffix(".py")

    @property
    def checks_module(self) -> str:
        """The importable name of the exercise's checks (and known mistakes)."""
        return f"grader.per_exercise.{self.id}.checks"


@dataclass(frozen=True)
class Course:
    root: Path
    format_version: int
    title: Text
    data_dir: str | None
    assignments: tuple[Assignment, ...]
    exercises: tuple[Exercise, ...]
    submission_budget: float = 600.0  # seconds for every exercise of one submission together

    def exercise(self, exercise_id: str) -> Exercise:
        for ex in self.exercises:
            if ex.id == exercise_id:
                return ex
        known = ", ".join(e.id for e in self.exercises)
        raise CourseError(f"未知练习 / unknown exercise: {exercise_id!r} (known: {known})")

    def of_assignment(self, assignment_id: str) -> tuple[Exercise, ...]:
        return tuple(e for e in self.exercises if e.assignment == assignment_id)

    @property
    def exercises_dir(self) -> Path:
        return self.root / "exercises"

    @property
    def solutions_dir(self) -> Path:
        return self.root / "solutions"

    @property
    def units_dir(self) -> Path:
        """Where each exercise's folder is: `grader/per_exercise/exNN/` (checks, probes, hints)."""
        return self.grader_dir / "per_exercise"

    def unit(self, exercise_id: str) -> Path:
        """The folder of everything the grader needs about one exercise."""
        return self.units_dir / exercise_id

    @property
    def grader_dir(self) -> Path:
        """The grader package of this course: `root/grader` in a kit's folder, else the installed
        package (a course installed from a wheel travels inside it, see grader.model.paths)."""
        beside = self.root / "grader"
        return beside if (beside / "per_exercise").is_dir() else PACKAGE_DIR


_TOP_KEYS = {"format_version", "course", "data", "limits", "assignments", "exercises"}
_LIMIT_KEYS = {"exercise_budget", "submission_budget"}
DEFAULT_EXERCISE_BUDGET = 60.0
DEFAULT_SUBMISSION_BUDGET = 600.0
_COURSE_KEYS = {"title"}
_DATA_KEYS = {"dir"}
_ASSIGNMENT_KEYS = {"id", "title"}
_EXERCISE_KEYS = {"id", "assignment", "file", "title", "section", "points", "timeout", "budget", "pieces"}
# `points` comes from the checks (a student release, whose checks are trimmed, writes it down)
_EXERCISE_REQUIRED = {"id", "assignment", "file", "title", "section", "timeout"}
SUPPORTED_FORMAT = 1


def _check_keys(table: dict, allowed: set[str], where: str, required: set[str] | None = None) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise CourseError(f"course.toml: {where}: 未知字段 / unknown key(s): {', '.join(unknown)}")
    missing = sorted((required if required is not None else allowed) - set(table))
    if missing:
        raise CourseError(f"course.toml: {where}: 缺少字段 / missing key(s): {', '.join(missing)}")


def _text(value, where: str) -> Text:
    if not isinstance(value, dict):
        raise CourseError(f"course.toml: {where}: 应为 {{ zh = ..., en = ... }} / expected a zh/en table")
    _check_keys(value, {"zh", "en"}, where)
    if not all(isinstance(value[k], str) and value[k].strip() for k in ("zh", "en")):
        raise CourseError(f"course.toml: {where}: zh 与 en 都必须是非空字符串 / zh and en must be non-empty strings")
    return Text(zh=value["zh"], en=value["en"])


def _section(value, where: str) -> Text:
    """A zh/en table, or one non-empty string (the Chinese; see section_of)."""
    if isinstance(value, str) and value.strip():
        return section_of(value)
    return _text(value, f"{where}: section")


def _points(value, where: str) -> int:
    """A positive integer; `true` is not 1 (TOML booleans are Python ints)."""
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise CourseError(f"course.toml: {where}: points 必须是正整数 / must be a positive integer, not {value!r}")
    return value


def _seconds(value, where: str, name: str) -> float:
    """A positive, finite number of seconds: not a boolean, not nan, not inf."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise CourseError(f"course.toml: {where}: {name} 必须是有限的正数（秒）/ must be a positive, finite number "
                          f"of seconds, not {value!r}")
    return float(value)


def parse_course(data: dict, root: Path, *, check_files: bool = True) -> Course:
    """Validate the parsed TOML and build a Course. `root` holds exercises/ and solutions/."""
    _check_keys(data, _TOP_KEYS, "top level", required={"format_version", "course", "assignments", "exercises"})
    if isinstance(data["format_version"], bool) or data["format_version"] != SUPPORTED_FORMAT:
        raise CourseError(f"course.toml: format_version {data['format_version']!r} 不受支持 / is not supported (expected {SUPPORTED_FORMAT})")
    _check_keys(data["course"], _COURSE_KEYS, "[course]")
    data_table = data.get("data", {})
    _check_keys(data_table, _DATA_KEYS, "[data]", required=set())
    if not isinstance(data_table.get("dir", ""), str):
        raise CourseError("course.toml: [data] dir 必须是字符串 / must be a string")
    limits = data.get("limits", {})
    if not isinstance(limits, dict):
        raise CourseError("course.toml: [limits] 应为表 / must be a table")
    _check_keys(limits, _LIMIT_KEYS, "[limits]", required=set())
    exercise_budget = _seconds(limits.get("exercise_budget", DEFAULT_EXERCISE_BUDGET), "[limits]", "exercise_budget")
    submission_budget = _seconds(limits.get("submission_budget", DEFAULT_SUBMISSION_BUDGET), "[limits]",
                                 "submission_budget")
    assignments = []
    for i, table in enumerate(data["assignments"]):
        _check_keys(table, _ASSIGNMENT_KEYS, f"[[assignments]] #{i + 1}")
        assignments.append(Assignment(id=table["id"], title=_text(table["title"], f"assignment {table['id']}: title")))
    assignment_ids = {a.id for a in assignments}
    exercises, seen = [], set()
    for i, table in enumerate(data["exercises"]):
        where = f"[[exercises]] #{i + 1} ({table.get('id', '?')})"
        _check_keys(table, _EXERCISE_KEYS, where, required=_EXERCISE_REQUIRED)
        ex_id = table["id"]
        if ex_id in seen:
            raise CourseError(f"course.toml: {where}: 重复的 id / duplicate id")
        seen.add(ex_id)
        if table["assignment"] not in assignment_ids:
            raise CourseError(f"course.toml: {where}: 未知作业 / unknown assignment {table['assignment']!r}")
        timeout = _seconds(table["timeout"], where, "timeout")
        budget = _seconds(table.get("budget", exercise_budget), where, "budget")
        pieces = table.get("pieces", [])
        if not isinstance(pieces, list) or not all(isinstance(p, str) for p in pieces):
            raise CourseError(f"course.toml: {where}: pieces 应为字符串列表 / must be a list of strings")
        unit = _units_dir(root) / ex_id
        hints, fixes = _hints(unit / "hints.toml", ex_id) if check_files or (unit / "hints.toml").is_file() else ((), None)
        written = table.get("points")
        points = _points(written, where) if written is not None else sum(check_points(unit / "checks.py").values())
        exercises.append(Exercise(
            id=ex_id, assignment=table["assignment"], file=table["file"],
            title=_text(table["title"], f"{where}: title"), section=_section(table["section"], where),
            points=points, timeout=timeout, hints=hints, budget=budget, pieces=tuple(pieces), fixes=fixes,
        ))
    course = Course(
        root=root, format_version=data["format_version"], title=_text(data["course"]["title"], "[course] title"),
        data_dir=data_table.get("dir") or None, assignments=tuple(assignments), exercises=tuple(exercises),
        submission_budget=submission_budget,
    )
    if check_files:
        _check_files(course)
    return course


def _units_dir(root: Path) -> Path:
    beside = root / "grader" / "per_exercise"
    return beside if beside.is_dir() else PACKAGE_DIR / "per_exercise"


def _hints(path: Path, exercise_id: str) -> tuple[tuple[Text, ...], Text | None]:
    """An exercise's hint ladder as written (`[[level]]`, each { zh, en }), and the fixes level a
    student release writes there (`[fixes]`); the kit builds that one from the known mistakes."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CourseError(f"{exercise_id}: 没有提示文件 / no hints file: {path}") from None
    except tomllib.TOMLDecodeError as err:
        raise CourseError(f"{path}: 格式错误 / not valid TOML: {err}") from None
    _check_keys(data, {"level", "fixes"}, str(path), required={"level"})
    levels = data["level"]
    if not isinstance(levels, list) or not levels:
        raise CourseError(f"{path}: 至少要有一级提示 / at least one [[level]] is required")
    hints = tuple(_text(level, f"{path.name} level {n}") for n, level in enumerate(levels, start=1))
    fixes = _text(data["fixes"], f"{path.name} [fixes]") if "fixes" in data else None
    return hints, fixes


def check_points(path: Path) -> dict[str, int]:
    """Each check's points, read from its `@pytest.mark.points(n)` (with `ast`: nothing runs).

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "checks.py"
    >>> _ = f.write_text("@pytest.mark.points(2)\ndef test_a(student): pass\n")
    >>> check_points(f)
    {'test_a': 2}
    """
    import ast

    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return {}
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            for deco in node.decorator_list:
                if (isinstance(deco, ast.Call) and isinstance(deco.func, ast.Attribute) and deco.func.attr == "points"
                        and deco.args and isinstance(deco.args[0], ast.Constant) and isinstance(deco.args[0].value, int)):
                    found[node.name] = deco.args[0].value
    return found


def _check_files(course: Course) -> None:
    for ex in course.exercises:
        for path in (course.exercises_dir / ex.file, course.unit(ex.id) / "checks.py"):
            if not path.is_file():
                raise CourseError(f"course.toml: {ex.id}: 文件不存在 / file not found: {path}")


def load_course(path: Path | None = None, *, check_files: bool = True) -> Course:
    """Load and validate course.toml (default: the one next to the grader package)."""
    path = Path(path) if path else default_course_path()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise CourseError(f"找不到 course.toml / course.toml not found: {path}") from None
    except tomllib.TOMLDecodeError as err:
        raise CourseError(f"course.toml 格式错误 / is not valid TOML: {err}") from None
    try:
        return parse_course(data, path.parent, check_files=check_files)
    except (KeyError, TypeError) as err:
        raise CourseError(f"course.toml: 结构不对 / malformed: {err!r}") from None


def default_course_path() -> Path:
    """course.toml at the root of the kit, the parent folder of grader/; installed from a
    wheel, the copy inside the package (grader/_kit/course.toml)."""
    return kit_file("course.toml")


def holds_course_files(listing: dict, course: Course) -> bool:
    """Whether a folder's listing ({name: lstat, or a refusal}) holds a course exercise file as
    a regular file: what makes a student's `exercises/` the folder their work is read from
    (one holding only a link, a FIFO, a folder so named or an `ex99_scratch.py` does not hide
    the files beside it). Shared by `grade batch` and single runs (`--submission DIR`)."""
    files = {ex.file for ex in course.exercises}
    return any(name in files and isinstance(info, os.stat_result) and stat.S_ISREG(info.st_mode)
               for name, info in listing.items())
