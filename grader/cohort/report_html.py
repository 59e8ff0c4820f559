"""OUT/report.html: a cohort at a glance, for the instructor preparing the next class.

Read from the gradebook (`results.json`, the shape `grade batch` and `grade merge` write) and,
when the students' folders are at hand, their files:

- the roster: every student with their total, their points per exercise, the review flags
  (code that reaches for the grader's internals), the note on what was not read, and a link
  to their own report file in OUT;
- the score distribution of each exercise (and of the total) as bars in plain HTML/CSS;
- the checks failed most, counting only students who attempted the exercise (a stub fails
  every check and would drown the signal; those are counted apart as "not done");
- the diagnosed mistakes (a failed check's `diagnosis`, the id of a `grader/mistakes/exNN.py`
  Mistake) with how many students made each, and the sections of the course text to revisit
  in class, most students first;
- submissions suspiciously alike, in clusters (`grader.cohort.similarity`, stub excluded):
  every student alike to another, identical files as one version of their cluster;
- everything refused: submissions with a note, and the entries of DIR that are no student's
  folder (a `sam.zip` never unpacked), which `grade batch` otherwise says only on stderr.

The page is in the language asked: its words, the exercises' titles, the checks' names and
the sections of the course text (the feedback messages and notes stay as the gradebook
wrote them).

Rendered by jinja2 with autoescaping on: student names are folder names, chosen by students
(`<img src=x onerror=…>` is a legal folder name) and shown as text, never as markup.

Worked example: a book with two students of ex01 scored 10/10 and 0/10 (stub) gives
`cohort_summary(book, course, "en")["exercises"][0]` with `mean` 5.0, `full` 1, `not_done` 1
and one student in the "0" bar and one in the "100%" bar.
"""

from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Mapping

from grader.model.course import Course, Text
from grader.model.files import atomic_write
from grader.model.messages import section_text

NOT_DONE = ("not_implemented", "missing")
TOP_CHECKS = 15
NAMES_SHOWN = 12  # students named beside a mistake (the rest counted)
# bars of a distribution: 0, then quarters of the maximum, then full marks
BINS = ("0", "1–24%", "25–49%", "50–74%", "75–99%", "100%")

LABELS = {
    "zh": {
        "title": "班级评分报告", "students": "名学生", "student": "名学生", "mean": "平均", "median": "中位数",
        "full": "满分", "not_done": "未完成", "distribution": "各练习的分数分布", "total": "总分",
        "failed": "失败最多的检查", "check": "检查", "exercise": "练习", "failed_n": "做了但没通过",
        "not_done_n": "未完成", "message": "最常见的反馈", "mistakes": "诊断出的常见错误",
        "mistake": "错误", "count": "学生数", "who": "哪些学生", "more": "另有 {n} 名", "section": "课上重讲的小节", "sections": "建议课上重讲",
        "similar": "疑似相似的提交", "pair": "学生", "share": "各自代码的重合比例", "tokens": "重合长度",
        "no_mistakes": "没有诊断出已知错误。", "no_failed": "没有失败的检查。",
        "no_similar": "没有超过阈值的相似提交。",
        "similar_note": "copydetect 比较每两名学生同一练习的文件（变量名、注释不影响），练习骨架本身不算；"
                        "任一方至少 {pct}% 的代码出现在对方文件里，两人就算相似，彼此相似或经由别人相似的学生归为一组。"
                        "完全相同的文件是同一个版本（用 = 连起来）。相似不等于抄袭，请人工核实。",
        "clusters": "{students} 名学生相似，分成 {n} 组", "versions": "{n} 个版本",
        "same_file": "文件完全相同", "closest": "与版本 {other} 最像：{share}% / {other_share}%，重合 {tokens}",
        "roster": "全部学生", "student_col": "学生", "review": "需要人工复核", "report": "报告",
        "own_report": "打开", "not_read": "未读取的内容", "stray": "不是文件夹，没有评分",
        "flagged": "⚑ {n} 处", "no_roster": "没有学生。",
        "no_sources": "未比较相似度：{why}",
        "no_folder": "没有给出提交目录（grade report OUT --submissions DIR）",
        "no_copydetect": "没有安装 copydetect（pip install copydetect）",
        "refused": "被拒绝的提交与未读取的文件", "note": "原因",
    },
    "en": {
        "title": "Cohort grading report", "students": "students", "student": "student", "mean": "mean", "median": "median",
        "full": "full marks", "not_done": "not done", "distribution": "Score distribution per exercise",
        "total": "Total", "failed": "Checks failed most", "check": "check", "exercise": "exercise",
        "failed_n": "attempted, failed", "not_done_n": "not done", "message": "most common feedback",
        "mistakes": "Diagnosed mistakes", "mistake": "mistake", "count": "students", "who": "who",
        "more": "and {n} more",
        "section": "section to revisit in class", "sections": "Revisit in class",
        "similar": "Suspiciously similar submissions", "pair": "students",
        "share": "share of each one's own code", "tokens": "matched length",
        "no_mistakes": "No known mistake was diagnosed.", "no_failed": "No check failed.",
        "no_similar": "No pair above the threshold.",
        "similar_note": "copydetect compares every two students' files of one exercise (renamed variables "
                        "and comments do not hide a copy); the exercise's stub is not counted. Two students "
                        "are alike when at least {pct}% of either one's code is in the other's file; students "
                        "alike to each other, directly or through another, are one cluster, and the very same "
                        "file is one version (names joined by =). Similar is not proof of copying: look at the "
                        "files.",
        "clusters": "{students} students alike, in {n} cluster(s)", "versions": "{n} versions",
        "same_file": "the very same file", "closest": "closest to version {other}: {share}% / {other_share}%, "
                                                      "{tokens} matched",
        "roster": "Every student", "student_col": "student", "review": "flagged for review", "report": "report",
        "own_report": "open", "not_read": "not read", "stray": "not a folder: not graded",
        "flagged": "⚑ {n}", "no_roster": "No students.",
        "no_sources": "Similarity not computed: {why}",
        "no_folder": "no submissions folder given (grade report OUT --submissions DIR)",
        "no_copydetect": "copydetect is not installed (pip install copydetect)",
        "refused": "Refused submissions and files not read", "note": "why",
    },
}


