#!/usr/bin/env bash
# One command from a fresh clone: a virtual environment in .venv with everything the kit,
# its tests and the instructor commands need.
set -euo pipefail
cd "$(dirname "$0")"
PYTHON="${PYTHON:-python3}"
[ -d .venv ] || "$PYTHON" -m venv .venv
# torch first, pinned: this takes the CPU wheel; a bare "torch" would pull a multi-GB CUDA build.
.venv/bin/pip install --quiet "torch==2.13.0"
.venv/bin/pip install --quiet -e ".[dev]"
echo "ready: .venv/bin/grade --help"
