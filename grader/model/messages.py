"""Every message the grader itself prints, in Chinese and English.

Messages that come from checks and mistakes carry their own two languages; these are the
grader's. `say(key, lang, **values)` formats one. `tests/test_messages.py` proves every
message exists in both languages with the same placeholders.
"""

from __future__ import annotations

import functools
import os

CATALOG: dict[str, dict[str, str]] = {
    "not_implemented": {"zh": "未完成", "en": "not implemented yet"},
    "not_implemented_line": {"zh": "未完成 / not implemented yet：在 {file} 里实现后再运行 `grade {id}`",
                             "en": "not implemented yet: fill in {file}, then run `grade {id}`"},
    "file_missing": {"zh": "{name} 不在提交目录中", "en": "{name} is not in the submission folder"},
    "file_missing_line": {"zh": "找不到 {file}（删掉或改名了？）：把它放回原处后再运行 `grade {id}`；"
                                "原始的练习文件可以用 `grade init 新文件夹` 重新生成一份",
                          "en": "{file} is not there (deleted or renamed?): put it back, then run `grade {id}`; "
                                "`grade init NEW_FOLDER` writes a fresh copy of every exercise file"},
    "expected": {"zh": "期望", "en": "expected"},
    "got": {"zh": "得到", "en": "got"},
    "diagnosis": {"zh": "诊断", "en": "diagnosis"},
    "reread": {"zh": "重读 {section}", "en": "reread {section}"},
    "same_diagnosis": {"zh": "同上", "en": "the same as above"},
    "see_hint": {"zh": "提示：grade hint {id} --level {level}", "en": "hint: grade hint {id} --level {level}"},
    # --show-answers (instructors and CI only; a student's report never has them)
    "answer_line": {"zh": "答案（教师）：{answer}", "en": "answer (instructors): {answer}"},
    "fix_line": {"zh": "改法（教师）：{fix}", "en": "fix (instructors): {fix}"},
    "show_answers_formats": {"zh": "--show-answers 只用于 text 和 json 格式", "en": "--show-answers works with the text and json formats only"},
    "show_answers_release": {"zh": "这个发行版不含参考答案（--show-answers 只供教师使用）",
                             "en": "this release has no reference solutions (--show-answers is for instructors)"},
    "your_traceback": {"zh": "你的代码的调用栈：", "en": "your code's traceback:"},
    "your_output": {"zh": "你的代码打印了：", "en": "your code printed:"},
    "your_output_cut": {"zh": "你的代码打印了 {size}（{lines} 行），超过工具包的上限；下面是前 {kept} 行：",
                        "en": "your code printed {size} ({lines} lines), over the kit's limit; its first {kept} lines:"},
    "more_lines": {"zh": "… 还有 {count} 行", "en": "… {count} more lines"},
    "same_as_above": {"zh": "（和上面的一样）", "en": "(the same as above)"},
    "your_code_was": {"zh": "当时你的代码运行到：", "en": "your code was here:"},
    "import_failed": {"zh": "{file} 没能导入，这个练习的检查都没法运行：",
                      "en": "{file} does not import, so none of this exercise's checks could run:"},
    "import_prefix": {"zh": "这个文件没能导入：", "en": "the file does not import: "},
    "not_utf8": {"zh": "这个文件不是 UTF-8 编码（Windows 上的编辑器常把中文存成 GBK，记事本的“Unicode”是 UTF-16）。请用 UTF-8 重新保存："
                       "VS Code 里点右下角的编码 →「通过编码保存」→ UTF-8；记事本里「另存为」时编码选 UTF-8。",
                 "en": "the file is not UTF-8 (editors on Windows often save Chinese text as GBK; Notepad's "
                       "\"Unicode\" is UTF-16). Save it again as "
                       "UTF-8: in VS Code, click the encoding at the bottom right → Save with Encoding → UTF-8; in "
                       "Notepad, choose UTF-8 under Encoding in Save As."},
    "could_not_run": {"zh": "{count} 项检查没法运行（见上面的错误）：{names}",
                      "en": "{count} check(s) could not run (see the error above): {names}"},
    "running": {"zh": "正在运行：{title}", "en": "running: {title}"},
    "manual_pending": {"zh": "待人工评分", "en": "awaiting manual grading"},
    "manual_missing": {"zh": "还没有作答", "en": "no answer yet"},
    "total": {"zh": "总分", "en": "total"},
    "all_passed": {"zh": "全部通过！", "en": "all checks passed!"},
    "some_failed": {"zh": "{failed} 项检查未通过", "en": "{failed} check(s) failed"},
    "manual_unanswered": {"zh": "还有 {count} 道书面回答没写（人工评分）", "en": "{count} written answer(s) still empty (graded by hand)"},
    "hidden_note": {"zh": "正式评分还会运行隐藏测试。", "en": "The official grade also runs hidden tests."},
    "own_pieces_note": {"zh": "ex10–ex12 在这里用你自己的 ex08、ex09、ex11 文件评分（前面的错误会在这里再出现）；"
                                "正式评分换成正确的实现。",
                        "en": "ex10–ex12 are graded here with your own ex08, ex09 and ex11 files (an earlier bug shows "
                              "again); the official grade swaps in correct ones."},
    "status_passed": {"zh": "通过", "en": "passed"},
    "status_failed": {"zh": "未通过", "en": "failed"},
    "status_not_started": {"zh": "未开始", "en": "not started"},
    "status_not_implemented": {"zh": "未完成", "en": "not implemented"},
    # the columns of grade status and grade list
    "status_exercise": {"zh": "练习", "en": "exercise"},
    "status_title": {"zh": "标题", "en": "title"},
    "status_state": {"zh": "状态", "en": "state"},
    "status_last_points": {"zh": "最近一次", "en": "last"},
    "status_best_points": {"zh": "最好一次", "en": "best"},
    "status_graded_at": {"zh": "评分时间", "en": "graded"},
    "status_section": {"zh": "章节", "en": "section"},
    "list_header": {"zh": "练习", "en": "exercises"},
    "hint_header": {"zh": "{id} 提示 {level}/{total}", "en": "{id} hint {level}/{total}"},
    "hint_last": {"zh": "（这是最后一级提示）", "en": "(this is the last hint)"},
    "unknown_exercise": {"zh": "未知练习 {id}；可用：{known}", "en": "unknown exercise {id}; known: {known}"},
    "missing_folder": {"zh": "找不到提交目录 {path}", "en": "submission folder not found: {path}"},
    "no_reference": {"zh": "这个发行版不含参考答案（--reference 只供教师使用）",
                     "en": "this release has no reference solutions (--reference is for instructors)"},
    "data_missing": {"zh": "找不到 tiny Shakespeare 数据：{detail}", "en": "tiny Shakespeare is not available: {detail}"},
    "ex12_table": {"zh": "你的训练记录与课文的表格", "en": "your training log beside the lesson's table"},
    "check_ok": {"zh": "自检通过：{detail}", "en": "self-check passed: {detail}"},
    "check_bad": {"zh": "自检失败：{detail}", "en": "self-check failed: {detail}"},
    "grader_error": {"zh": "评分程序内部错误（不是你的错）", "en": "internal grader error (not your fault)"},
    # grade data (labels padded to one width in each language)
    "data_path": {"zh": "路径：  ", "en": "path:  "},
    "data_size": {"zh": "大小：  ", "en": "size:  "},
    "data_bytes": {"zh": "{size} 字节", "en": "{size} bytes"},
    "data_sha256": {"zh": "sha256：", "en": "sha256:"},
    "data_ok": {"zh": "核对无误", "en": "OK"},
    "data_cached": {"zh": "缓存：  ", "en": "cached:"},
    # hints
    "hint_more": {"zh": "下一级：grade hint {id} --level {level}", "en": "next level: grade hint {id} --level {level}"},
    "hint_levels": {"zh": "{id} 的提示只有第 1 到第 {total} 级", "en": "{id} has hint levels 1 to {total}"},
    # progress (grade status, grade list)
    "never": {"zh": "还没评过", "en": "never graded"},
    "changed_since": {"zh": "（之后改过）", "en": "(changed since)"},
    "progress_summary": {"zh": "进度 {done}/{total} {bar}  得分 {score}/{possible}",
                         "en": "progress {done}/{total} {bar}  points {score}/{possible}"},
    # grade watch
    "watch_header": {"zh": "grade watch · {id} {title} · {file}", "en": "grade watch · {id} {title} · {file}"},
    "watch_keys": {"zh": "保存文件即重新评分 · h 提示 · l 列表 · n 下一题 · r 重评 · q 退出",
                   "en": "save the file to re-grade · h hint · l list · n next · r re-grade · q quit"},
    "watch_no_keys": {"zh": "保存文件即重新评分 · 标准输入不是终端，单键不可用 · Ctrl-C 退出",
                      "en": "save the file to re-grade · stdin is not a terminal, no keys · Ctrl-C quits"},
    "watch_grading": {"zh": "正在评分 {id} …", "en": "grading {id} …"},
    "watch_took": {"zh": "评分用时 {seconds} 秒 · {time}", "en": "graded in {seconds} s · {time}"},
    "watch_passed": {"zh": "{id} 通过！下一题：{next}（保存 {file} 时评分）",
                     "en": "{id} passed! Next: {next} (graded when you save {file})"},
    "watch_all_done": {"zh": "全部练习都通过了！按 q 退出。", "en": "every exercise passes! Press q to quit."},
    "watch_bye": {"zh": "已退出 grade watch。进度保存在 {path}", "en": "left grade watch. Progress is kept in {path}"},
    "watch_cancelled": {"zh": "文件又保存了：重新评分 …", "en": "saved again: grading the new version …"},
    "watch_queued": {"zh": "保存了 {ids}：{current} 评完后接着评", "en": "{ids} saved: graded once {current} is done"},
    "watch_error": {"zh": "评分没能完成：{detail}", "en": "grading did not finish: {detail}"},
    # grade batch: the time bound (grader.cohort.batch.time_bound), the answers computed ahead
    # (grader.cohort.warmup) and the summary line; Chinese beside English unless --lang en
    "batch_bound": {"zh": "{pending} 名待评：每名学生的代码最多 {each}，{judges} 个评分进程合计最多 {total}"
                          "（另加评分程序自己的时间：各项比较和最后写成绩册，通常几秒）/ {pending} to grade: at most "
                          "{each} of student code each, {total} in all on {judges} judge(s), plus the grader's own "
                          "time (its comparisons and the gradebook at the end, usually seconds)",
                    "en": "{pending} to grade: at most {each} of student code each, {total} in all on {judges} "
                          "judge(s), plus the grader's own time (its comparisons and the gradebook at the end, "
                          "usually seconds)"},
    "batch_warm": {"zh": "参考答案已预先算好（{seconds} s，每个 OUT 一次）/ the slow reference answers computed "
                         "ahead in {seconds} s (once per OUT)",
                   "en": "the slow reference answers computed ahead in {seconds} s (once per OUT)"},
    "batch_strays": {"zh": "不是文件夹，未评分 / not folders, not graded: {names}",
                     "en": "not folders, not graded: {names}"},
    "batch_other_outs": {"zh": "另一次 grade batch 的输出目录，不是学生，未评分 / another grade batch's OUT, not a "
                               "student, not graded: {names}",
                         "en": "another grade batch's OUT, not a student, not graded: {names}"},
    "batch_summary": {"zh": "{n} 名学生 / students ({noted} 有备注 / with a note), 平均 / mean {mean}/{total} -> "
                            "{grades}, {results}",
                      "en": "{n} students ({noted} with a note), mean {mean}/{total} -> {grades}, {results}"},
    "batch_summary_one": {"zh": "1 名学生 / student ({noted} 有备注 / with a note), 平均 / mean {mean}/{total} -> "
                                "{grades}, {results}",
                          "en": "1 student ({noted} with a note), mean {mean}/{total} -> {grades}, {results}"},
    # the gradebook's note column, past its first problems (grader.cohort.gradebook.note_text)
    "note_more": {"zh": "另有 {more} 项", "en": "and {more} more"},
    # the grader's own problems (grader.sandbox.failures): nothing of the submission being graded is recorded
    "overloaded": {"zh": "评分中断：这台机器太忙了，一次时限 {limit} 秒的调用等了 {wall} 秒都没分到足够的 CPU。"
                         "这是评分环境的问题，不是提交的代码造成的；没有记分。请在不那么忙的机器上重新运行（会接着评）。",
                   "en": "grading stopped: this machine was too busy: a call with a {limit} s limit waited {wall} s "
                         "without getting enough of a CPU. The grading machine's problem, not the submission's; "
                         "nothing was scored. Run it again on a less busy machine (it resumes)."},
    "zygote_gone": {"zh": "评分中断：启动工作进程的 zygote（pid {pid}）结束了，也没能重新启动。这次的结果不算，"
                          "也没有写出；请重新运行。",
                    "en": "grading stopped: the zygote that starts the workers (pid {pid}) ended and could not be "
                          "started again. No result of this run counts or was written: run it again."},
    "no_process": {"zh": "评分中断：系统 30 秒内都没能给评分程序一个新进程（这个用户或整台机器的进程数到了上限，"
                         "被别的程序占着），不是提交的代码造成的。这次的结果不算，也没有写出；请稍后重新运行。",
                   "en": "grading stopped: for 30 s the system refused the grader a new process (the user's or the "
                         "machine's process limit, held by other programs), not the submission's code. No result of "
                         "this run counts or was written: run it again later."},
    "zygote_gone_batch": {"zh": "评分中断：启动工作进程的 zygote（pid {pid}）结束了，也没能重新启动。当时正在评的学生没有"
                                "记分；此前评完的学生已保存。重新运行同一条命令，会接着评剩下的学生。",
                          "en": "grading stopped: the zygote that starts the workers (pid {pid}) ended and could not "
                                "be started again. The students being graded then were not scored; those graded "
                                "before are saved. Run the same command again to grade the rest."},
    # grade all --format F --out FILE, several pairs (grader.run.outputs)
    "outputs_unpaired": {"zh": "{formats} 个 --format 配 {outs} 个 --out：一次写几种格式时，每个 --format 后面跟一个 "
                               "--out（按顺序配对）",
                         "en": "{formats} --format for {outs} --out: to write several formats in one run, give each "
                               "--format an --out (paired in order)"},
    "outputs_twice": {"zh": "{path} 给了两次（{first} 和 {second}）：每种格式写进自己的文件",
                      "en": "{path} is given twice ({first} and {second}): each format needs a file of its own"},
    "watch_start": {"zh": "正在加载 torch 与参考答案（只在开始时一次）…",
                    "en": "loading torch and the reference (once, at the start) …"},
    # pictures
    "shape_pipeline": {"zh": "形状流水线（你的 trace_shapes）", "en": "shape pipeline (your trace_shapes)"},
    "shape_missing": {"zh": "（缺）", "en": "(missing)"},
    "shape_labels": {"zh": "flat_labels [B*T]：{got}", "en": "flat_labels [B*T]: {got}"},
    "shapes_not_dict": {"zh": "trace_shapes 应返回 dict，得到 {got}", "en": "trace_shapes should return a dict, got {got}"},
    "history_empty": {"zh": "（history 是空的，没有可画的曲线）", "en": "(history is empty: no curve to draw)"},
    "yours": {"zh": "你的", "en": "yours"},
    "lesson": {"zh": "课文", "en": "lesson"},
    "loss_curve": {"zh": "loss 曲线（第 {first} 步 → 第 {last} 步，同一纵轴）",
                   "en": "loss curve (step {first} → step {last}, one scale)"},
    "picture_at": {"zh": "图：{path}", "en": "picture: {path}"},
    "picture_in_english": {"zh": "（图里的文字是英文：这台电脑上没找到能显示中文的字体。装一个中文字体，例如 Debian/Ubuntu 的 "
                                 "fonts-noto-cjk 或 fonts-wqy-microhei，图就会用中文。）",
                           "en": "(the picture's labels are in English: no font on this computer draws Chinese. Install "
                                 "one, e.g. Debian/Ubuntu's fonts-noto-cjk or fonts-wqy-microhei, for Chinese labels.)"},
    "loss_png_title": {"zh": "ex12：你的 loss 曲线与课文的", "en": "ex12: your loss curve beside the lesson's"},
    "first_difference": {"zh": "从下标 {index} 起不同：期望 {expected}，得到 {got}（期望共 {len_expected} 项，你的有 {len_got} 项）",
                         "en": "differs from index {index}: expected {expected}, got {got} ({len_expected} items expected, yours has {len_got})"},
    "difference_at_start": {"zh": "第一项（下标 0）就不同：", "en": "the very first item (index 0) differs:"},
    "difference_head": {"zh": "第一个不同在下标 {index}（它前面的 {same} 项都对）：",
                        "en": "the first difference is at index {index} (the {same} items before it agree):"},
    # Gradescope (grader.report.gradescope, grader.build.gradescope_run): what a student reads there
    "gradescope_exercise": {"zh": "公开检查 {score}/{max} 分；隐藏检查（{hidden} 分）{when}",
                            "en": "public checks {score}/{max}; hidden checks ({hidden} points) {when}"},
    "gradescope_after_published": {"zh": "在成绩发布后显示", "en": "shown once grades are published"},
    "gradescope_after_due_date": {"zh": "在截止日期后显示", "en": "shown after the due date"},
    "gradescope_visibility": {"zh": "--hidden-visibility 只能是 {choices}，不能是 {value}：Gradescope 的 hidden 永远不显示"
                                    "（学生也看不到总分），只适合不计分的测试，而隐藏检查都计分",
                              "en": "--hidden-visibility must be one of {choices}, not {value}: Gradescope's hidden is never "
                                    "shown (nor is the student's total), for tests without points only, and every hidden "
                                    "check carries points"},
    "gradescope_files_graded": {"zh": "评分的文件：{files}", "en": "Files graded: {files}"},
    "gradescope_unreadable": {"zh": "找到了但读不出来（0 分；请重新上传：不压缩，或放进一个新的 zip）：{files}",
                              "en": "Found but could not be read (0 points; upload them again, unzipped or in a new zip): {files}"},
    "gradescope_not_found": {"zh": "没有找到（0 分）：{files}", "en": "Not found (0 points): {files}"},
    "gradescope_nothing_found": {"zh": "上传的内容里没有练习文件：文件名要和 exercises/ 里的一样（例如 {example}）。",
                                 "en": "No exercise file was found in the upload: name them as in exercises/ (e.g. {example})."},
    "gradescope_could_not_grade": {"zh": "自动评分没能给这份提交评分（grade 以 {code} 结束）。请告诉课程助教。",
                                   "en": "The autograder could not grade this submission (grade exited with {code}). "
                                         "Please tell the course staff."},
}


