"""Hidden inputs drawn per grading run: seeded by the submission and a course secret.

A hidden check whose inputs are random (`torch.randn` logits, random token lists) takes its
seeds from the `draws` fixture instead of writing them down:

    def test_nll_random(student, reference, draws):
        g = torch.Generator().manual_seed(draws.seed(12))

With no course secret (a student's machine, `grade check`, the reference) `draws.seed(12)`
is 12: the check runs as written. With one (official grading: `GRADE_COURSE_SECRET` in the
environment, or the file `.course-secret` at the kit's root), the seed is an HMAC of the
secret, the exercise file's digest, the check and 12, so every submission, and every
change to it, gets inputs of its own: input/answer pairs harvested from one run's report
do not replay on the next, and cannot be computed without the secret. The reference is
asked the same calls, so it still agrees.

The secret never reaches a worker: `claim_secret` (called by `grader.run.startup` before
the zygote forks) takes it out of the environment, the zygote zeroes and drops its copy of
the memory as its first act (`forget_secret`: the workers are forked from it), and the
fence hides the file.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import stat
from dataclasses import dataclass
from pathlib import Path

SECRET_ENV = "GRADE_COURSE_SECRET"
SECRET_FILE = ".course-secret"
MAX_FILE = 4 * 1024 * 1024  # a submission file digested beyond this is refused elsewhere anyway

# A bytearray, so that a process forked from this one can zero its copy in place.
_claimed: dict[str, bytearray | None] = {}


def secret_file(course) -> Path | None:
    return Path(course.root) / SECRET_FILE if course is not None else None


def claim_secret(course) -> None:
    """Read the course secret now, and remove it from the environment (workers fork later)."""
    value = os.environ.pop(SECRET_ENV, None)
    if value:
        _claimed["secret"] = bytearray(value.encode())
        return
    path = secret_file(course)
    try:
        text = path.read_bytes().strip() if path is not None else b""
    except OSError:
        text = b""
    _claimed["secret"] = bytearray(text) if text else _claimed.get("secret")


def forget_secret() -> None:
    """Zero this process's copy of the secret and drop it: the zygote's first act after its fork
    (a submission that imports this module in its worker finds nothing)."""
    held = _claimed.pop("secret", None)
    if held is not None:
        held[:] = bytes(len(held))


def no_secret() -> None:
    """The practice tier: no course secret in this run (the environment's, if any, dropped)."""
    os.environ.pop(SECRET_ENV, None)
    forget_secret()
    _claimed["secret"] = None


def course_secret(course=None) -> bytes | None:
    if "secret" not in _claimed or (_claimed["secret"] is None and os.environ.get(SECRET_ENV)):
        claim_secret(course)
    held = _claimed.get("secret")
    return bytes(held) if held else None


def file_digest(path: Path) -> str:
    """sha256 of a regular file's first MAX_FILE bytes, read without following a link
    ("missing" when it is not a regular file)."""
    if os.path.islink(path):  # where O_NOFOLLOW is missing (Windows), the link is seen first
        return "missing"
    try:
        # O_NOFOLLOW and O_NONBLOCK where the OS has them; O_BINARY where it has that instead
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_BINARY", 0))
    except OSError:
        return "missing"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "missing"
        digest, left = hashlib.sha256(), MAX_FILE
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            digest.update(chunk)
            left -= len(chunk)
        return digest.hexdigest()
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Draws:
    """The seeds of one check's random inputs; `key` None: the seeds as written."""

    key: bytes | None = None
    where: str = ""

    @property
    def drawn(self) -> bool:
        return self.key is not None

    def seed(self, base: int) -> int:
        """`base` without a secret; else a 53-bit seed of its own for this submission and check."""
        if self.key is None:
            return base
        mac = hmac.new(self.key, f"{self.where}:{base}".encode(), hashlib.sha256).digest()
        return int.from_bytes(mac[:7], "big") >> 3


def draws_for(session, exercise_id: str, check_name: str) -> Draws:
    """The draws of one check in one grading session (its submission, the course's secret)."""
    course = getattr(session, "course", None)
    submission = getattr(session, "submission", None)
    secret = course_secret(course)
    if not secret or submission is None or course is None:
        return Draws(None, f"{exercise_id}:{check_name}")
    digest = file_digest(Path(submission) / course.exercise(exercise_id).file)
    key = hmac.new(secret, f"{exercise_id}:{digest}".encode(), hashlib.sha256).digest()
    return Draws(key, f"{exercise_id}:{check_name}")