# --------------------------------------------------------------------------- the numbers


def distribution(scores: list[int], max_score: int) -> list[dict]:
    """Bars for scores out of max_score: [{"label": "0", "count": 2, "height": 100}, …] (height in %)."""
    counts = [0] * len(BINS)
    for score in scores:
        share = score / max_score if max_score else 0.0
        counts[0 if share <= 0 else len(BINS) - 1 if share >= 1 else 1 + min(int(share * 4), 3)] += 1
    top = max(counts) or 1
    return [{"label": label, "count": n, "height": round(100 * n / top)} for label, n in zip(BINS, counts)]


def _stats(scores: list[int], max_score: int) -> dict:
    return {"mean": round(statistics.fmean(scores), 1) if scores else 0.0,
            "median": statistics.median(scores) if scores else 0, "max_score": max_score,
            "full": sum(1 for s in scores if max_score and s >= max_score), "bins": distribution(scores, max_score)}


def _mistake_index(ex_id: str) -> dict:
    """id -> Mistake for an exercise (empty when the course has no mistakes module for it)."""
    from grader.judge.mistakes import mistakes_for

    try:
        return {m.id: m for m in mistakes_for(ex_id)}
    except Exception:  # noqa: BLE001  a course of someone else's: no diagnosis names, the counts stay
        return {}


def cohort_summary(book: dict, course: Course | None, lang: str) -> dict:
    """What the page shows, as plain data (the template only lays it out)."""
    headers = book.get("exercises", [])
    students = book.get("students", {})
    per_ex: dict[str, list[int]] = {e["id"]: [] for e in headers}
    not_done: dict[str, int] = defaultdict(int)
    checks: dict[tuple, dict] = {}
    made: dict[tuple, set] = defaultdict(set)
    for name, result in students.items():
        for ex in result.get("exercises", []):
            if ex.get("id") not in per_ex:
                continue
            per_ex[ex["id"]].append(ex.get("score", 0))
            skipped = ex.get("status") == "not_implemented"
            not_done[ex["id"]] += skipped
            for c in ex.get("checks", []):
                if c.get("passed") or c.get("manual"):
                    continue
                row = checks.setdefault((ex["id"], c.get("name")), {
                    "exercise": ex["id"], "name": c.get("name"), "title": c.get("title") or c.get("name"),
                    "failed": 0, "not_done": 0, "messages": defaultdict(int)})
                if skipped or c.get("kind") in NOT_DONE:
                    row["not_done"] += 1
                else:
                    row["failed"] += 1
                    row["messages"][c.get("message") or ""] += 1
                diagnosis = c.get("diagnosis")
                diagnosis = diagnosis.get("id") if isinstance(diagnosis, dict) else diagnosis
                if diagnosis:
                    made[(ex["id"], str(diagnosis))].add(name)
    exercises = [{"id": e["id"], "title": _title(course, e, lang), "not_done": not_done[e["id"]],
                  **_stats(per_ex[e["id"]], e.get("max_score", 0))} for e in headers]
    totals = [r.get("score", 0) for r in students.values()]
    total_max = sum(e.get("max_score", 0) for e in headers)
    failed = sorted((r for r in checks.values() if r["failed"]), key=lambda r: (-r["failed"], r["exercise"], r["name"]))
    for row in failed:
        row["message"] = max(row.pop("messages").items(), key=lambda kv: (kv[1], kv[0]))[0]
        row["title"] = _check_titles(course, row["exercise"]).get(row["name"].partition("[")[0], row["title"])
        if isinstance(row["title"], Text):
            row["title"] = row["title"](lang)
    return {"students": len(students), "exercises": exercises, "total": _stats(totals, total_max),
            "failed_checks": failed[:TOP_CHECKS], "mistakes": _mistakes(made, course, lang),
            "sections": _sections(made, course, lang), "roster": _roster(headers, students),
            "refused": [{"name": n, "note": r["note"]} for n, r in sorted(students.items()) if r.get("note")]}


