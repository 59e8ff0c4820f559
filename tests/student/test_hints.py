"""Answers are earned: the hint ladder of every exercise teaches before it gives the fix.

For every exercise, no hint level below the last and no diagnosis (a known mistake's
own words) carries a value the student is asked to work out by hand (a constant the stub leaves
`NotImplemented`: `HAND_NLL_LABEL_A`, `ANSWER_PARAMS`, `ANSWER_FP16_BYTES`, `SHAPE_ANSWERS`), in
any of the forms a report or a person would write it, nor a line of code from a mistake's fix
(the last level's business: the fixes, built from the known mistakes). Level 1 asks, a level
below the last says what to reread in the course text, and the English of each level has no
Chinese.
"""

from __future__ import annotations

import ast
import re

import pytest

from grader.judge.mistakes import mistakes_for
from grader.model.course import load_course
from grader.report.humanize import compact, count, nbytes
from grader.student.hints import ladder

COURSE = load_course()
CJK = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def _flat(text: str) -> str:
    return re.sub(r"\s+", "", text)


def hand_constants(exercise) -> dict[str, object]:
    """The reference's values of the constants the stub leaves NotImplemented (read, not run)."""

    def literals(path):
        out = {}
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                try:
                    out[node.targets[0].id] = ast.literal_eval(node.value)
                except ValueError:
                    out[node.targets[0].id] = node.value
        return out

    stub, solution = literals(COURSE.exercises_dir / exercise.file), literals(COURSE.solutions_dir / exercise.file)
    return {name: solution[name] for name, value in stub.items()
            if isinstance(value, ast.Name) and value.id == "NotImplemented"}


def written_forms(value) -> set[str]:
    """How a value could be written in a hint, whitespace removed: 409600000, 409,600,000, 409.6M, …"""
    forms: set[str] = set()
    if isinstance(value, bool) or isinstance(value, str):
        return forms
    if isinstance(value, int):
        if abs(value) < 100:
            return forms  # too short to tell from any other number
        forms |= {str(value), f"{value:,}", f"{value:_}", compact(value), count(value), nbytes(value)}
        forms |= set(re.findall(r"\d[\d.]*\s?[A-Za-z]+", nbytes(value)))  # 819.2 MB, 781.3 MiB
    elif isinstance(value, float):
        forms |= {repr(value), f"{value:.2f}", f"{value:.3f}", f"{value:.4f}"}
    elif isinstance(value, tuple) and value:
        forms |= {repr(value), repr(list(value)), "[" + ",".join(map(str, value)) + "]"}
    elif isinstance(value, dict):
        for item in value.values():
            forms |= written_forms(item)
    return {_flat(f) for f in forms if f}


HAND_VALUES = {f for ex in COURSE.exercises for v in hand_constants(ex).values() for f in written_forms(v)}


def test_the_hand_constants_are_found():
    found = {ex.id: sorted(hand_constants(ex)) for ex in COURSE.exercises if hand_constants(ex)}
    assert found == {"ex02": ["HAND_NLL_LABEL_A"], "ex03": ["ANSWER_FP16_BYTES", "ANSWER_PARAMS"],
                     "ex04": ["WHY_PARALLEL"], "ex05": ["SHAPE_ANSWERS"]}
    assert {"0.44", "409,600,000", "409.6M", "819.2MB", "(2,4,8)", "[8,32]"} <= HAND_VALUES


# ------------------------------------------------------------------ the code of a fix

_CODE_RUN = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?")  # ASCII inside the Chinese text
_LOOKS_LIKE_CODE = re.compile(r"\w\(|\w\[|<=|>=|==|!=|\+=|\w\s*=\s*\w")
_JUST_A_NAME = re.compile(r"^[\w.@]+\((\.\.\.)?\)$|^\w+=[\w.+-]+$")  # model.train(), tied=False: names an API


