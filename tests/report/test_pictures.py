"""Pictures from checks' attachments, numbers read by people, the first-difference helper."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.report import humanize as numbers
from grader.model.course import Text
from grader.model.results import CheckFailed, Finding
from grader.report.pictures import LESSON_HISTORY, difference_lines, loss_lines, loss_png, pictures_for, shape_pipeline, sparkline
from grader.report.differences import first_difference
from grader.model.results import CheckResult
from grader.model.calls import Observation

GOOD = {"input_ids": (2, 4), "hidden": (2, 4, 8), "logits": (2, 4, 32), "flat_logits": (8, 32),
        "flat_labels": (8,), "loss": ()}


# ---------------------------------------------------------------- numbers

def test_numbers_read_by_people():
    assert numbers.count(409_600_000) == "409,600,000 (409.6M)"
    assert numbers.count(4_225) == "4,225"
    assert numbers.nbytes(819_200_000) == "819,200,000 B (819.2 MB / 781.3 MiB)"
    assert numbers.nbytes(512) == "512 B"
    assert numbers.loss(2.491137) == "2.4911"
    assert numbers.compact(999_999) == "1M"


def test_compare_short_uses_them():
    import torch

    from grader.judge.compare import compare, short

    assert short(409_600_000) == "409,600,000 (409.6M)"
    assert short(2.4911371) == "2.4911"
    assert short(torch.tensor(4.17441)) == "4.1744"
    assert "409,600,000 (409.6M)" in compare(409_600_000, 409_600_001).en


# ---------------------------------------------------------------- ex05: the shape pipeline

def test_pipeline_draws_the_student_shapes():
    lines = shape_pipeline(GOOD, "en")
    text = "\n".join(lines)
    for symbols in ("[B,T]", "[B,T,C]", "[B,T,V]", "[B*T,V]", "()"):
        assert symbols in text
    assert "──▶" in text and "B=2" in text and "V=32" in text
    assert "(2, 4, 32)" in text and "(8,)" in text
    assert "✗" not in text


def test_pipeline_marks_a_wrong_stage_with_the_expected_shape():
    wrong = dict(GOOD, flat_logits=(32, 8))
    text = "\n".join(shape_pipeline(wrong, "zh"))
    assert "(32, 8)" in text and "✗ 期望 (8, 32)" in text
    text = "\n".join(shape_pipeline({"input_ids": [2, 4]}, "en"))  # lists, missing stages
    assert "(missing)" in text
    assert "dict" in "\n".join(shape_pipeline([1, 2], "en"))


def test_pipeline_checks_against_the_expected_shapes_when_given():
    wrong = dict(GOOD, hidden=(2, 4, 16))
    text = "\n".join(shape_pipeline(wrong, "en", expected=GOOD))
    assert "✗ expected (2, 4, 8)" in text


# ---------------------------------------------------------------- ex12: the loss curve

HISTORY = [{"step": s, "train": 2.47 + 2.26 * 0.99 ** s, "val": 2.49 + 2.23 * 0.99 ** s}
           for s in list(range(0, 3000, 300)) + [2999]]


def test_sparkline():
    assert sparkline([4.0, 3.0, 2.0, 1.0]) == "█▆▃▁"
    assert sparkline([1.0, None, 1.0]) == "▁·▁"
    assert sparkline([]) == ""


def test_loss_lines_beside_the_lesson():
    text = "\n".join(loss_lines(HISTORY, "zh"))
    assert "你的" in text and "课文" in text
    assert "4.7241" in text and "2.4911" in text  # the lesson's numbers, to 4 decimals
    assert "2999" in text
    assert "█" in text and "▁" in text
    exact = [dict(r) for r in LESSON_HISTORY]
    assert "✓" in "\n".join(loss_lines(exact, "en"))
    assert "empty" in loss_lines([], "en")[0]


def test_loss_png_is_written(tmp_path):
    path = loss_png(HISTORY, tmp_path / "sub" / "ex12_loss.png", "zh")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 10_000


def _pixels(path):
    from PIL import Image

    return Image.open(path).convert("RGB").tobytes()


def test_the_chinese_picture_draws_chinese_with_a_font_found_on_the_computer(tmp_path):
    """The ex12 picture was English-only in Chinese mode: the font search read matplotlib's list,
    made before the computer's Chinese font was installed."""
    import warnings

    from grader.report.loss_curve import cjk_font

    font = cjk_font()
    if font is None:
        pytest.skip("no font on this computer draws Chinese (apt-get install fonts-wqy-microhei)")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph … missing from font(s)": a Chinese label drawn as boxes
        chinese = loss_png(HISTORY, tmp_path / "zh.png", "zh", font=font)
    english = loss_png(HISTORY, tmp_path / "en.png", "en")
    assert _pixels(chinese) != _pixels(english)
    check = CheckResult("ex12", "a", Text("曲线", "curve"), 1, True, attachments={"history": HISTORY})
    lines = pictures_for(check, "zh", picture_dir=tmp_path)
    assert any("图：" in line for line in lines) and not any("英文" in line for line in lines)