def _roster(headers: list[dict], students: dict) -> list[dict]:
    """Every student: total, points per exercise (None: not in their result), review reasons, note."""
    rows = []
    for name, result in sorted(students.items()):
        scores = {e.get("id"): e for e in result.get("exercises", []) if isinstance(e, dict)}
        cells = []
        for header in headers:
            ex = scores.get(header["id"])
            score, top = (ex.get("score", 0), header.get("max_score", 0)) if ex else (None, header.get("max_score", 0))
            kind = ("none" if ex is None or ex.get("status") in NOT_DONE else "zero" if not score
                    else "full" if top and score >= top else "part")
            cells.append({"id": header["id"], "score": score, "kind": kind})
        review = result.get("review") if isinstance(result.get("review"), dict) else {}
        rows.append({"name": name, "score": result.get("score", 0),
                     "max_score": sum(h.get("max_score", 0) for h in headers), "exercises": cells,
                     "review": [r for r in review.get("reasons") or [] if isinstance(r, str)],
                     "note": result.get("note") or "", "link": None})
    return rows


def _title(course: Course | None, header: dict, lang: str) -> str:
    """An exercise's title in the page's language (the gradebook's, for a course not at hand)."""
    if course is not None and _has(course, header["id"]):
        return course.exercise(header["id"]).title(lang)
    return header.get("title", header["id"])


