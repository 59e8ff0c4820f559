"""One start-up for every command that grades: `grade exNN`, `grade watch`, `grade check`,
`grade batch` and the recording of a release's answers.

The order matters. The zygote is forked first, before torch, the reference solutions or the
checks are loaded here, so the workers forked from it hold none of them (torch then loads in
both processes at once, on two cores). Only then does the judge load torch and pytest.

    zygote = start_zygote(course)        # fenced workers come from here
    load_judge()                         # torch (one thread), pytest, the plugin
    references, recorded = references_for(course)
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import click

from grader.model.course import Course
from grader.model.messages import say


def data_folders(course: Course | None) -> list[str]:
    """The folders a worker may read the lesson's data from (the course's, the user's, the cache,
    a checkout's datasets/)."""
    from grader.data.datasets import ENV_VAR, default_cache_dir
    from grader.data.download import make_dirs
    from grader.model.paths import checkout_folder

    if os.name == "posix" and os.geteuid() == 0:  # where a copy the workers can read may be made
        try:  # (grader.data.datasets._verified_in), granted before it exists
            make_dirs(default_cache_dir() / "tinyshakespeare", default_cache_dir())
        except OSError:
            pass
    found = [default_cache_dir() / "tinyshakespeare", *filter(None, [checkout_folder("datasets")])]
    if os.environ.get(ENV_VAR):
        found.append(Path(os.environ[ENV_VAR]).expanduser())
    if course is not None and course.data_dir:
        found.append(course.root / course.data_dir)
    return [str(p) for p in found if p.exists()]


def fence_options(course: Course | None, *, hide=(), grants=()) -> dict:
    """What the fence is told by the judge: the data it grants, the cache's private folders it
    hides (the answers computed ahead, the key that seals a batch's OUT)."""
    from grader.data.catalog import PRIVATE_FOLDERS, every_cache_dir
    from grader.model.paths import other_copies
    from grader.sandbox.hidden import kit_secrets

    private = [str(cache / name) for cache in every_cache_dir() for name in PRIVATE_FOLDERS]
    copies = [path for root in other_copies() for path in kit_secrets(root) if os.path.lexists(path)]
    return {"grants": data_folders(course) + [str(g) for g in grants],
            "hide": private + copies + [str(h) for h in hide]}


class FenceUnavailable(click.ClickException):
    """What the fence must cover cannot be kept from the workers here: nothing is graded (exit 3,
    the grader's reason, not the submission's)."""

    exit_code = 3


def start_zygote(course: Course | None = None, *, hide=(), grants=(), huge_pages: bool = False, lang: str = "zh"):
    """Fork the zygote (before anything secret is loaded in this process) and return it.

    The course secret (grader.judge.draws) is read first and taken out of the environment,
    the zygote zeroes its copy as it starts, and the secret's file is hidden: no worker can see it."""
    from grader.judge.draws import claim_secret, forget_secret, secret_file
    from grader.sandbox import Zygote

    claim_secret(course)
    secret = secret_file(course)
    hide = [*hide, *([str(secret)] if secret is not None and secret.exists() else [])]
    fence = fence_options(course, hide=hide, grants=grants)
    close_without_mounts(fence["hide"], lang)
    return Zygote(fence=fence, huge_pages=huge_pages).start(in_child=forget_secret)


def close_without_mounts(hide: list[str], lang: str) -> None:
    """As root where workers get no mount namespace (grader.sandbox.mountless): what the mounts
    would cover closed to other users, said once when a mode changed; FenceUnavailable when
    something cannot be."""
    from grader.sandbox.mountless import close_to_others, mounts_refused, shared_folders, unreachable
    from grader.sandbox.pool import linux_fence_here

    if not linux_fence_here() or not mounts_refused():
        return
    from grader.sandbox.fence import python_paths
    from grader.sandbox.hidden import kit_secrets

    unread = unreachable(python_paths())  # nothing can bind them in for the workers' uid here
    if unread:
        raise FenceUnavailable(say("fence_python", lang, paths=", ".join(unread)))
    closed, still_open = close_to_others(kit_secrets() + list(hide))
    if still_open:
        raise FenceUnavailable(say("fence_open", lang, paths="; ".join(f"{p} ({why})" for p, why in still_open)))
    if closed:
        click.echo("grade: " + say("fence_modes", lang, paths=", ".join(closed)), err=True)
    shared_folders()  # looked for once, before the judges fork: each student's sweep reads them


def close_to_other_runs(paths: list[str], lang: str) -> None:
    """As root on Linux, whatever the mounts: the folders students' work is read from (a batch's
    DIR and the folders its links lead to, `--submission DIR`) closed to other users (o-rwx),
    said once when a mode changed. A run's workers are leased uids of its own: another run's
    worker on this machine (another batch, a CI job's single run) could otherwise read these
    students' files wherever their modes let anyone (`/proc/PID/cmdline` names the folder).
    A folder that cannot be closed (a read-only mount) is said, not fatal: this run's own
    workers never see it (its fence hides it)."""
    from grader.model.paths import inside_the_kit
    from grader.sandbox.mountless import close_to_others
    from grader.sandbox.pool import linux_fence_here

    if not linux_fence_here() or os.geteuid() != 0:
        return
    # the kit's own folders (a test grading solutions/, a student's link to it) are the fence's
    closed, still_open = close_to_others([p for p in paths if not inside_the_kit(p)])
    if closed:
        click.echo("grade: " + say("work_closed", lang, paths=", ".join(closed)), err=True)
    if still_open:
        click.echo("grade: " + say("work_open", lang, paths="; ".join(f"{p} ({why})" for p, why in still_open)), err=True)


def load_judge() -> None:
    """Load the judge's side after the zygote: torch on one thread, pytest and the plugin."""
    import torch

    torch.set_num_threads(1)  # measured: one thread is never slower at these sizes
    import grader.run.session  # noqa: F401  (pytest, the plugin, the judge)


def freeze_loaded() -> None:
    """What is loaded now lives until exit: spare pytest's full collections the scan of it.

    Without a `gc.collect()` first: after torch's, pytest's and the checks' imports it finds
    no garbage (measured: 0 objects), in about 0.15 s of every `grade` run."""
    gc.freeze()


def resolve_corpus(course: Course):
    """The lesson's corpus as a `DataFile` (its sha256 verified), or the `DataError` saying why not."""
    from grader.data import datasets
    from grader.model.calls import DataFile
    from grader.sandbox.mountless import mounts_refused, open_to_others
    from grader.sandbox.workdirs import work_root

    try:
        data_dir = course.root / course.data_dir if course.data_dir else None
        path = datasets.resolve("tinyshakespeare", data_dir=data_dir, progress=None)
    except datasets.DataError as err:
        return err
    root = work_root() if mounts_refused() and not open_to_others(str(path)) else None
    if root is not None:  # no data folder can be granted: a copy the workers' uid can read
        try:
            path = datasets.import_to_cache(path, "tinyshakespeare", cache_dir=Path(root) / "data")
        except datasets.DataError as err:
            return err
    return DataFile("tinyshakespeare", str(path), datasets.get_dataset("tinyshakespeare").sha256)


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
