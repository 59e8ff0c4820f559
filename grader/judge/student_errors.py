"""What to tell the student when a call on their code did not return a value.

`student_error_finding(obs, label)` reads the worker's plain error data and says, in both
languages, what happened in the student's terms: the file does not import (once per
exercise, see grader.report.text), a call ran past its time limit (and where the code
was), the process crashed (the signal by name), a recursion ran away, a name is missing,
or the student's own exception. No internal name (a worker, an EOFError) reaches a
student.

    >>> f = student_error_finding(Observation(False, error={"type": "WorkerDied", "signal": "SIGSEGV"}), "f(1)")
    >>> f.en
    'your code crashed the process: segmentation fault (SIGSEGV)'
"""

from __future__ import annotations

import re

from grader.model.calls import Observation
from grader.model.messages import say
from grader.model.results import Finding
from grader.sandbox import CHANNEL_LOST  # a worker's own exit code: its channel to the judge failed

# The error types the grader makes up (not raised by the student's code): never shown as
# "raised X", never matched against a mistake's exception.
GRADER_MADE = frozenset({"Timeout", "WorkerDied", "MissingName", "MissingSubmissionFile", "MalformedAnswer",
                         "UnsupportedResult", "Cancelled", "SubmissionRefused"})

SIGNALS = {
    "SIGSEGV": ("段错误（SIGSEGV）", "segmentation fault (SIGSEGV)"),
    "SIGBUS": ("总线错误（SIGBUS）", "bus error (SIGBUS)"),
    "SIGFPE": ("算术错误（SIGFPE）", "arithmetic error (SIGFPE)"),
    "SIGILL": ("非法指令（SIGILL）", "illegal instruction (SIGILL)"),
    "SIGABRT": ("程序中止（SIGABRT）", "aborted (SIGABRT)"),
    "SIGKILL": ("被强制结束（SIGKILL：内存用尽，或被系统结束）", "killed (SIGKILL: out of memory, or ended by the system)"),
    "SIGXCPU": ("超出 CPU 时间上限（SIGXCPU）", "over the CPU time limit (SIGXCPU)"),
    "SIGTERM": ("被结束（SIGTERM）", "terminated (SIGTERM)"),
}


def grader_made(obs: Observation) -> bool:
    """An error the grader reports for the student's code (a time-out, a crash, a file that does not import)."""
    err = obs.error or {}
    return err.get("type") in GRADER_MADE or err.get("import_error") is True


def _seconds(text: str) -> str:
    """`"1.28297 s"` -> `"1.3 s"`, `"0.00431 s"` -> `"0.0043 s"`: a limit as people read it."""
    number, _, unit = text.partition(" ")
    try:
        value = float(number)
    except ValueError:
        return text
    if 0 < value < 0.95:  # what was left of a limit: "0.004 s", never a bare "0 s"
        return f"{value:.2g} {unit or 's'}"
    return f"{value:.1f}".removesuffix(".0") + f" {unit or 's'}"


HEAVY_CHARS, HEAVY_LINES = 1_000_000, 100_000  # printed before a time-out: enough to cost time of its own


def _last_frame(where: str) -> str:
    """Where the student's code was at its limit (the innermost of its frames), or "".

    >>> _last_frame('  File "ex01_windows.py", line 53, in make_windows\\n    while True:')
    'ex01_windows.py, line 53 (make_windows)'
    """
    frames = re.findall(r'File "([^"]+)", line (\d+)(?:, in ([^\n]+))?', where or "")
    if not frames:
        return ""
    file, line, function = frames[-1]
    return f"{file}, line {line}" + (f" ({function.strip()})" if function.strip() else "")


def _printing_at(where: str) -> bool:
    """Whether the student's innermost line at the limit is a print call (the stack dump's line).

    >>> _printing_at('  File "ex01_windows.py", line 55, in make_windows\\n    print("window", k)')
    True
    """
    lines = [line for line in (where or "").splitlines() if line.strip(" ^~")]  # no caret line
    return bool(lines) and not lines[-1].lstrip().startswith("File ") and re.match(r"\s*print\(", lines[-1]) is not None