def _check_titles(course: Course | None, ex_id: str) -> dict:
    """check name -> its title (a Text), read from the check module's docstrings (not imported)."""
    import ast

    from grader.model.results import title_from_doc

    if course is None or not _has(course, ex_id):
        return {}
    try:
        tree = ast.parse((course.unit(ex_id) / "checks.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return {}
    return {node.name: title_from_doc(ast.get_docstring(node), node.name) for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_")}


def _mistakes(made: dict, course: Course | None, lang: str) -> list[dict]:
    rows = []
    for (ex_id, mistake_id), names in made.items():
        known = _mistake_index(ex_id).get(mistake_id)
        if known:
            section = section_text(known.section, lang)
        else:
            section = course.exercise(ex_id).section(lang) if course and _has(course, ex_id) else ""
        rows.append({"exercise": ex_id, "id": mistake_id, "count": len(names), "section": section,
                     "message": known.message(lang) if known else mistake_id,
                     "names": sorted(names)[:NAMES_SHOWN], "more": max(0, len(names) - NAMES_SHOWN)})
    return sorted(rows, key=lambda r: (-r["count"], r["exercise"], r["id"]))


def _sections(made: dict, course: Course | None, lang: str) -> list[dict]:
    """Sections to revisit: each with the students who made a mistake cited there."""
    by_section: dict[str, set] = defaultdict(set)
    ids: dict[str, set] = defaultdict(set)
    for (ex_id, mistake_id), names in made.items():
        known = _mistake_index(ex_id).get(mistake_id)
        if known and known.section:
            by_section[known.section] |= names
            ids[known.section].add(mistake_id)
    return sorted(({"section": section_text(s, lang), "count": len(n), "mistakes": sorted(ids[s])}
                   for s, n in by_section.items()), key=lambda r: (-r["count"], r["section"]))


def _has(course: Course, ex_id: str) -> bool:
    return any(e.id == ex_id for e in course.exercises)


# --------------------------------------------------------------------------- the page


def render_report(summary: dict, clusters: list | None, lang: str, *, course_title: str = "",
                  why_no_pairs: str = "", threshold: float | None = None) -> str:
    """The HTML page (jinja2, autoescaped); `clusters` from grader.cohort.similarity.similar_clusters,
    or None with `why_no_pairs` (a LABELS key or a text) when they could not be found."""
    import jinja2

    from grader.cohort.similarity import THRESHOLD

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(Path(__file__).parent / "templates")),
                             autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True,
                             lstrip_blocks=True)
    labels = LABELS.get(lang, LABELS["en"])
    why_no_pairs = labels.get(why_no_pairs, why_no_pairs)
    pct = round(100 * (THRESHOLD if threshold is None else threshold))
    alike = labels["clusters"].format(n=len(clusters), students=sum(len(c.students) for c in clusters)) \
        if clusters else ""
    return env.get_template("report.html.j2").render(
        s=summary, clusters=clusters, alike=alike, t=labels, lang=lang, course_title=course_title,
        tags=VERSION_TAGS, similar_note=labels["similar_note"].format(pct=pct),
        no_sources=labels["no_sources"].format(why=why_no_pairs) if clusters is None else "")


VERSION_TAGS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"  # the versions of a cluster, then by number


def write_report(out: Path, book: dict, course: Course | None, folders: Mapping[str, Path] | None,
                 lang: str, *, cohort: Path | None = None) -> Path:
    """Write OUT/report.html; `folders` (student -> folder of exNN files) for the similar
    submissions; `cohort` the folder the students were read from (default: the one OUT's cohort
    file names), for the entries of it that are no student's."""
    summary = cohort_summary(book, course, lang)
    for row in summary["roster"]:
        row["link"] = own_report(out, row["name"])
    summary["refused"] += [{"name": name, "note": LABELS.get(lang, LABELS["en"])["stray"]}
                           for name in _strays(out, cohort)]
    clusters, why = None, "no_folder"
    if folders is not None and course is not None:
        try:
            from grader.cohort.similarity import similar_clusters

            ids = [e["id"] for e in book.get("exercises", []) if _has(course, e["id"])]
            graded = {name: folder for name, folder in folders.items() if name in book.get("students", {})}
            clusters = similar_clusters(course, ids, graded)
        except ImportError:
            why = "no_copydetect"
    title = course.title(lang) if course is not None else ""
    path = Path(out) / "report.html"
    atomic_write(path, render_report(summary, clusters, lang, course_title=title, why_no_pairs=why))
    return path


def own_report(out: Path, name: str) -> str | None:
    """The link from OUT/report.html to a student's own report in OUT: the text report when
    `grade batch --format text` wrote one, else another format it wrote, else their result
    file (students/); None when OUT holds none (a merged gradebook)."""
    import glob
    import urllib.parse

    from grader.cohort.names import student_key

    key = student_key(name)  # a file name ("alice%20smith~…"): its "%" quoted again in the link
    written = sorted((Path(out) / "reports").glob(f"{glob.escape(key)}.*"),
                     key=lambda p: (not p.name.endswith(".txt"), p.name))
    found = written[:1] or [p for p in [Path(out) / "students" / f"{key}.json"] if p.is_file()]
    return urllib.parse.quote(found[0].relative_to(out).as_posix()) if found else None


def _strays(out: Path, cohort: Path | None) -> list[str]:
    """The entries of the cohort's folder that are no student's (files beside the folders)."""
    from grader.cohort.gradebook import held_cohort
    from grader.cohort.students import not_students

    folder = cohort if cohort is not None else held_cohort(Path(out))
    if folder is None or not Path(folder).is_dir():
        return []
    try:
        return not_students(Path(folder))
    except OSError:
        return []


def write_cohort_report(out: Path, book: dict, course: Course | None, folders: Mapping[str, Path] | None,
                        lang: str) -> Path | None:
    """write_report for `grade batch`: the gradebook is already written, so a report that cannot be
    made (jinja2 missing, a file unreadable) is a warning on stderr, never a failed batch."""
    try:
        return write_report(out, book, course, folders, lang)
    except ImportError as err:
        print(f"grade: report.html 未生成 / not written: pip install {err.name or 'jinja2'}", file=sys.stderr)
    except Exception as err:  # noqa: BLE001  the grades stand; the page is an extra
        print(f"grade: report.html 未生成 / not written: {type(err).__name__}: {err}", file=sys.stderr)
    return None
