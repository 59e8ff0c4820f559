"""The names of the files that make a folder `grade batch`'s OUT (shared by the gradebook that
writes them and the cohort's scan, which never takes another batch's OUT for a student)."""

import os

LOCK_NAME = ".grade-batch.lock"  # flock'ed while a batch runs (grader.cohort.gradebook.hold_out)
COHORT_FILE = "cohort.json"  # which cohort OUT holds
# Everything a batch or a merge writes at the top of OUT (and atomic writes' `.NAME.PID.tmp`)
SPAWN_LOCK = ".spawn.lock"  # the judges' turns at the zygote (grader.cohort.batch)
OUT_ENTRIES = frozenset({LOCK_NAME, COHORT_FILE, SPAWN_LOCK, "staged", "students", "reports", "cache", "grades.csv",
                         "results.json", "report.html"})


def holds_only_out_entries(folder) -> bool:
    """Whether every entry of `folder` is one OUT's writers make: a killed batch's OUT, never a
    student's folder that happens to hold a file named like OUT's lock (`answers.txt` beside
    it). Never raises: a folder that cannot be listed is not an OUT.

    >>> holds_only_out_entries("/srv/grading/out")   # .grade-batch.lock, staged/, students/
    True
    """
    try:
        names = os.listdir(folder)
    except (OSError, ValueError):
        return False
    return all(name in OUT_ENTRIES or (name.startswith(".") and name.endswith(".tmp")) for name in names)


def holds_lock(folder) -> bool:
    """Whether `folder` holds OUT's lock file: a regular file, not followed if a link. Never
    raises: a student's folder that cannot be searched, or whose lock name is a link to a name
    too long, is simply not an OUT.

    >>> holds_lock("/srv/grading/out")   # with /srv/grading/out/.grade-batch.lock
    True
    """
    import stat

    try:
        return stat.S_ISREG(os.lstat(os.path.join(folder, LOCK_NAME)).st_mode)
    except (OSError, ValueError):
        return False


def inside_an_out(path: str) -> bool:
    """Whether `path` (resolved) is in, or is, a folder holding both of OUT's files: another
    batch's staged copies or gradebook, never a submission.

    >>> inside_an_out("/srv/grading/out/staged/alice~0b9e")   # with /srv/grading/out/cohort.json
    True
    """
    return out_holding(path) is not None


def out_holding(path: str) -> str | None:
    """The nearest folder at or above `path` (resolved) holding both of OUT's files, or None."""
    folder = path
    while True:
        if os.path.isfile(os.path.join(folder, COHORT_FILE)) and os.path.exists(os.path.join(folder, LOCK_NAME)):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
