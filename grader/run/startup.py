"""One start-up for every command that grades: `grade exNN`, `grade watch`, `grade check`,
`grade batch` and the recording of a release's answers.

The order matters in the practice tier: torch is imported here first, then the zygote is
forked (it inherits torch instead of importing it again: one import on the critical path of
`grade ex03`, even on a busy machine), and only then are pytest, the checks and the
references loaded here, so the workers forked from the zygote hold none of them. The official
tiers start their zygote as a fresh interpreter inside their isolation, which first proves it
can see nothing it must not (`grader.sandbox.isolation`).

    zygote = start_zygote(course, tier)  # workers come from here
    load_judge()                         # pytest, the plugin, the checks' helpers
    references, recorded = references_for(course)
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import click

from grader.model.course import Course


class IsolationRefused(click.ClickException):
    """The run's isolation tier cannot be had here: nothing is graded (exit 3, the grader's
    reason, not the submission's), and the way out is said."""

    exit_code = 3


def data_folders(course: Course | None) -> list[str]:
    """The folders a worker may read the lesson's data from (the course's, the user's, the cache,
    a checkout's datasets/)."""
    from grader.data.datasets import ENV_VAR, default_cache_dir
    from grader.data.download import make_dirs
    from grader.model.paths import checkout_folder

    if os.name == "posix" and os.geteuid() == 0:  # where a copy the workers can read may be made
        try:  # (grader.data.datasets._verified_in) once the sandbox is built: bound before it exists
            make_dirs(default_cache_dir() / "tinyshakespeare", default_cache_dir())
        except OSError:
            pass
    found = [default_cache_dir() / "tinyshakespeare", *filter(None, [checkout_folder("datasets")])]
    if os.environ.get(ENV_VAR):
        found.append(Path(os.environ[ENV_VAR]).expanduser())
    if course is not None and course.data_dir:
        found.append(course.root / course.data_dir)
    return list(dict.fromkeys(os.path.realpath(p) for p in found if p.exists()))


def secret_paths(course: Course | None) -> list[str]:
    """What no worker may see: the reference, the hidden checks and known mistakes, the correct
    pieces, the answers recorded or cached, the course secret, what else of a checkout holds the
    reference (`CHECKOUT_COPIES`), and the kit's other copies."""
    from grader.data.catalog import PRIVATE_FOLDERS, every_cache_dir
    from grader.judge.draws import secret_file
    from grader.model.paths import BUNDLED, KIT_ROOT, PACKAGE_DIR, in_checkout, other_copies

    package = [PACKAGE_DIR / "answers.bin", *sorted((PACKAGE_DIR / "per_exercise").glob("*/checks.py"))]
    package += [p for p in (PACKAGE_DIR / "pieces").glob("*.py") if p.name != "__init__.py"]
    found = [*package, BUNDLED / "solutions"]
    if course is not None:
        found += [course.solutions_dir, *(course.unit(ex.id) / "checks.py" for ex in course.exercises)]
        secret = secret_file(course)
        if secret is not None:
            found.append(secret)
    if in_checkout():  # what a checkout holds beside the package: the reference in other forms
        found += [KIT_ROOT / name for name in CHECKOUT_COPIES]
    found += [cache / name for cache in every_cache_dir() for name in PRIVATE_FOLDERS]
    for copy in other_copies():  # a checkout, or an installed package's site-packages
        checkout = (copy / "course.toml").is_file()
        found += [copy / name for name in ("solutions", "grader", *(CHECKOUT_COPIES if checkout else ()))]
    return list(dict.fromkeys(str(p) for p in found))


# What a checkout holds that carries the reference besides solutions/: its history, the tests
# and benchmarks (which use it), and what a build leaves (`pip install .` leaves
# build/lib/grader/_kit/solutions/; dist/ holds the wheel, the reference inside).
CHECKOUT_COPIES = ("tests", "bench", ".git", ".fragments", "build", "dist")


def close_secrets(course: Course | None) -> list[str]:
    """Close what no worker may read to other users (`chmod -R go-rwx`), for the container tier,
    whose workers drop to an unprivileged uid: run when an image is built, as root. The paths
    closed, in order.

        close_secrets(course)   # ['/usr/lib/python3.11/site-packages/grader/per_exercise', ...]
    """
    closed = []
    for path in secret_paths(course):
        if not os.path.lexists(path) or os.path.islink(path):
            continue
        for folder, dirs, files in os.walk(path) if os.path.isdir(path) else [("", [], [path])]:
            for name in [*dirs, *files]:
                target = os.path.join(folder, name) if folder else name
                if not os.path.islink(target):
                    os.chmod(target, os.lstat(target).st_mode & 0o7700)
        os.chmod(path, os.lstat(path).st_mode & 0o7700)
        closed.append(path)
    return closed


