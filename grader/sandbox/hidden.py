"""What of a kit no worker may read (portable: read by the judge on every system, by the fence on Linux)."""

from __future__ import annotations

from pathlib import Path

from grader.model.paths import KIT_ROOT


def kit_secrets(root: Path = KIT_ROOT) -> list[str]:
    """What a worker never sees of the kit at `root`: the reference, the hidden checks and
    mistakes, the kit's history, and what a build leaves in a checkout (`pip install .` leaves
    `build/lib/grader/_kit/solutions/`; `dist/` holds the wheel, the reference inside).

    The judge adds what lives elsewhere (the answer cache, the kit's other copies:
    `grader.model.paths.other_copies`) through the fence's `hide`.
    """
    package = ["grader/_kit/solutions", "grader/checks", "grader/mistakes", "grader/pieces", "grader/answers.bin"]
    if not (root / "course.toml").is_file() and (root / "grader" / "_kit").is_dir():
        return [str(root / n) for n in package]  # installed: site-packages, whose other folders are others'
    return [str(root / n) for n in ["solutions", *package, "tests", "bench", ".git", ".fragments", "build", "dist"]]
