"""The limits a worker runs under, in one place: the zygote sets them, the fence applies them."""

from __future__ import annotations

OUTPUT_CAP = 4000  # characters of the student's printed output kept per call
FILE_SIZE_CAP = 16 * 1024 * 1024  # bytes a worker may write to any one file
DEFAULT_LIMITS = {"memory": 6 * 1024**3, "cpu": 900}
MAX_ANSWER_BYTES = 64 * 1024**2  # one answer frame from a worker (the largest real one: ~10 MB, ex06 on the corpus)
