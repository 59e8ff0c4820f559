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
# The kit's own bytecode, as pip writes it for an installed package (an editable install writes
# none): a sandboxed worker reads the kit read-only and never writes bytecode, nor does any
# process where PYTHONDONTWRITEBYTECODE is set, so without it each would compile the kit again.
.venv/bin/python -m compileall -q grader >/dev/null
# Official grading (grade batch, --submission as root or in CI) runs each submission inside
# bubblewrap, with a libseccomp syscall filter: installed here where this is Debian/Ubuntu as root.
if ! command -v bwrap >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap libseccomp2 >/dev/null
  else
    echo "note: official grading needs bubblewrap: sudo apt-get install bubblewrap (docs/security.md)" >&2
  fi
fi
echo "ready: .venv/bin/grade --help"