def _top_level_pieces(run: str) -> list[str]:
    """`a(x, y), b[1]` -> [`a(x, y)`, `b[1]`]: split at commas and semicolons outside brackets."""
    pieces, depth, current, i = [], 0, "", 0
    while i < len(run):
        ch = run[i]
        depth += (ch in "([{") - (ch in ")]}")
        if depth <= 0 and run[i:i + 2] in (", ", "; "):
            pieces.append(current)
            current, i = "", i + 2
            continue
        current, i = current + ch, i + 1
    return pieces + [current]


def fix_code(exercise_id: str) -> set[str]:
    """The lines of code the exercise's mistakes' fixes write out (from the Chinese fix, where code
    is the ASCII between Chinese words), whitespace removed: `i+block_size+1<=len(tokens)`, …"""
    found = set()
    for mistake in mistakes_for(exercise_id):
        for run in _CODE_RUN.findall(mistake.fix["zh"]):
            for piece in _top_level_pieces(run):
                piece = piece.strip(" ,;:.")
                if _LOOKS_LIKE_CODE.search(piece) and not _JUST_A_NAME.match(_flat(piece)) and len(_flat(piece)) >= 8:
                    found.add(_flat(piece))
    return found


def test_fix_code_is_what_a_fix_writes_out():
    assert "i+block_size+1<=len(tokens)" in fix_code("ex01")
    assert "m=z.max(dim=-1,keepdim=True)" in fix_code("ex02")
    assert "model.train(was_training)" in fix_code("ex11") and "model.train()" not in fix_code("ex11")
    assert "tied=False" not in fix_code("ex03")


def _giveaways(text: str, exercise_id: str) -> list[str]:
    flat = _flat(text)
    return sorted(f for f in HAND_VALUES | fix_code(exercise_id) if f in flat)


LEVELS = [(ex.id, n) for ex in COURSE.exercises for n in range(1, len(ladder(ex)))]


@pytest.mark.parametrize("exercise_id, level", LEVELS)
def test_a_hint_below_the_last_gives_neither_the_value_nor_the_fix(exercise_id, level):
    hint = ladder(COURSE.exercise(exercise_id))[level - 1]
    for lang in ("zh", "en"):
        assert not _giveaways(hint(lang), exercise_id), f"{exercise_id} level {level} ({lang})"


@pytest.mark.parametrize("exercise_id", [ex.id for ex in COURSE.exercises])
def test_a_diagnosis_gives_neither_the_value_nor_the_fix(exercise_id):
    for mistake in mistakes_for(exercise_id):
        for text in (mistake.zh, mistake.en):
            assert not _giveaways(text, exercise_id), f"{exercise_id}/{mistake.id}: {text}"


@pytest.mark.parametrize("exercise_id", [ex.id for ex in COURSE.exercises])
def test_the_ladder_asks_then_points_to_the_course_text_then_fixes(exercise_id):
    hints = ladder(COURSE.exercise(exercise_id))
    assert len(hints) >= 4
    assert "？" in hints[0]("zh") and "?" in hints[0]("en")  # level 1 asks
    below_last = hints[:-1]
    assert any("重读" in h("zh") and "Reread" in h("en") for h in below_last)  # what to reread, before the fix
    assert hints[-1]("zh").startswith("改法") and hints[-1]("en").startswith("The fixes")
    for h in hints:
        assert not CJK.search(h("en")), h("en")


REREAD_AT_LEVEL_2 = ("ex01", "ex02", "ex03", "ex04", "ex05", "ex11", "ex12", "ex13")


@pytest.mark.parametrize("exercise_id", REREAD_AT_LEVEL_2)
def test_level_2_cites_a_section_of_the_course_text(exercise_id):
    """Level 2 names the section to reread: `5.5「…」` in chapter 5, `「…」` in the bigram lesson."""
    level_2 = COURSE.exercise(exercise_id).hints[1]
    zh, en = level_2("zh"), level_2("en")
    assert zh.startswith("重读") and en.startswith("Reread")
    assert re.search(r"5\.\d「[^」]+」|bigram 一课「[^」]+」", zh), zh
    assert re.search(r"5\.\d, \"[^\"]+\"|the bigram lesson, \"[^\"]+\"", en), en
