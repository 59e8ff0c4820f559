"""Where a submission's code runs: the tiers, each with one argument a reader can check.

| tier         | used by                                   | what keeps the submission in its place |
| ------------ | ----------------------------------------- | -------------------------------------- |
| `practice`   | a student's own runs (`grade exNN`, `all`, `watch`, notebooks), any OS | a process per exercise with limits on CPU time, memory, file size and output; nothing secret in its memory (its zygote is started before the references and checks are loaded) |
| `bubblewrap` | official grading on Linux (`grade batch`, `--submission` as root or in CI) | the same process inside bubblewrap: its own PID, network, IPC and mount namespaces, a read-only view holding only Python and the kit's worker side, a private size-capped /tmp, a syscall filter (libseccomp), an unprivileged uid when run as root (`grader.sandbox.bubblewrap`) |
| `container`  | chosen explicitly (`--isolation container`, `GRADE_ISOLATION=container`, the Gradescope bundle) | the container is the boundary; inside it, as root, each worker drops to an unprivileged uid that cannot read the reference, the checks or the course secret (their file modes, checked by a process of that uid before any submission runs), under the same limits and syscall filter (`grader.sandbox.container`) |

An official run never falls back to a weaker tier: where its tier cannot be had, grading stops
before the first student (`IsolationUnavailable`, exit 3) and says the way out.

    >>> choose(official=False)
    'practice'
    >>> choose(official=True, requested="container")
    'container'
"""

from __future__ import annotations

import os

PRACTICE, BUBBLEWRAP, CONTAINER = "practice", "bubblewrap", "container"
OFFICIAL = (BUBBLEWRAP, CONTAINER)
ENV_VAR = "GRADE_ISOLATION"


class IsolationUnavailable(RuntimeError):
    """The tier an official run needs cannot be had here; `zh`/`en` say why and the way out."""

    def __init__(self, zh: str, en: str):
        super().__init__(en)
        self.zh, self.en = zh, en

    def text(self, lang: str) -> str:
        return self.zh if lang == "zh" else self.en


def is_official(submission_given: bool, environ=None) -> bool:
    """Whether a `grade exNN`/`grade all` run grades officially: `--submission` as root or in CI
    (`CI` set, as GitHub Actions and most CI systems do). A student grading their own folder,
    or a user checking a folder on a laptop, runs in the practice tier.

    >>> is_official(False, {"CI": "true"}), is_official(True, {"CI": "true"})
    (False, True)
    """
    environ = os.environ if environ is None else environ
    if not submission_given:
        return False
    in_ci = environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return in_ci or (hasattr(os, "geteuid") and os.geteuid() == 0)


def choose(official: bool, requested: str | None = None, environ=None) -> str:
    """The tier of a run: `requested` (`--isolation`), else `GRADE_ISOLATION`, else bubblewrap
    for an official run and practice for the rest. An official run may not ask for practice.

    >>> choose(official=True, environ={})
    'bubblewrap'
    >>> choose(official=True, requested="practice")
    Traceback (most recent call last):
    ...
    grader.sandbox.isolation.IsolationUnavailable: an official run cannot use the practice tier: use bubblewrap or the container tier
    """
    environ = os.environ if environ is None else environ
    wanted = (requested or environ.get(ENV_VAR, "") or "").strip().lower() or None
    if wanted not in (None, PRACTICE, *OFFICIAL):
        raise IsolationUnavailable(f"未知的隔离方式 {wanted!r}：可选 bubblewrap 或 container",
                                   f"unknown isolation {wanted!r}: choose bubblewrap or container")
    if not official:
        return wanted or PRACTICE
    if wanted == PRACTICE:
        raise IsolationUnavailable("正式评分不能用练习模式：请用 bubblewrap 或 container",
                                   "an official run cannot use the practice tier: use bubblewrap or the container tier")
    return wanted or BUBBLEWRAP


WAY_OUT = {
    "zh": "办法：安装 bubblewrap（Debian/Ubuntu：apt-get install bubblewrap）并允许它创建命名空间；"
          "或者在每份提交一个容器的平台（Gradescope、Docker）里用 --isolation container（见 docs/security.md）",
    "en": "the way out: install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) where it may create "
          "namespaces; or, where a container per submission is the boundary (Gradescope, Docker), "
          "--isolation container (see docs/security.md)",
}


__all__ = ["PRACTICE", "BUBBLEWRAP", "CONTAINER", "OFFICIAL", "IsolationUnavailable", "is_official", "choose",
           "WAY_OUT"]