def _heavy_printing(output, where: str) -> tuple[str, str] | None:
    """(zh, en) naming the printing as what cost the time: the code printed that much, or it
    was printing at its limit."""
    total = getattr(output, "total", None)
    if total and (total[0] >= HEAVY_CHARS or total[1] >= HEAVY_LINES):
        from grader.report.humanize import nbytes_short

        size, lines = nbytes_short(total[0]), f"{total[1]:,}"
        zh, en = f"它在此之前打印了 {size}（{lines} 行）", f"it had printed {size} ({lines} lines) by then"
    elif _printing_at(where):
        zh, en = "它当时正在打印", "it was printing then"
    else:
        return None
    return (f"{zh}：打印本身就很花时间，多半就是它用完了时限；在循环里少打印，或者不打印",
            f"{en}: printing takes time of its own, and is likely what used up the limit; print less "
            f"(or nothing) inside loops")


def _timeout(err: dict, label: str, output: str) -> Finding:
    """A call stopped at its limit. "Maybe an endless loop" only with the line the code was
    still running at; printing heavy enough to cost the time is named as the cause."""
    limit, where = err.get("message", ""), err.get("traceback", "")
    # grader.run.budgets says why a call was not waited for: "1.5 s（中文 / English）"
    limit, _, note = limit.partition("（")
    note_zh, _, note_en = note.rstrip("）").partition(" / ")
    limit = _seconds(limit.strip())
    at = _last_frame(where)
    if err.get("import_error"):
        zh = f"导入这个文件超过 {limit} 仍没有结束"
        en = f"importing the file did not finish within {limit}"
        if at:
            zh += f"：模块顶层的代码当时还在 {at} 运行，可能是死循环"
            en += f": the code at module level was still running at {at}; it may be an endless loop"
        if note_zh:  # the limit was what was left of a budget ("0 s" alone would puzzle)
            zh, en = zh + f"（{note_zh}）", en + f" ({note_en or note_zh})"
        return Finding("import_error", label, zh=zh, en=en, traceback=where)
    if "不再等待" in note_zh:  # the same function timed out before in this exercise
        function = label.partition("(")[0] or "this function"
        return Finding("not_run", label, zh=f"没有再运行：{function} 在上面已经超时过一次",
                       en=f"not run again: {function} ran past its time limit above")
    if err.get("unstarted"):  # a budget used up before this call: nothing ran
        return Finding("not_run", label, zh=f"没有运行：{note_zh or '时间预算已用完'}",
                       en=f"not run: {note_en or note_zh or 'the time budget is used up'}")
    if err.get("timeout_kind") == "idle":  # it was waiting, not running: a sleep, input, a lock, a child
        left_zh, left_en = (f"（{note_zh}）", f" ({note_en or note_zh})") if note_zh else ("", "")  # only what was left
        zh = f"超时：你的代码等了超过 {limit}{left_zh}（sleep、等输入、等锁或等子进程）仍没有结束，已被终止"
        en = (f"timed out: your code kept waiting (a sleep, input, a lock, a child process) for over {limit}{left_en}, "
              f"stopped")
        if at:
            zh, en = zh + f"；当时在 {at}", en + f"; it was at {at}"
        return Finding("timeout", label, zh=zh, en=en, traceback=where, output=output)
    if note_zh:  # only what was left of a limit or a budget: not necessarily an endless loop
        zh = f"超时：运行超过 {limit}（{note_zh}）仍没有结束，已被终止"
        en = f"timed out: still running after {limit} ({note_en or note_zh}), stopped"
    else:
        zh = f"超时：运行超过 {limit} 仍没有结束，已被终止"
        en = f"timed out: still running after {limit}, stopped"
    heavy = _heavy_printing(output, where)
    if heavy:
        zh, en = f"{zh}；{heavy[0]}", f"{en}; {heavy[1]}"
    elif at and not note_zh:
        zh = f"超时：运行 {limit} 后仍在 {at} 运行，已被终止：可能是那里的死循环"
        en = f"timed out: still running at {at} after {limit}, stopped: maybe an endless loop there"
    return Finding("timeout", label, zh=zh, en=en, traceback=where, output=output)


def _crash(err: dict, label: str, output: str) -> Finding:
    where, signal, code = err.get("traceback", ""), err.get("signal"), err.get("exit_code")
    if signal:
        zh_what, en_what = SIGNALS.get(signal, (signal, signal))
        zh, en = f"你的代码让进程崩溃了：{zh_what}", f"your code crashed the process: {en_what}"
    elif code == CHANNEL_LOST:
        zh = (f"运行你代码的进程和评分程序之间的连接断了（退出码 {code}）：你的代码是不是关闭或替换了文件描述符"
              f"（os.close、os.closerange、os.dup2）？")
        en = (f"the process running your code lost its connection to the grader (exit status {code}): does your "
              f"code close or replace file descriptors (os.close, os.closerange, os.dup2)?")
    elif code is not None:
        zh = f"进程提前退出了（退出码 {code}）：你的代码是不是调用了 os._exit？"
        en = f"the process exited early (exit status {code}): does your code call os._exit?"
    else:
        zh, en = "运行你的代码的进程意外结束了", "the process running your code ended unexpectedly"
    return Finding("crash", label, zh=zh, en=en, traceback=where, output=output)


