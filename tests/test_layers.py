"""The packages' layers hold, function-level imports included (import-linter; pyproject.toml)."""

from __future__ import annotations

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