def test_without_a_chinese_font_the_labels_are_english_and_the_report_says_so(tmp_path):
    import warnings

    import matplotlib

    from grader.report.loss_curve import cjk_font

    latin = str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf")
    assert cjk_font((latin,)) is None  # a font without the glyphs is not taken
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no Chinese drawn with a font that has none of it
        fallback = loss_png(HISTORY, tmp_path / "zh.png", "zh", font=None)
    assert _pixels(fallback) == _pixels(loss_png(HISTORY, tmp_path / "en.png", "en"))
    said = loss_lines(HISTORY, "zh", png=fallback, png_in_english=True)
    assert any("图里的文字是英文" in line and "fonts-noto-cjk" in line for line in said)


# ---------------------------------------------------------------- ex13: the first difference

def test_first_difference():
    assert first_difference([1, 2, 3], [1, 2, 3]) is None
    d = first_difference(list(range(40)), list(range(17)) + [99] + list(range(18, 40)))
    assert (d["index"], d["expected"], d["got"], d["start"]) == (17, 17, 99, 14)
    d = first_difference([1, 2, 3], [1, 2])
    assert (d["index"], d["expected"], d["got"]) == (2, 3, None)
    merges = [((101, 32), 256), ((256, 116), 257)]
    d = first_difference(merges, [((101, 32), 256), ((116, 104), 257)])
    assert d["index"] == 1 and d["got"] == ((116, 104), 257)
    assert first_difference([((1, 2), 3)], [[[1, 2], 3]]) is None  # lists and tuples alike


def test_difference_lines_show_context_not_the_whole_list():
    d = first_difference(list(range(1000)), list(range(500)) + [7] + list(range(501, 1000)))
    lines = difference_lines(d, "en")
    text = "\n".join(lines)
    assert "index 500" in text and " 7" in text
    assert "999" not in text and len(lines) <= 6
    merges = difference_lines(first_difference([((101, 32), 256)], [((32, 116), 256)]), "zh")
    assert any("(101, 32) → 256" in l for l in merges) and any("(32, 116) → 256" in l for l in merges)


class FakeSubject:
    def __init__(self, value):
        self.value = value
        self.shown, self.attachments, self.mistakes = [], {}, []

    def observe(self, a_call, timeout=None):
        return Observation(ok=True, value=self.value)

    def record(self, *args):
        self.shown.append(args)

    def attach(self, kind, data):
        self.attachments[kind] = data


def test_same_fails_at_the_first_difference_of_id_lists():
    from grader.judge.verdicts import call, same

    expected = list(range(300))
    student = FakeSubject(expected[:120] + [5] + expected[121:])
    with pytest.raises(CheckFailed) as err:
        same(student, FakeSubject(expected), call("bpe_encode", "hello", []))
    finding = err.value.finding
    assert "120" in finding.zh and "120" in finding.en and "5" in finding.en
    assert len(finding.expected) < 40 and len(finding.got) < 40  # not the whole list
    assert student.attachments["difference"]["index"] == 120
    ok = FakeSubject(expected)
    assert same(ok, FakeSubject(expected), call("bpe_encode", "hello", [])) == expected
    assert ok.shown


# ---------------------------------------------------------------- in the report

def test_report_draws_attachments(tmp_path):
    from grader.report.text import render_text
    from grader.model.results import ExerciseResult
    from grader.model.course import load_course

    course = load_course()
    ex = course.exercises[0]
    checks = [
        CheckResult(ex.id, "a", Text("形状", "shapes"), 1, True, attachments={"shapes": GOOD}),
        CheckResult(ex.id, "b", Text("曲线", "curve"), 1, True, attachments={"history": HISTORY}),
        CheckResult(ex.id, "c", Text("编码", "encode"), 1, False,
                    finding=Finding("mismatch", "x", expected="[2] 3", got="[2] 9", zh="不同", en="differs"),
                    attachments={"difference": first_difference([1, 2, 3], [1, 2, 9])}),
    ]
    text = render_text([ExerciseResult(ex, checks)], "en", picture_dir=tmp_path)
    assert "[B,T,C]" in text and "lesson" in text and "index 2" in text
    assert (tmp_path / f"{ex.id}_loss.png").is_file()
    assert str(tmp_path / f"{ex.id}_loss.png") in text
    plain = render_text([ExerciseResult(ex, checks)], "zh")  # no picture folder: no file, still the sparkline
    assert "课文" in plain


def test_a_broken_attachment_never_breaks_the_report():
    check = CheckResult("ex05", "a", Text("形状", "shapes"), 1, True,
                        attachments={"shapes": {"input_ids": object()}, "history": "nonsense", "difference": 3})
    assert isinstance(pictures_for(check, "zh"), list)
