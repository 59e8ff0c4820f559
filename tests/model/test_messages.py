"""Every message exists in Chinese and in English, with the same placeholders.

The grader's own catalog (grader/model/messages.py), every `say(...)` in the grader's source,
course.toml's titles, every exercise's hints.toml, every known mistake, and every check's
display name.
"""

from __future__ import annotations

import ast
import re
import string
import tomllib
from pathlib import Path

import pytest

from grader.judge.mistakes import mistakes_for
from grader.model.course import default_course_path, load_course
from grader.model.exercise_map import files_of
from grader.model.messages import CATALOG, say

GRADER = Path(__file__).resolve().parents[2] / "grader"
HAN = re.compile(r"[\u4e00-\u9fff]")


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("key", sorted(CATALOG))
def test_catalog_entry_has_both_languages_and_the_same_placeholders(key):
    entry = CATALOG[key]
    assert set(entry) == {"zh", "en"}, key
    assert entry["zh"].strip() and entry["en"].strip(), key
    assert fields(entry["zh"]) == fields(entry["en"]), key
    values = {name: "X" for name in fields(entry["zh"])}
    assert say(key, "zh", **values) and say(key, "en", **values)


def test_english_messages_are_english():
    chinese = [k for k, e in CATALOG.items() if HAN.search(e["en"])]
    assert not chinese, f"Chinese text in English messages: {chinese}"


def _said_keys() -> tuple[set[str], list[str]]:
    """Keys of every say("key", ...) in the grader's source, and the f-string prefixes."""
    keys, prefixes = set(), []
    for path in GRADER.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "say":
                if not node.args:
                    continue
                first = node.args[0]
                if isinstance(first, ast.Constant) and isinstance(first.value, str):
                    keys.add(first.value)
                elif isinstance(first, ast.JoinedStr) and first.values and isinstance(first.values[0], ast.Constant):
                    prefixes.append(first.values[0].value)
    return keys, prefixes


def test_every_message_the_grader_says_is_in_the_catalog():
    keys, prefixes = _said_keys()
    assert keys, "no say() calls found"
    missing = sorted(k for k in keys if k not in CATALOG)
    assert not missing, f"said but not in the catalog: {missing}"
    for prefix in prefixes:  # say(f"status_{state}") and the like
        assert any(k.startswith(prefix) for k in CATALOG), prefix


def test_progress_states_have_messages():
    from grader.student.progress import FAILED, NOT_STARTED, PASSED

    for state in (NOT_STARTED, FAILED, PASSED):
        assert f"status_{state}" in CATALOG
    assert say("status_not_started", "zh") == "未开始"
    assert say("status_failed", "zh") == "未通过"
    assert say("status_passed", "zh") == "通过"


RAW = tomllib.loads(default_course_path().read_text(encoding="utf-8"))
COURSE = load_course()


def _both(table, where):
    assert isinstance(table, dict) and set(table) == {"zh", "en"}, where
    assert table["zh"].strip() and table["en"].strip(), where
    assert HAN.search(table["zh"]), f"{where}: the zh text has no Chinese"
    assert not HAN.search(table["en"]), f"{where}: the en text has Chinese in it"


def test_course_titles_have_both_languages():
    _both(RAW["course"]["title"], "course title")
    for a in RAW["assignments"]:
        _both(a["title"], f"assignment {a['id']}")
    for ex in RAW["exercises"]:
        _both(ex["title"], f"{ex['id']} title")
        _both(ex["section"], f"{ex['id']} section")  # `grade list --lang en` showed the lesson's in Chinese


@pytest.mark.parametrize("ex", COURSE.exercises, ids=lambda e: e.id)
def test_every_hint_level_has_both_languages(ex):
    """Each [[level]] of the exercise's hints.toml, as written (and a release's [fixes] level)."""
    raw = tomllib.loads(files_of(COURSE, ex).hints.read_text(encoding="utf-8"))
    assert 1 <= len(raw["level"]), ex.id
    for n, hint in enumerate(raw["level"], 1):
        _both(hint, f"{ex.id} hint {n}")
    if "fixes" in raw:
        _both(raw["fixes"], f"{ex.id} fixes")


@pytest.mark.parametrize("ex", COURSE.exercises, ids=lambda e: e.id)
def test_every_mistake_has_both_languages_and_a_hint_that_exists(ex):
    for mistake in mistakes_for(ex.id):
        where = f"{ex.id} mistake {mistake.id}"
        assert mistake.zh.strip() and mistake.en.strip(), where
        assert HAN.search(mistake.zh), f"{where}: zh has no Chinese"
        assert mistake.section.strip(), where
        if mistake.hint is not None:
            assert 1 <= mistake.hint <= len(ex.hints), f"{where}: hint level {mistake.hint} of {len(ex.hints)}"


@pytest.mark.parametrize("ex", COURSE.exercises, ids=lambda e: e.id)
def test_every_check_is_named_in_both_languages(ex):
    tree = ast.parse(files_of(COURSE, ex).checks.read_text(encoding="utf-8"))
    checks = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    assert checks, ex.id
    for node in checks:
        doc = (ast.get_docstring(node) or "").strip().splitlines()
        assert doc, f"{ex.id}.{node.name}: no docstring (its display name)"
        zh, bar, en = doc[0].partition("|")
        assert bar and zh.strip() and en.strip(), f"{ex.id}.{node.name}: docstring is not '中文 | English'"


@pytest.mark.parametrize("ex", COURSE.exercises, ids=lambda e: e.id)
def test_every_failure_message_in_a_check_has_both_languages(ex):
    """fail(zh, en) in a check: both given, Chinese first."""
    tree = ast.parse(files_of(COURSE, ex).checks.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "fail":
            given = list(node.args[:2]) + [k.value for k in node.keywords if k.arg in ("zh", "en")]
            assert len(given) >= 2, f"{ex.id} line {node.lineno}: fail() needs zh and en"


def test_every_section_reads_in_english_but_its_quotes():
    import re

    from grader.model.course import load_course
    from grader.model.messages import section_text

    cjk = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")
    course = load_course()
    sections = {ex.section.zh for ex in course.exercises}
    for ex in course.exercises:
        from grader.judge.mistakes import mistakes_for

        try:
            sections |= {m.section for m in mistakes_for(ex.id)}
        except Exception:  # a release without the mistakes' code: the course's sections are enough
            pass
    for section in sections:
        english = section_text(section, "en")
        assert not cjk.search(re.sub(r"“[^”]*”", "", english)), (section, english)
        assert section_text(section, "zh") == section
    assert section_text("5.2、5.7 练习 1", "en") == "section 5.2, 5.7 exercise 1"