# click's own usage errors (a missing argument, an unknown option or command), in Chinese:
# click's English message texts (its gettext msgids, as formatted) and their translations, the
# more specific first. A `{message}` field is itself translated; the other fields are kept.
CLICK_ZH: tuple[tuple[str, str], ...] = (
    ("Usage:", "用法："),
    ("Try '{command} {option}' for help.", "运行 '{command} {option}' 查看帮助。"),
    ("Error: {message}", "错误：{message}"),
    ("{message} Choose from:\n\t{choices}", "{message}可选：\n\t{choices}"),
    ("{message} Did you mean {possibility}?", "{message}是不是想用 {possibility}？"),
    ("{message} (Did you mean one of: {possibilities}?)", "{message}（是不是想用其中之一：{possibilities}？）"),
    ("Missing argument {name}.", "缺少参数 {name}。"),
    ("Missing option {name}.", "缺少选项 {name}。"),
    ("Missing parameter {name}.", "缺少参数 {name}。"),
    ("No such option {name}.", "没有这个选项：{name}。"),
    ("No such option: {name}", "没有这个选项：{name}"),
    ("No such command {name}.", "没有这个命令：{name}。"),
    ("Got unexpected extra argument ({args})", "多出了参数（{args}）"),
    ("Got unexpected extra arguments ({args})", "多出了参数（{args}）"),
    ("Option {name} requires an argument.", "选项 {name} 后面要跟一个值。"),
    ("Option {name} requires {n} arguments.", "选项 {name} 后面要跟 {n} 个值。"),
    ("Option {name} does not take a value.", "选项 {name} 后面不跟值。"),
    ("Argument {name} takes {n} values.", "参数 {name} 要 {n} 个值。"),
    ("Invalid value for {name}: {message}", "{name} 的值无效：{message}"),
    ("Invalid value: {message}", "值无效：{message}"),
    ("{value} is not one of {choices}.", "{value} 不是 {choices} 之一。"),
    ("{value} is not {choice}.", "{value} 不是 {choice}。"),
    ("{value} is not a valid integer.", "{value} 不是整数。"),
    ("{value} is not a valid float.", "{value} 不是数。"),
    ("{value} is not in the range {range}.", "{value} 不在 {range} 之内。"),
    ("File {name} does not exist.", "文件 {name} 不存在。"),
    ("Directory {name} does not exist.", "文件夹 {name} 不存在。"),
    ("Path {name} does not exist.", "路径 {name} 不存在。"),
    ("File {name} is a directory.", "{name} 是文件夹，不是文件。"),
    ("Directory {name} is a file.", "{name} 是文件，不是文件夹。"),
    ("{kind} {name} is not readable.", "{name} 读不了。"),
    ("{kind} {name} is not writable.", "{name} 写不了。"),
)


