"""Correct pieces of earlier exercises that later exercises build on.

课程后面的练习会用到前面练习写的零件（ex10 用 bigram 和 get_batch，ex11 用 get_batch 和
BigramLanguageModel，ex12 三样都用）。评分这些练习时，探针把学生模块里这些名字换成这里的
正确实现，这样前面练习里的错误只扣一次分。

When ex10, ex11 or ex12 is graded, its probes put these correct pieces in place of the
student's earlier ones (`mod.get_batch = ...`), so that a bug in an earlier exercise is not
charged twice. They follow docs/EXERCISES.md exactly (the same random draws as the reference).

They are also the answers to ex08, ex09 and ex11, so a worker only ever holds the pieces
its exercise builds on: the judge sends their source with the setup of the workers that need
them (`NEEDED_BY`, `sources_for`), and no worker's view of the kit holds this folder's
modules. A student's ex08 cannot reach `get_batch` from here; ex11's cannot reach `estimate_loss`.
"""

import importlib

# exercise module -> the pieces its probes use (one worker process per distinct set)
_WHERE = {"get_batch": "get_batch", "BigramLanguageModel": "bigram", "estimate_loss": "estimate_loss"}


# The student release ships none of the pieces' modules (they are the answers to ex08, ex09
# and ex11): `grade release` sets this to True, and there ex10-ex12 are graded with the
# student's OWN earlier files (the report says so), nothing being loaded before the fence.
OWN_FILES = False


def sources_for(pieces: tuple[str, ...]) -> dict[str, str]:
    """The source of each piece an exercise builds on (its course.toml `pieces`, in loading order),
    read by the judge and sent with the worker's setup: no worker's view of the kit holds them.
    None in a student release (`OWN_FILES`).

    >>> list(sources_for(("get_batch", "bigram")))
    ['get_batch', 'bigram']
    """
    from pathlib import Path

    here = Path(__file__).parent
    return {} if OWN_FILES else {name: (here / f"{name}.py").read_text(encoding="utf-8") for name in pieces}


def piece(name: str):
    """`piece("get_batch")`: the correct piece, its module imported on first use (in the
    student release: the student's own, from `ex08_get_batch.py` and so on)."""
    if OWN_FILES:
        return own_piece(name)
    return getattr(importlib.import_module(f"grader.pieces.{_WHERE[name]}"), name)


def own_piece(name: str):
    """The student's own earlier piece: `own_piece("get_batch")` is ex08_get_batch.get_batch
    from the submission folder (first on the worker's path)."""
    from grader.model.missing import MissingSubmissionFile

    module = EARLIER[name]
    try:
        found = importlib.import_module(module)
    except ImportError:
        found = None
    if found is None or str(getattr(found, "__name__", "")).startswith("grader."):
        raise MissingSubmissionFile(
            f"{module}.py 不在提交目录中：学生发行版用你自己的 {module}.py 评分后面的练习 / "
            f"{module}.py is not in the submission folder: the student release grades the later "
            f"exercises with your own {module}.py")
    return getattr(found, name)


def stand_in(name: str):
    """What grader/earlier's stand-in for a missing earlier file holds: the correct piece, or
    (in the student release, which has none) a clear ImportError."""
    if OWN_FILES:
        module = EARLIER[name]
        raise ImportError(f"{module}.py 不在提交目录中：学生发行版里，后面的练习用你自己的 {module}.py / "
                          f"{module}.py is not in the submission folder: in the student release the later "
                          f"exercises build on your own {module}.py", name=module)
    return piece(name)


# The earlier exercises' files, by the names a later exercise imports from them.
EARLIER = {"get_batch": "ex08_get_batch", "BigramLanguageModel": "ex09_bigram", "estimate_loss": "ex11_estimate_loss"}


def imported_from_earlier(value) -> bool:
    """Whether `value` (a module global of the file being graded) came from an earlier
    exercise's file, one of the stand-ins in grader/earlier, or these pieces.

    Only such names are replaced by correct pieces when grading: what the student wrote in
    the file being graded is graded as written (EXERCISES.md, "Common rules").

    >>> from grader.pieces.get_batch import get_batch
    >>> imported_from_earlier(get_batch)
    True
    >>> imported_from_earlier(lambda: None)  # written here, in this module
    False
    """
    where = getattr(value, "__module__", None)
    if not isinstance(where, str):
        return False
    return where in EARLIER.values() or where.startswith(("grader.pieces", "grader.earlier"))
