"""One fingerprint of everything besides the student that can change an answer.

The reference's answer cache (ex12's training) and `grade batch`'s resume both key on it:
the course file, the grader package's code (checks, probes, mistakes, pieces, compare, …),
the exercise's solution, and the versions of torch and the grader. A change to any of them
regrades; nothing else does.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from grader.model.files import digest_files
from grader.model.paths import PACKAGE_DIR


def grader_files(package_dir: Path = PACKAGE_DIR) -> list[Path]:
    """Every source file of the grader package, in a stable order."""
    return sorted(p for p in package_dir.rglob("*.py") if "__pycache__" not in p.parts)


def answers_fingerprint(course, extra: str = "") -> str:
    """The fingerprint of answers computed from the course's solutions with this grader and torch."""
    import grader

    files = [course.root / "course.toml", *grader_files(), *sorted(course.units_dir.glob("*/*.py")),
             *sorted(course.units_dir.glob("*/hints.toml")), *sorted(course.solutions_dir.glob("*.py"))]
    return digest_files(files, extra=f"{_torch_version()}:{grader.__version__}:{extra}")


def _torch_version() -> str:
    """torch's version as installed, read without importing it (a resumed `grade batch` with
    nothing left to grade never needs torch itself)."""
    from importlib import metadata

    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:  # a torch built in place, without its metadata
        import torch

        return torch.__version__


def derived_fingerprint(base: str, *parts: str) -> str:
    """A fingerprint of `base` (one `answers_fingerprint`) and `parts`, without reading a file
    again: `grade batch` digests the grader once and keys its gradebook on this.

    >>> derived_fingerprint("ab", "x") != derived_fingerprint("ab", "y")
    True
    """
    return hashlib.sha256("|".join((base, *parts)).encode()).hexdigest()