def click_text(text: str, lang: str) -> str:
    """One of click's own messages in `lang` (CLICK_ZH); a text it does not know stays as it is.

    >>> click_text("Invalid value for '--lang': 'fr' is not one of 'zh', 'en'.", "zh")
    "'--lang' 的值无效：'fr' 不是 'zh', 'en' 之一。"
    >>> click_text("No such option '--colour'. Did you mean '--color'?", "zh")
    "没有这个选项：'--colour'。是不是想用 '--color'？"
    """
    if lang == "en":
        return text
    for pattern, zh in _click_patterns():
        found = pattern.fullmatch(text)
        if found:
            fields = found.groupdict()
            if "message" in fields:
                fields["message"] = click_text(fields["message"], lang)
            return zh.format(**fields)
    return text


@functools.cache
def _click_patterns() -> list:
    """CLICK_ZH's English texts as patterns: the literal words, each `{field}` any text."""
    import re

    patterns = []
    for en, zh in CLICK_ZH:
        parts = re.split(r"\{(\w+)\}", en)  # literal, field, literal, field, …
        regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.+?)" for i, p in enumerate(parts))
        patterns.append((re.compile(regex, re.DOTALL), zh))
    return patterns


def section_text(section: str, lang: str) -> str:
    """A course.toml or mistake section in the report's language; quotes of the course text stay.

    >>> section_text("5.2、5.7 练习 1", "en")
    'section 5.2, 5.7 exercise 1'
    >>> section_text("bigram 一课「2.49 这条基线」「优化器：第一次用现成的」", "en")
    'the bigram lesson, “2.49 这条基线”, “优化器：第一次用现成的”'
    """
    if lang != "en":
        return section
    import re

    parts = re.split(r"(「[^」]*」)", section)  # quotes of the course text stay as they are
    for i in range(0, len(parts), 2):  # the words around the quotes
        text = re.sub(r"练习\s*(\d+)", r"exercise \1", parts[i])
        text = re.sub(r"(\S+)\s*一课", r"the \1 lesson, ", text)
        text = re.sub(r"\s*、\s*", ", ", text)
        parts[i] = re.sub(r"\s*[与和及]\s*", " and ", text)
    text = ", ".join(p.strip() for p in parts if p.strip()) if len(parts) > 1 else parts[0]
    text = text.replace("「", "“").replace("」", "”").replace(", and,", " and")
    text = re.sub(r",\s*,", ",", re.sub(r"\s+", " ", text)).strip().rstrip(",")
    return f"section {text}" if text[:1].isdigit() else text


def say(key: str, lang: str, **values) -> str:
    entry = CATALOG[key]
    return entry["en" if lang == "en" else "zh"].format(**values)


def default_lang() -> str:
    """--lang wins; then GRADE_LANG; then an English locale gives English; else Chinese."""
    explicit = os.environ.get("GRADE_LANG")
    if explicit in ("zh", "en"):
        return explicit
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "en" if value.lower().startswith("en") else "zh"
    return "zh"
