"""Why a student folder, or a file of it, was not graded: codes and their words (zh, en).

A problem is plain data, `{"file": name, "reason": code, "cap": bytes, "peer": name}`, kept
in the student's state and in results.json; `reason_text` says it in one language.

    >>> reason_text({"file": "ex02_nll.py", "reason": "link"}, "en")
    'ex02_nll.py: is a symbolic link, not read'
"""

from __future__ import annotations

REASONS = {
    "link": ("是符号链接，未读取", "is a symbolic link, not read"),
    "special": ("不是普通文件（FIFO、设备或套接字），未读取", "is not a regular file (a FIFO, a device or a socket), not read"),
    "not_a_file": ("是文件夹，不是文件", "is a folder, not a file"),
    "too_large": ("超过大小上限 {cap}，未读取", "is over the size cap of {cap}, not read"),
    "over_total": ("提交的文件合计超过上限 {cap}，未读取", "the submission's files together are over {cap}, not read"),
    "unreadable": ("无法读取", "cannot be read"),
    "extra_notebook": ("未读取：只评 {peer}（nbgrader 发布的那个）", "not read: only {peer} is graded (the one nbgrader released)"),
    "renamed": ("不是本课程的文件名，没有评分：请改名为 {peer}", "is not the course's file name, not graded: rename it {peer}"),
    "beside_inner": ("未读取：exercises/ 里有练习文件时，只评那里的文件",
                     "not read: exercises/ holds exercise files, and only those are graded"),
    "no_exercise_files": ("没有练习文件（exNN_*.py）", "no exercise file (exNN_*.py)"),
    "no_notebooks": ("没有可读的 notebook", "no readable notebook"),
    "crash": ("评分进程在这份提交上崩溃", "the grader crashed on this submission"),
    "kit_link": ("是指向工具包（参考答案）、评分输出文件夹或 /proc 的链接：整份提交被拒绝",
                 "is a link into the kit (the reference), a gradebook folder (OUT) or /proc: the whole submission is refused"),
    "peer_link": ("是指向提交目录里另一个文件夹（{peer}）的链接：那里的文件只作为那个文件夹的提交评分",
                  "is a link to another folder of the submissions folder ({peer}): its files are graded as that folder's only"),
    "dir_link": ("是指向提交目录本身（或其上层）的链接：整份提交被拒绝",
                 "is a link to the submissions folder itself (or a folder above it): the whole submission is refused"),
    "dead_link": ("是指不到任何地方的链接（目标不存在，或链接成环）：没有可评的文件",
                  "is a link that leads nowhere (its target is missing, or the links loop): nothing to grade"),
}
WHOLE = "refused"  # a problem refusing the whole submission: its own words (intake's) in `zh` / `en`


def reason_text(problem: dict, lang: str) -> str:
    if problem.get("reason") == WHOLE:  # intake's words, which name the entry
        return str(problem.get("en" if lang == "en" else "zh") or problem.get("en") or "")
    zh, en = REASONS.get(problem.get("reason"), ("无法评分", "cannot be graded"))
    text = (en if lang == "en" else zh).format(cap=_size(problem.get("cap", 0)), peer=problem.get("peer", ""))
    return f"{problem['file']}: {text}" if problem.get("file") else text


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MiB" if n >= 1024 * 1024 else f"{n} B"