def start_zygote(course: Course | None = None, tier: str = "practice", *, unseen=(), slot: int = 0,
                 lang: str = "zh", wait: bool = True):
    """Start the run's zygote in `tier` and return it; `IsolationRefused` (exit 3) when that
    tier cannot be had here. `unseen`: more that no worker may see (a batch's cohort and OUT).
    `wait=False` (an official tier): started, not yet waited for (`ready_zygote`).

    In the practice tier the course secret is dropped from the environment first and never
    used; in the official tiers it is read now and stays in this process alone."""
    from grader.judge.draws import claim_secret, no_secret
    from grader.sandbox import IsolationUnavailable, Zygote
    from grader.sandbox.isolation import BUBBLEWRAP, CONTAINER, PRACTICE
    from grader.sandbox.preload import load_torch

    if tier == PRACTICE:
        no_secret()
        load_torch()  # the zygote inherits it
        return Zygote(PRACTICE).start()
    claim_secret(course)
    hidden = [*secret_paths(course), *map(str, unseen)]
    try:
        if tier == CONTAINER:
            from grader.sandbox.bubblewrap import python_roots, worker_view
            from grader.sandbox.container import WORKER_UID, check_readable, check_unreadable, require_root

            require_root()
            uid = WORKER_UID - slot
            check_unreadable(hidden, uid)
            check_readable([*python_roots(), *map(str, worker_view()), *data_folders(course)], uid)
            return Zygote(CONTAINER, uid=uid, data=data_folders(course)).start(wait)
        uid = worker_uid(slot) if os.geteuid() == 0 else None
        return Zygote(BUBBLEWRAP, uid=uid, unseen=hidden, data=data_folders(course)).start(wait)
    except IsolationUnavailable as err:
        raise IsolationRefused(err.text(lang)) from None


def ready_zygote(zygote, lang: str = "zh"):
    """Wait for a zygote `start_zygote(..., wait=False)` started; `IsolationRefused` as there."""
    from grader.sandbox import IsolationUnavailable

    try:
        return zygote.ready()
    except IsolationUnavailable as err:
        raise IsolationRefused(err.text(lang)) from None


def worker_uid(slot: int) -> int:
    """The unprivileged uid the workers of a judge slot run as (bubblewrap, as root)."""
    return 64900 + slot


def load_judge() -> None:
    """Load the judge's side after the zygote: torch on one thread, pytest and the plugin."""
    from grader.sandbox.preload import collector_paused, load_torch

    with collector_paused():
        load_torch()
        import grader.run.session  # noqa: F401  (pytest, the plugin, the judge)


def freeze_loaded() -> None:
    """What is loaded now lives until exit: spare pytest's full collections the scan of it."""
    gc.freeze()


def resolve_corpus(course: Course):
    """The lesson's corpus as a `DataFile` (its sha256 verified), or the `DataError` saying why not."""
    from grader.data import datasets
    from grader.model.calls import DataFile

    try:
        data_dir = course.root / course.data_dir if course.data_dir else None
        path = datasets.resolve("tinyshakespeare", data_dir=data_dir, progress=None)
    except datasets.DataError as err:
        return err
    return DataFile("tinyshakespeare", os.path.realpath(path), datasets.get_dataset("tinyshakespeare").sha256)


def corpus_provider(course: Course, resolved=None):
    """A function giving the corpus, resolved once, on first use by a check (or given resolved)."""
    cached: dict[str, object] = {} if resolved is None else {"found": resolved}

    def corpus():
        from grader.model.results import CheckFailed, Finding

        if "error" in cached:  # said in full once, above; a short line for the other checks
            raise CheckFailed(Finding("data", "tiny Shakespeare", zh="数据不可用（怎么获取见上文）",
                                      en="the data is not available (how to get it: see above)"))
        if "found" not in cached:
            cached["found"] = resolve_corpus(course)
        found = cached["found"]
        if isinstance(found, Exception):
            cached["error"] = found
            raise CheckFailed(Finding("data", "tiny Shakespeare", zh=found.zh, en=found.en))
        return found

    return corpus


def references_for(course: Course, cache_dir: Path | None = None):
    """Live references from solutions/, or the answers recorded in a student release: (references, recorded)."""
    if course.solutions_dir.is_dir():
        from grader.judge.references import LiveReferences

        return LiveReferences(course, cache_dir=cache_dir), False
    from grader.judge.recorded import RecordedReferences

    return RecordedReferences(course), True


__all__ = ["IsolationRefused", "close_secrets", "start_zygote", "ready_zygote", "load_judge", "freeze_loaded",
           "resolve_corpus", "corpus_provider", "references_for", "data_folders", "secret_paths", "worker_uid",
           "CHECKOUT_COPIES"]
