"""The packages' layers hold, function-level imports included (import-linter; pyproject.toml)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_import_rules_hold():
    lint = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    done = subprocess.run([lint, str(ROOT / "pyproject.toml")], capture_output=True, text=True, cwd=ROOT,
                          env={"PYTHONPATH": str(ROOT), "PATH": str(Path(sys.executable).parent)}, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "broken" not in done.stdout.split("Contracts:")[-1].replace("0 broken", "")


def test_a_broken_rule_is_caught(tmp_path):
    """The rules are read from the code itself: a report module that imports the sandbox breaks one."""
    kit = tmp_path / "kit"
    shutil.copytree(ROOT / "grader", kit / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pyproject.toml", kit / "pyproject.toml")
    target = kit / "grader" / "report" / "text.py"
    target.write_text(target.read_text(encoding="utf-8") + "\n\ndef _late():\n    import grader.sandbox.worker  # noqa\n",
                      encoding="utf-8")
    lint = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    done = subprocess.run([lint, str(kit / "pyproject.toml")], capture_output=True, text=True, cwd=kit,
                          env={"PYTHONPATH": str(kit), "PATH": str(Path(sys.executable).parent)}, timeout=300)
    assert done.returncode != 0 and "grader.report.text -> grader.sandbox.worker" in done.stdout


def imports_of_test_modules(folder: Path) -> list[str]:
    """`file:line module` for each import, at any depth of a module's code, of one of the suite's
    test_*.py modules (`tests.….test_…`).

        >>> imports_of_test_modules(ROOT / "tests")   # helpers live in tests/*.py modules of their own
        []
    """
    found = []
    for path in sorted(folder.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            found += [f"{path.relative_to(folder)}:{node.lineno} {name}" for name in names
                      if name.startswith("tests.") and name.split(".")[-1].startswith("test_")]
    return found


def test_no_test_module_imports_another():
    """A helper two test files share lives in a tests/ module of its own (tests/kit.py,
    tests/cohorts.py, a conftest.py fixture …): importing a test module runs its tests' set-up
    and ties one file's tests to another's."""
    assert imports_of_test_modules(ROOT / "tests") == []


def test_an_import_of_a_test_module_is_found_at_any_depth(tmp_path):
    (tmp_path / "cohort").mkdir()
    (tmp_path / "cohort" / "test_late.py").write_text(
        "def test_x():\n    from tests.sandbox.test_attacks import KIT\n", encoding="utf-8")
    (tmp_path / "test_top.py").write_text(
        "import tests.kit\nimport tests.cohort.test_batch as b\nfrom grader.per_exercise.ex01 import checks\n",
        encoding="utf-8")
    assert imports_of_test_modules(tmp_path) == ["cohort/test_late.py:2 tests.sandbox.test_attacks",
                                                 "test_top.py:2 tests.cohort.test_batch"]


def test_no_property_test_has_a_deadline():
    """The suite's hypothesis profile times nothing: an example slowed by a busy machine is not a failure."""
    from hypothesis import settings

    assert settings.default.deadline is None
