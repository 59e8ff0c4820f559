"""Why a submission is refused, in the student's two languages (`grader.sandbox.intake`'s words).

    refuse("data", "link")   # SubmissionRefused: 提交被拒绝：data 是符号链接… / submission refused: data is a symbolic link…
    refuse("data", "link").alone   # 未读取：data 是符号链接… / not read: data is a symbolic link… (that entry alone)
"""

from __future__ import annotations

import os
import stat


class SubmissionRefused(Exception):
    """The submission folder holds something a submission may not (a link, a special file, too much).

    `reason` is a code (`link`, `special`, `not_a_folder`, `unreadable`, `changed`, `too_large`,
    `too_deep`, `too_many`, `over_total`), `parts` the entry's path inside the folder.
    """

    def __init__(self, zh: str, en: str, reason: str = "", parts: tuple[str, ...] = (), alone: str = ""):
        super().__init__(en)
        self.zh, self.en, self.reason, self.parts = zh, en, reason, parts
        self.alone = alone or self.message  # the words when this entry alone is not read

    message = property(lambda self: f"{self.zh} / {self.en}")


def shown(name: str) -> str:
    """A file name as text: its odd bytes (not UTF-8) as \\xNN."""
    return os.fsencode(name).decode("utf-8", "backslashreplace")


_WHY = {  # reason -> (zh, en) after the entry's name
    "link": ("是符号链接（提交只能包含自己的文件，不能是链接）",
             "is a symbolic link (a submission holds its own files, not links)"),
    "not_a_folder": ("不是文件夹", "is not a folder"),
    "unreadable": ("打不开", "cannot be opened ({})"),
    "changed": ("在读取时被换掉了", "changed while it was being read"),
    "too_large": ("太大（{} 字节，上限 {}）", "is too large ({} bytes, the cap is {})"),
}


FOLDER = "the folder"  # the submission as a whole, in a refusal's words (文件夹 in Chinese)


def refuse(what: str, reason: str, *args, parts=(), zh: str = "", en: str = "") -> SubmissionRefused:
    """The refusal of entry `what` for `reason` (`_WHY`'s words, or `zh` / `en` given)."""
    zh_why, en_why = (zh, en) if zh else _WHY[reason]
    zh_what = "文件夹" if what == FOLDER else what
    zh_said, en_said = f"{zh_what} {zh_why.format(*args)}", f"{what} {en_why.format(*args)}"
    return SubmissionRefused(f"提交被拒绝：{zh_said}", f"submission refused: {en_said}", reason, tuple(parts),
                             alone=f"未读取：{zh_said} / not read: {en_said}")


def special(what: str, mode: int, parts=()) -> SubmissionRefused:
    """The refusal of `what`, a FIFO, socket or device (never opened: a FIFO would block)."""
    kind = {stat.S_IFIFO: "FIFO", stat.S_IFSOCK: "socket", stat.S_IFCHR: "device", stat.S_IFBLK: "device"}.get(
        stat.S_IFMT(mode), "special file")
    return refuse(what, "special", parts=parts, zh=f"是特殊文件（{kind}），不是普通文件",
                  en=f"is a {kind}, not a regular file")
