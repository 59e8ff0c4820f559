"""Rendering a report (text, json, every CI format) imports neither torch nor the sandbox.

A report is drawn from plain results; a CI job that only renders, or `grade merge`, must not
pay for torch, and nothing on the rendering path may reach the untrusted side.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from grader.report.render import FORMATS

SCRIPT = r"""
import json, sys
from grader.model.course import Exercise, Text
from grader.model.results import CheckResult, ExerciseResult, Finding
from grader.report.render import render

ex = Exercise(id="ex05", assignment="ch05", file="ex05_tinygpt_loss.py", title=Text("损失", "loss"),
              section="5.6", points=3, timeout=10, hints=(Text("提示", "hint"),))
shapes = {"input_ids": (2, 4), "hidden": (2, 4, 8), "logits": (2, 4, 32), "flat_logits": (8, 32),
          "flat_labels": (8,), "loss": ()}
checks = [CheckResult("ex05", "test_shapes", Text("形状", "shapes"), 1, True, public=True,
                      attachments={"shapes": shapes}),
          CheckResult("ex05", "test_loss", Text("数值", "value"), 2, False,
                      finding=Finding("mismatch", "lm_loss(...)", expected="3.9467", got="3.3260",
                                      zh="值不同", en="values differ"))]
text = render([ExerciseResult(ex, checks)], sys.argv[1], "en")
assert text
loaded = sorted(m for m in sys.modules if m == "torch" or m.startswith(("torch.", "grader.sandbox", "grader.judge")))
print(json.dumps(loaded))
"""


@pytest.mark.parametrize("fmt", FORMATS)
def test_rendering_imports_no_torch_and_no_sandbox(fmt):
    run = subprocess.run([sys.executable, "-c", SCRIPT, fmt], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert json.loads(run.stdout.strip().splitlines()[-1]) == []
