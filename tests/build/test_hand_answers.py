"""The hand answers as the kit knows them (grader.build.hand_answers): found however written,
and sealed in the recorded answers so that a release can grade them without holding them."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.build.hand_answers import hand_answers, seal_recorded
from grader.judge.sealed import Sealed, from_plain
from grader.model.course import load_course

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(not (ROOT / "solutions").is_dir(), reason="needs the instructor's kit")


@pytest.fixture(scope="module")
def answers():
    return hand_answers(load_course())


def test_the_stubs_not_implemented_constants_valued_by_the_solutions(answers):
    assert sorted(answers) == ["ANSWER_FP16_BYTES", "ANSWER_PARAMS", "HAND_NLL_LABEL_A", "SHAPE_ANSWERS"]
    assert type(answers["ANSWER_PARAMS"]) is int and type(answers["HAND_NLL_LABEL_A"]) is float
    assert isinstance(answers["SHAPE_ANSWERS"], dict) and "n_valid" in answers["SHAPE_ANSWERS"]
    assert "WHY_PARALLEL" not in answers  # a written answer is prose, not a value


def test_every_way_of_writing_one_is_found(answers):
    from grader.report.humanize import compact, nbytes_short

    params, fp16, nll = answers["ANSWER_PARAMS"], answers["ANSWER_FP16_BYTES"], answers["HAND_NLL_LABEL_A"]
    for text in (str(params), f"{params:,}", f"{params:_}", f"about {compact(params)} parameters",
                 f"{params / 10**8:g} 亿参数", f">>> embedding_params(...)\n    {params}\n"):
        assert answers.found_in_text(text) == ["ANSWER_PARAMS"], text
    assert answers.found_in_text(f"the weights take {nbytes_short(fp16)}") == ["ANSWER_FP16_BYTES"]
    for text in (f"{nll:.4f}", f"{nll:.2f}", f"loss = {nll + 0.004:.3f}"):
        assert answers.found_in_text(text) == ["HAND_NLL_LABEL_A"], text
    shapes = dict(answers["SHAPE_ANSWERS"])
    shapes.pop("n_valid")
    assert answers.found_in_text(f"COURSE = {shapes!r}") == ["SHAPE_ANSWERS"]  # all entries but one
    for text in (f"{params}1", f"1{params}", f"{params}.5", f"{nll + 0.02:.2f}", "T = 4, B = 2"):
        assert answers.found_in_text(text) == [], text


def test_data_holding_one_is_found(answers):
    shapes = {k: list(v) if isinstance(v, tuple) else v for k, v in answers["SHAPE_ANSWERS"].items()}
    assert answers.found_in_value({"a": [1, {"b": answers["ANSWER_FP16_BYTES"]}]}) == ["ANSWER_FP16_BYTES"]
    assert answers.found_in_value({"value": shapes}) == ["SHAPE_ANSWERS"]
    fewer = dict(list(shapes.items())[:-2])
    assert answers.found_in_value({"value": fewer}) == []  # two entries short: not the answer
    assert answers.found_in_value({"x": True, "y": "text", "z": [1, 2, 3]}) == []


def test_sealing_the_recorded_answers_leaves_none_readable(answers):
    shapes = dict(answers["SHAPE_ANSWERS"])
    recorded = {"format": 1, "public_only": True, "exercises": {
        "ex03": {"answers": {"k1": {"ok": True, "value": answers["ANSWER_PARAMS"], "error": None, "output": ""},
                             "k2": {"ok": True, "value": 7, "error": None, "output": ""}},
                 "mistake_answers": {"swapped": {"k1": {"ok": True, "value": answers["ANSWER_PARAMS"] // 2,
                                                        "error": None, "output": ""}}},
                 "mistakes": [], "checks": ["test_answer_params"]},
        "ex05": {"answers": {"k3": {"ok": True, "value": shapes, "error": None, "output": ""}},
                 "mistake_answers": {}, "mistakes": [], "checks": []}}}
    sealed = seal_recorded(recorded, answers)
    assert answers.found_in_value(sealed) == []
    back = from_plain(sealed)["exercises"]
    params = back["ex03"]["answers"]["k1"]["value"]
    assert isinstance(params, Sealed) and params == answers["ANSWER_PARAMS"]
    assert back["ex03"]["answers"]["k2"]["value"] == 7  # not a hand answer: as recorded
    assert back["ex03"]["mistake_answers"]["swapped"]["k1"]["value"] == answers["ANSWER_PARAMS"] // 2
    got = back["ex05"]["answers"]["k3"]["value"]
    assert set(got) == set(shapes) and all(isinstance(v, Sealed) and v == shapes[k] for k, v in got.items())