def missing_file_finding(label: str, name: str) -> Finding:
    """The exercise's file `name` is not in the submission folder."""
    return Finding("missing", label, zh=say("file_missing", "zh", name=name), en=say("file_missing", "en", name=name))


def student_error_finding(obs: Observation, label: str) -> Finding:
    """The standard finding for a student's call that did not return."""
    err = obs.error or {}
    kind_name = err.get("type", "")
    if err.get("not_implemented"):
        return Finding("not_implemented", label, zh="未完成", en="not implemented yet")
    if kind_name == "Timeout":
        return _timeout(err, label, obs.output)
    if kind_name == "WorkerDied":
        return _crash(err, label, obs.output)
    if kind_name == "SubmissionRefused":  # grader.sandbox.intake: a link, a special file, too much
        zh, _, en = str(err.get("message", "")).partition(" / ")
        return Finding("refused", label, zh=zh, en=en or zh)
    if kind_name == "MissingSubmissionFile":
        return missing_file_finding(label, err.get("message", ""))
    if kind_name == "MissingName":
        name = err.get("name") or "?"
        return Finding("missing", label, zh=f"文件里没有定义 {name}", en=f"{name} is not defined in the file")
    message = f"{kind_name}: {err.get('message', '')}"
    if err.get("import_error"):
        # An import of a file the worker did not read (a link, a FIFO): why, in each language.
        zh_why, _, en_why = str(err.get("not_read") or "").partition(" / ")
        zh_more, en_more = (f"（{zh_why}）", f" ({en_why or zh_why})") if zh_why else ("", "")
        if kind_name == "SyntaxError" and _not_utf8(str(err.get("message", ""))):
            zh_more, en_more = "\n" + say("not_utf8", "zh"), "\n" + say("not_utf8", "en")
        return Finding("import_error", label, zh=say("import_prefix", "zh") + message + zh_more,
                       en=say("import_prefix", "en") + message + en_more,
                       traceback=err.get("traceback", ""), output=obs.output)
    zh, en = f"你的代码抛出了异常 {message}", f"your code raised {message}"
    raised_in = raising_function(err.get("traceback", ""))
    if raised_in and not _names_it(label, raised_in):  # a round trip's label names decode; encode raised
        zh, en = f"你的 {raised_in} 抛出了异常 {message}", f"your {raised_in} raised {message}"
    frames = err.get("own_frames")
    if frames and kind_name == "RecursionError":
        zh += f"（你的代码递归了 {frames:,} 层：递归有没有走到终止条件？下面是最前和最后几层）"
        en += f" ({frames:,} calls deep in your code: does the recursion reach its base case? The first and last calls:)"
    return Finding("error", label, got=f"raised {kind_name}", zh=zh, en=en, traceback=err.get("traceback", ""),
                   output=obs.output, raised_in=raised_in)


_FRAME = re.compile(r'^\s*File "[^"]*", line \d+, in ([A-Za-z_]\w*)\s*$', re.MULTILINE)


def raising_function(traceback: str) -> str:
    """The function of the student's first frame (the one the kit called), or "".

    >>> raising_function('  File "ex13_bpe.py", line 80, in bpe_encode\\n    first = ids[0]')
    'bpe_encode'
    """
    match = _FRAME.search(traceback or "")
    return match.group(1) if match and match.group(1) != "<module>" else ""


def _names_it(label: str, name: str) -> bool:
    """Whether a check's label already starts with a call of `name`."""
    return re.match(rf"\s*(?:[\w.]+\.)?{re.escape(name)}\(", label or "") is not None


def _not_utf8(message: str) -> bool:
    """Python's words for a source file that is not UTF-8 (saved as GBK or UTF-16 by an editor on Windows).

    >>> _not_utf8("(unicode error) 'utf-8' codec can't decode byte 0xc1 in position 0: invalid start byte")
    True
    """
    return "Non-UTF-8 code" in message or "'utf-8' codec can't decode" in message \
        or "source code string cannot contain null bytes" in message  # UTF-16 (Notepad's "Unicode")
