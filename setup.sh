#!/usr/bin/env bash
# One command from a fresh clone: a virtual environment in .venv with everything the kit,
# its tests and the instructor commands need.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"
[ -d .venv ] || "$PYTHON" -m venv .venv
# torch first, pinned: the lesson's numbers (ex12's table) come from 2.13, and installed first it
# is the torch the kit keeps (its own requirement allows others).
.venv/bin/pip install --quiet "torch==2.13.0"
.venv/bin/pip install --quiet -e ".[dev]"
echo "ready: .venv/bin/grade --help"
