"""Diagnoses are named only when they are right, and answers are earned.

Each submission here is a solution file with one bug typed in by hand (not a mistake's
variant). A bug the course lists must get that mistake's diagnosis and no other; a bug it
does not list must fail WITHOUT any diagnosis (a decode that joins with spaces is not told
"decode drops id 0", nor an x one id too long "batch and time are swapped").

The submissions are graded in this process (`in_process`, as `grade check` grades mistakes):
the checks, the references and the diagnosis are the real ones; only the worker is skipped.
"""

from __future__ import annotations

import itertools

import pytest

from grader.judge.compare import DEFAULT_TOL
from grader.judge.mistakes import Mistake, Seen, agrees, diagnosis_for
from grader.judge.references import LiveReferences, load_module_from
from grader.judge.verdicts import HIDDEN_ANSWER, hand_mismatch
from grader.model.calls import Call, Observation
from grader.student.hints import ladder
from tests.judge.inprocess import COURSE
from tests.judge.inprocess import failed as _failed
from tests.judge.inprocess import grade as _grade
from tests.judge.inprocess import named as _named
from tests.judge.inprocess import submission as _submission

_names = itertools.count()


@pytest.fixture(scope="module")
def references():
    return LiveReferences(COURSE)  # slow answers (ex12's trainings) kept in the session's cache, for every module


# ------------------------------------------------------------------ bugs the course does not list

NATURAL_BUGS = {
    "decode joins with spaces": ("ex06", [('return "".join(self.itos[int(i)] for i in ids)',
                                           'return " ".join(self.itos[int(i)] for i in ids)')]),
    "x one id too long": ("ex08", [("x = torch.stack([data[i : i + block_size] for i in ix])",
                                    "x = torch.stack([data[i : i + block_size + 1] for i in ix])")]),
    "get_batch ignores the generator": ("ex08", [(
        "ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)",
        "ix = torch.randint(len(data) - block_size, (batch_size,))")]),
    "y one id short": ("ex01", [("y = tokens[i + 1:i + block_size + 1]", "y = tokens[i + 1:i + block_size]")]),
    "block counts only attention (4C²)": ("ex03", [("return 12 * n_embd ** 2", "return 4 * n_embd ** 2")]),
    "nll with the wrong sign": ("ex02", [("return float(log_sum_exp - z[label])", "return float(z[label] - log_sum_exp)")]),
    "train_frac taken for val": ("ex07", [("n = int(train_frac * len(data))\n    train", "n = int((1 - train_frac) * len(data))\n    train")]),
    "log10 for the uniform loss": ("ex10", [("return math.log(vocab_size)", "return math.log10(vocab_size)")]),
    "mask includes the next position": ("ex04", [("return j <= i  # (T, T)", "return j <= i + 1  # (T, T)")]),
    "temperature squared": ("ex04", [("logits = logits[:, -1, :] / temperature  # (B, V)",
                                      "logits = logits[:, -1, :] / temperature ** 2  # (B, V)")]),
    "bigram loss summed": ("ex09", [("loss = F.cross_entropy(flat_logits, flat_targets)  # ()",
                                     "loss = F.cross_entropy(flat_logits, flat_targets, reduction=\"sum\")  # ()")]),
    "estimate returns tensors": ("ex11", [("out[name] = sum(losses) / len(losses)",
                                           "out[name] = torch.tensor(sum(losses) / len(losses))")]),
    "BPE merges a pair seen once": ("ex13", [("if counts[pair] < 2:", "if counts[pair] < 1:")]),
    "BPE decode drops bad bytes": ("ex13", [('return data.decode("utf-8", errors="replace")',
                                             'return data.decode("utf-8", errors="ignore")')]),
    "count_params counts frozen ones": ("ex03", [("if id(p) in seen or not p.requires_grad:", "if id(p) in seen:")]),
    "lm_loss summed": ("ex05", [("return F.cross_entropy(flat_logits, flat_labels, ignore_index=-100)  # ()",
                                 "return F.cross_entropy(flat_logits, flat_labels, ignore_index=-100, reduction=\"sum\")")]),
    # untied, its first failing case, looks like "tied and untied swapped"; tied, which comes
    # after it and which it gets right, rules that out (a check goes on past its first failure)
    "embedding forgets the LM head": ("ex03", [("return per_table if tied else 2 * per_table", "return per_table")]),
}


@pytest.mark.parametrize("bug", list(NATURAL_BUGS))
def test_an_unlisted_bug_fails_without_a_diagnosis(bug, tmp_path, references):
    exercise_id, edits = NATURAL_BUGS[bug]
    result = _grade(exercise_id, _submission(tmp_path, exercise_id, edits), references)
    assert _failed(result), f"{bug}: no check fails"
    assert _named(result) == set(), f"{bug}: wrongly diagnosed as {_named(result)}"


# ------------------------------------------------------------------ listed bugs, written by hand

LISTED_BUGS = {
    "decode_skips_id0": ("ex06", [('return "".join(self.itos[int(i)] for i in ids)',
                                   'return "".join(self.itos[int(i)] for i in ids if i)')]),
    "batch_time_swapped": ("ex08", [("return x, y\n", "return x.t().contiguous(), y.t().contiguous()\n")]),
    "off_by_one_drop_last": ("ex01", [("while i + block_size + 1 <= len(tokens):",
                                       "while i + block_size + 1 < len(tokens):")]),
    "fp16_as_fp32_bytes": ("ex03", [('"fp16": 2, "bf16": 2', '"fp16": 4, "bf16": 4')]),
    "percent_not_fraction": ("ex10", [("return math.exp(-loss)", "return math.exp(-loss) * 100")]),
    "view_v_bt": ("ex05", [("flat_logits = logits.view(B * T, V)  # (B*T, V)\n    flat_labels = labels.view(B * T)  # (B*T,)\n    return",
                            "flat_logits = logits.reshape(V, B * T).T  # (B*T, V)\n    flat_labels = labels.view(B * T)  # (B*T,)\n    return")]),
}


@pytest.mark.parametrize("mistake_id", list(LISTED_BUGS))
def test_a_listed_bug_gets_its_diagnosis_and_no_other(mistake_id, tmp_path, references):
    exercise_id, edits = LISTED_BUGS[mistake_id]
    result = _grade(exercise_id, _submission(tmp_path, exercise_id, edits), references)
    assert _named(result) == {mistake_id}, f"named {_named(result)} for {mistake_id}"


def test_a_diagnosis_names_the_bug_not_the_fixed_line(tmp_path, references):
    exercise_id, edits = LISTED_BUGS["off_by_one_drop_last"]
    result = _grade(exercise_id, _submission(tmp_path, exercise_id, edits), references)
    diagnosed = [c.finding.diagnosis for c in result.checks if c.finding and c.finding.diagnosis]
    assert diagnosed
    for d in diagnosed:
        for lang in ("zh", "en"):
            assert "<= len(tokens)" not in d[lang], d[lang]  # the fix is the last hint level's
        assert "<= len(tokens)" in d["fix"]["zh"]  # kept for instructors


def test_ex12_the_lectures_loop_is_told_its_final_estimate_is_missing(tmp_path, references):
    """The lecture's own loop estimates only every eval_interval steps: every row of the
    lesson's table matches, and the returned model differs because the final estimate's draws
    are missing before the last training batch."""
    lecture = ("        if it % eval_interval == 0 or it == max_iters - 1:\n            losses",
               "        if it % eval_interval == 0:\n            losses")
    result = _grade("ex12", _submission(tmp_path, "ex12", [lecture], references), references,
                    only={"test_lesson_table", "test_estimate_steps"})
    (table,) = [c for c in result.checks if c.name == "test_lesson_table"]
    assert not table.passed and "no estimate at the last step (2999)" in table.finding.en, table.finding.en
    assert table.finding.diagnosis["id"] == "no_final_estimate" and _named(result) == {"no_final_estimate"}


# ------------------------------------------------------------------ every observation, not one

def _obs(value):
    return Observation(ok=True, value=value)


class _FakeReference:
    """Two mistakes with fixed answers per call key (what Reference.observe_mistake gives)."""

    def __init__(self, answers: dict[str, dict[str, object]]):
        self.mistakes = [Mistake(id=i, section="5.2", zh=f"错误 {i}", en=f"mistake {i}") for i in answers]
        self._answers = answers

    def observe_mistake(self, mistake, a_call):
        return _obs(self._answers[mistake.id][a_call.probe])


def test_a_mistake_must_agree_on_every_call_of_the_check():
    first, second = Call("p.one"), Call("p.two")
    ref = _FakeReference({"a": {"p.one": [1, 2], "p.two": 5}, "b": {"p.one": [1, 2], "p.two": 6}})
    seen_one = [Seen(first, _obs([1, 2]))]
    assert diagnosis_for(ref, seen_one) is None  # both explain the one call: a guess, so neither
    seen_both = seen_one + [Seen(second, _obs(6))]
    assert diagnosis_for(ref, seen_both)["id"] == "b"
    seen_none = seen_one + [Seen(second, _obs(7))]
    assert diagnosis_for(ref, seen_none) is None


def test_an_unrecorded_answer_means_no_diagnosis_not_a_crash():
    class Unrecorded(_FakeReference):
        def observe_mistake(self, mistake, a_call):
            raise RuntimeError("not recorded in this release")

    ref = Unrecorded({"a": {}})
    assert diagnosis_for(ref, [Seen(Call("p.one"), _obs(1))]) is None


def test_one_matching_field_is_not_agreement():
    seen = Seen(Call("p"), _obs({"n_ids": 3, "decoded_equals_text": False, "decoded_sha256": "aa"}), DEFAULT_TOL)
    assert not agrees(_obs({"n_ids": 3, "decoded_equals_text": False, "decoded_sha256": "bb"}), seen)
    assert agrees(_obs({"n_ids": 3, "decoded_equals_text": False, "decoded_sha256": "aa"}), seen)
    assert not agrees(_obs(1.0), Seen(Call("p"), _obs(1)))  # an int is not a float


# ------------------------------------------------------------------ every case of the check, not the first failed one

class _FakeStudent:
    """A subject answering fixed values per call (what a worker would report)."""

    def __init__(self, answers: dict[str, object]):
        self._answers = answers

    def observe(self, a_call, timeout=None):
        answer = self._answers[a_call.probe]
        return answer if isinstance(answer, Observation) else _obs(answer)


class _FakeReferenceWithAnswers(_FakeReference):
    def __init__(self, right: dict[str, object], answers: dict[str, dict[str, object]]):
        super().__init__(answers)
        self._right = right

    def observe(self, a_call, timeout=None):
        return _obs(self._right[a_call.probe])


CASES = ("p.one", "p.two", "p.three")
RIGHT = {"p.one": 1, "p.two": 2, "p.three": 3}


def _run_check(student_answers: dict, mistakes: dict, *, goes_on: bool = True):
    """A check comparing three cases in a loop, as the checks do; the finding it ends with."""
    from grader.judge.verdicts import StudentView, same
    from grader.model.results import CheckFailed

    view = StudentView(_FakeStudent(student_answers), 1.0, goes_on=goes_on)
    reference = _FakeReferenceWithAnswers(RIGHT, mistakes)
    with pytest.raises(CheckFailed) as failed:
        try:
            for case in CASES:
                same(view, reference, Call(case, label=f"{case}()"))
        except Exception as err:  # noqa: BLE001 - what the plugin's wrapper does
            view.settle(err)
        view.settle()
    return failed.value.finding, view


def test_the_check_goes_on_past_its_first_failure_and_the_diagnosis_explains_every_case():
    # the first case matches mistake a, the third does not: a is not named
    mistakes = {"a": {"p.one": 10, "p.two": 2, "p.three": 30}}
    finding, view = _run_check({"p.one": 10, "p.two": 2, "p.three": 31}, mistakes)
    assert [s.call.probe for s in view.seen] == list(CASES)  # every case compared
    assert finding.label == "p.one()" and finding.diagnosis is None  # the report is about the first failure
    # when every case agrees, it is named
    finding, _ = _run_check({"p.one": 10, "p.two": 2, "p.three": 30}, mistakes)
    assert finding.diagnosis["id"] == "a"


def test_a_later_case_tells_two_mistakes_apart():
    mistakes = {"a": {"p.one": 10, "p.two": 2, "p.three": 30}, "b": {"p.one": 10, "p.two": 2, "p.three": 33}}
    finding, _ = _run_check({"p.one": 10, "p.two": 2, "p.three": 33}, mistakes)
    assert finding.label == "p.one()" and finding.diagnosis["id"] == "b"
    # stopping at the first failure, both explain what was seen: a guess, so neither was named
    finding, _ = _run_check({"p.one": 10, "p.two": 2, "p.three": 33}, mistakes, goes_on=False)
    assert finding.diagnosis is None


def test_a_time_out_after_the_first_failure_is_what_the_report_says():
    timed_out = Observation(ok=False, error={"type": "Timeout", "message": "1 s", "traceback": ""})
    finding, view = _run_check({"p.one": 10, "p.two": timed_out, "p.three": 3}, {"a": {"p.one": 10, "p.two": 2,
                                                                                      "p.three": 3}})
    assert finding.kind == "timeout" and finding.label == "p.two()" and view.failing.call.probe == "p.two"


def test_a_hidden_check_is_shown_by_the_call_that_failed_not_the_last_one():
    from grader.judge.hiding import hidden_view_of

    finding, view = _run_check({"p.one": [1, 2], "p.two": 2, "p.three": 3}, {})
    assert view.failing.call.probe == "p.one"
    assert hidden_view_of(view, finding)["got"] != hidden_view_of(view, finding)["expected"]


def test_ex08_labels_a_tensor_argument_by_its_shape(tmp_path, references):
    exercise_id, edits = NATURAL_BUGS["x one id too long"]
    result = _grade(exercise_id, _submission(tmp_path, exercise_id, edits), references,
                    only={"test_same_batch_as_reference"})
    (check,) = result.checks
    assert check.finding.label == "get_batch(tensor(shape=(100,)), block_size=8, batch_size=4, generator=manual_seed(0))"


# ------------------------------------------------------------------ answers are earned

def test_a_hand_answer_is_never_shown(tmp_path, references):
    module = _submission(tmp_path, "ex03", [("ANSWER_PARAMS = 409_600_000", "ANSWER_PARAMS = 204_800_000")])
    result = _grade("ex03", module, references, only={"test_answer_params"})
    (check,) = result.checks
    f = check.finding
    assert not check.passed and f.expected == HIDDEN_ANSWER
    text = " ".join(str(x) for x in (f.expected, f.got, f.zh, f.en, f.label))
    assert "409,600,000" not in text and "409600000" not in text and "409.6" not in text
    assert f.answer is not None and "409,600,000" in f.answer  # for instructors' formats only
    assert "too small" in f.en and "偏小" in f.zh


def test_shape_answers_name_the_wrong_entry_not_its_value(tmp_path, references):
    module = _submission(tmp_path, "ex05", [('"hidden": (2, 4, 8),\n    "logits"', '"hidden": (2, 4, 32),\n    "logits"')])
    result = _grade("ex05", module, references, only={"test_shape_answers"})
    (check,) = result.checks
    f = check.finding
    assert not check.passed and '["hidden"]' in f.label and f.expected == HIDDEN_ANSWER
    assert "(2, 4, 8)" not in f.zh + f.en + str(f.expected)


def test_hand_mismatch_gives_direction_not_value():
    zh, en = hand_mismatch(0.4402, 0.6351)
    assert "0.44" not in zh + en and "偏大" in zh and "too large" in en
    assert "int" in hand_mismatch(409_600_000, 409_600_000.0)[1]


def test_every_mistake_has_a_fix_and_its_message_has_no_code_of_the_fix():
    from grader.judge.mistakes import mistakes_for

    for ex in COURSE.exercises:
        levels = len(ladder(ex))
        for m in mistakes_for(ex.id):
            assert m.fix and m.fix["zh"] and m.fix["en"], f"{ex.id}/{m.id}: no fix"
            assert m.fix["zh"] not in m.zh and m.fix["en"] not in m.en
            assert levels >= 2 and m.hint is not None and 1 <= m.hint < levels, \
                f"{ex.id}/{m.id}: the diagnosis must point below the last (fix) level"


def test_the_last_hint_level_holds_the_fixes():
    from grader.judge.mistakes import mistakes_for

    for ex in COURSE.exercises:
        last = ladder(ex)[-1]
        for m in mistakes_for(ex.id):
            assert m.fix["zh"] in last("zh") and m.fix["en"] in last("en"), f"{ex.id}/{m.id}"


# ------------------------------------------------------------------ ex02's forbidden-API check

def test_forbidden_api_check_is_about_apis_only(tmp_path, references):
    wrong_value = _submission(tmp_path, "ex02", [("return float(log_sum_exp - z[label])",
                                                  "return float(log_sum_exp - z[label]) + 1.0")])
    result = _grade("ex02", wrong_value, references, only={"test_forbidden_apis"})
    assert result.checks[0].passed, "a wrong value is not a forbidden API"
    uses_api = _submission(tmp_path, "ex02", [("    e = torch.exp(logits - m)  # (..., V)\n    return e / e.sum(dim=-1, keepdim=True)",
                                               "    return torch.softmax(logits, dim=-1)")])
    result = _grade("ex02", uses_api, references, only={"test_forbidden_apis"})
    (check,) = result.checks
    assert not check.passed and "stable_softmax" in check.finding.en and "softmax" in check.finding.got


@pytest.mark.parametrize("body", [
    # attention with the logits as keys and an identity as values is a softmax
    "    V = logits.shape[-1]\n    q = torch.ones(*logits.shape[:-1], 1, 1, dtype=logits.dtype)\n"
    "    out = torch.nn.functional.scaled_dot_product_attention(q, logits.unsqueeze(-1).transpose(-1, -2)"
    ".transpose(-1, -2), torch.eye(V, dtype=logits.dtype), scale=1.0)\n    return out.squeeze(-2)",
    "    return torch.exp(logits - torch.logcumsumexp(logits, dim=-1)[..., -1:])",
    "    return torch._masked_softmax(logits, torch.zeros_like(logits, dtype=torch.bool), -1, 0)",
    "    return torch.sparse.softmax(logits.to_sparse(), dim=-1).to_dense()",
    "    return torch.exp(logits - torch._logcumsumexp(logits, -1)[..., -1:])",
])
def test_softmax_done_inside_another_kernel_is_a_forbidden_api(tmp_path, references, body):
    uses_kernel = _submission(tmp_path, "ex02", [("    e = torch.exp(logits - m)  # (..., V)\n    return e / e.sum(dim=-1, keepdim=True)",
                                                  body)])
    result = _grade("ex02", uses_kernel, references, only={"test_forbidden_apis"})
    (check,) = result.checks
    assert not check.passed and "stable_softmax" in check.finding.en, check.finding.en


# ------------------------------------------------------------------ ex05's picture

def test_ex05_picture_gets_the_expected_shapes(tmp_path, references):
    module = _submission(tmp_path, "ex05", [('"hidden": tuple(hidden.shape),', '"hidden": tuple(logits.shape),')])
    result = _grade("ex05", module, references, only={"test_trace_shapes_course_setting"})
    (check,) = result.checks
    assert not check.passed
    shapes = check.attachments["shapes"]
    assert shapes["expected"]["hidden"] == (2, 4, 8) and shapes["got"]["hidden"] == (2, 4, 32)


# ------------------------------------------------------------------ ex12: no false passes

EX12_SHORT = {"test_estimate_order_and_size", "test_modes", "test_other_arguments",
              "test_returns_trained_model", "test_gradients_cleared_every_step"}

EX12_OWN_ESTIMATE = '''

def estimate_loss(model, splits, block_size, batch_size, eval_iters, generator=None):
    """The student's own, in this file."""
    was_training = model.training
    model.eval()
    out = {}
    with torch.no_grad():
        for name, data in splits.items():
            losses = []
            for _ in range(EVAL_BATCHES):
                x, y = get_batch(data, block_size, batch_size, generator=generator)
                _, loss = model(x, y)
                losses.append(loss.item())
            out[name] = sum(losses) / len(losses)
    RESTORE
    return out
'''


def _own_estimate(batches: str, restore: str):
    body = EX12_OWN_ESTIMATE.replace("EVAL_BATCHES", batches).replace("RESTORE", restore)
    return [("from ex11_estimate_loss import estimate_loss\n", ""), ("\n\ndef train_bigram(", body + "\n\ndef train_bigram(")]


@pytest.mark.parametrize("name, edits", [
    ("AdamW at a hard-coded 1e-2", [("lr=learning_rate)\n    splits", "lr=1e-2)\n    splits")]),
    ("vocab_size hard-coded to 65", [("model = BigramLanguageModel(vocab_size)\n    optimizer",
                                      "model = BigramLanguageModel(65)\n    optimizer")]),
    ("its own estimate_loss on one batch", _own_estimate("1", "model.train(was_training)")),
    ("its own estimate_loss leaves the model in eval mode", _own_estimate("eval_iters", "")),
])
def test_ex12_false_passes_are_closed(name, edits, tmp_path, references):
    module = _submission(tmp_path, "ex12", edits, references)
    result = _grade("ex12", module, references, only=EX12_SHORT)
    assert _failed(result), f"{name}: every short-run check passes"


def test_ex12_own_correct_estimate_passes(tmp_path, references):
    module = _submission(tmp_path, "ex12", _own_estimate("eval_iters", "model.train(was_training)"), references)
    result = _grade("ex12", module, references, only=EX12_SHORT)
    assert not _failed(result), [c.finding.en for c in result.checks if not c.passed]


OWN_MODEL = '''

class BigramLanguageModel(torch.nn.Module):
    """The student's own, in this file."""

    def __init__(self, vocab_size):
        super().__init__()
        self.token_embedding_table = torch.nn.Embedding(vocab_size, vocab_size)

    def forward(self, idx, targets=None):
        logits = self.token_embedding_table(idx)  # (B, T, C)
        if targets is None:
            return logits, None
        B, T, C = logits.shape
        loss = torch.nn.functional.cross_entropy(logits.view(B * T, C), targets.view(B * T)REDUCTION)
        return logits, loss
'''


@pytest.mark.parametrize("reduction, passes", [("", True), (', reduction="sum"', False)])
def test_ex12_own_model_class_is_graded_as_written(reduction, passes, tmp_path, references):
    edits = [("from ex09_bigram import BigramLanguageModel\n", ""),
             ("\n\ndef train_bigram(", OWN_MODEL.replace("REDUCTION", reduction) + "\n\ndef train_bigram(")]
    module = _submission(tmp_path, "ex12", edits, references)
    result = _grade("ex12", module, references, only=EX12_SHORT)
    assert bool(_failed(result)) is not passes, [c.finding.en for c in result.checks if not c.passed]


def test_ex11_own_get_batch_is_graded_as_written(tmp_path, references):
    own = '''

def get_batch(data, block_size, batch_size, generator=None):
    """The student's own, in this file, ignoring the generator."""
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i : i + block_size] for i in ix])
    y = torch.stack([data[i + 1 : i + block_size + 1] for i in ix])
    return x, y
'''
    edits = [("from ex08_get_batch import get_batch\n", ""),
             ("\n\ndef estimate_loss(", own + "\n\ndef estimate_loss(")]
    module = _submission(tmp_path, "ex11", edits, references)
    result = _grade("ex11", module, references, only={"test_values_with_generator"})
    assert _failed(result), "a get_batch written in ex11's own file was replaced by a correct one"



CANNED = """
from ex08_get_batch import get_batch
from ex09_bigram import BigramLanguageModel
from ex11_estimate_loss import estimate_loss
from grader.model.lesson import LESSON_HISTORY


def train_bigram(train_data, val_data, vocab_size, max_iters=3000, eval_interval=300,
                 eval_iters=200, learning_rate=1e-2, batch_size=32, block_size=8, seed=1337):
    return None, [dict(row) for row in LESSON_HISTORY]  # the lesson's table, copied: nothing trained
"""


def test_ex12_a_history_no_training_produced_scores_nothing(tmp_path, references):
    """The lesson's table returned as the history, no model trained: once 8 of ex12's points
    (the band and the table read only the history); the returned model's own losses, computed
    in the judge from its table, must match the last row, and the table needs the lesson's model."""
    references("ex12")  # solutions/ on sys.path, for the imports of ex08, ex09, ex11
    (tmp_path / "student_ex12_canned.py").write_text(CANNED, encoding="utf-8")
    module = load_module_from(tmp_path, "student_ex12_canned")
    result = _grade("ex12", module, references, only={"test_required_band", "test_lesson_table"})
    assert len(result.checks) == 2 and not any(c.passed for c in result.checks), \
        [(c.name, c.passed, c.finding and c.finding.en) for c in result.checks]
    messages = {c.name: c.finding.en for c in result.checks}
    assert "history should come from this training" in messages["test_required_band"], messages
    assert "no token_embedding_table" in messages["test_lesson_table"], messages


COUNTED = """
import torch
import torch.nn.functional as F
from ex08_get_batch import get_batch
from ex09_bigram import BigramLanguageModel
from ex11_estimate_loss import estimate_loss
from grader.model.lesson import LESSON_HISTORY


def train_bigram(train_data, val_data, vocab_size, max_iters=3000, eval_interval=300,
                 eval_iters=200, learning_rate=1e-2, batch_size=32, block_size=8, seed=1337):
    torch.manual_seed(seed)
    model = BigramLanguageModel(vocab_size)
    w = model.token_embedding_table.weight
    for _ in range(max_iters):  # backward passes that train nothing
        (w * 0).sum().backward()
    counts = torch.zeros(vocab_size, vocab_size)
    counts.index_put_((train_data[:-1], train_data[1:]), torch.ones(len(train_data) - 1), accumulate=True)
    with torch.no_grad():  # the best bigram table, counted, not learned
        w.copy_((counts + 0.01).log())
        own = {name: float(F.cross_entropy(w[d[:-1]], d[1:])) for name, d in (("train", train_data), ("val", val_data))}
    lesson = {row["step"]: row for row in LESSON_HISTORY}
    steps = [it for it in range(max_iters) if it % eval_interval == 0 or it == max_iters - 1]
    return model, [dict(lesson[s]) if s in lesson else {"step": s, **own} for s in steps]
"""


def test_ex12_a_counted_table_beside_empty_backward_passes_scores_nothing(tmp_path, references):
    """No optimizer, no training forward: 3000 backward passes of `(w * 0).sum()`, the bigram
    table counted from the data, the lesson's rows and the counted table's own losses as the
    history. It once kept the band and the table (8 points, 17/20 in all). Its outputs give it
    away: at learning rate 0 its rows are not its model's losses, and its model is not the lesson's."""
    references("ex12")
    (tmp_path / "student_ex12_counted.py").write_text(COUNTED, encoding="utf-8")
    module = load_module_from(tmp_path, "student_ex12_counted")
    result = _grade("ex12", module, references, only={"test_required_band", "test_lesson_table"})
    assert len(result.checks) == 2 and not any(c.passed for c in result.checks), \
        [(c.name, c.passed, c.finding and c.finding.en) for c in result.checks]
    messages = {c.name: c.finding.en for c in result.checks}
    assert "at learning rate 0 the model never moves" in messages["test_required_band"], messages
    assert "not the one the lesson's training gives" in messages["test_lesson_table"], messages


def test_ex12_the_lessons_table_needs_the_lessons_model(tmp_path, references):
    """The lesson's training, its rows its own, then the table nudged after the last estimate
    (its losses move by less than the last row's tolerance): the rows can be matched by a model
    that is not the lesson's, so the table's points need the lesson's predictions too."""
    nudged = ("    return model, history", "    with torch.no_grad():\n"
              "        model.token_embedding_table.weight.add_(1e-2 * torch.randn(vocab_size, vocab_size))\n"
              "    return model, history")
    result = _grade("ex12", _submission(tmp_path, "ex12", [nudged], references), references,
                    only={"test_required_band", "test_lesson_table"})
    passed = {c.name: c.passed for c in result.checks}
    assert passed == {"test_required_band": True, "test_lesson_table": False}, \
        [(c.name, c.finding and c.finding.en) for c in result.checks]
    (table,) = [c for c in result.checks if c.name == "test_lesson_table"]
    assert "not the one the lesson's training gives" in table.finding.en, table.finding.en


def test_a_decode_that_only_looks_up_what_encode_saw_fails_the_round_trips(tmp_path, references):
    """encode remembers each text by its ids and decode only looks them up (no decoding at
    all): the round-trip checks once passed, since they decoded exactly what encode had just
    returned in the same worker. Each now also decodes a sequence no encode returned."""
    ex06 = _submission(tmp_path, "ex06", [
        ("        return [self.stoi[ch] for ch in s]",
         "        ids = [self.stoi[ch] for ch in s]\n        _SEEN[tuple(ids)] = s\n        return ids"),
        ('        return "".join(self.itos[int(i)] for i in ids)',
         '        return _SEEN.get(tuple(int(i) for i in ids), "")\n\n\n_SEEN = {}')])
    checks = {"test_roundtrip_random", "test_whole_corpus"}
    result = _grade("ex06", ex06, references, only=checks)
    assert {c.name for c in result.checks} == checks and not any(c.passed for c in result.checks), \
        [(c.name, c.passed) for c in result.checks]
    ex13 = _submission(tmp_path, "ex13", [
        ("    return ids\n    ### END SOLUTION\n\n\ndef bpe_decode",
         "    _SEEN[tuple(ids)] = text\n    return ids\n\n\n_SEEN = {}\n\n\ndef bpe_decode"),
        ('    return data.decode("utf-8", errors="replace")', '    return _SEEN.get(tuple(int(i) for i in ids), "")')])
    checks = {"test_roundtrip_own_merges", "test_encode_decode_examples"}
    result = _grade("ex13", ex13, references, only=checks)
    assert {c.name for c in result.checks} == checks and not any(c.passed for c in result.checks), \
        [(c.name, c.passed) for c in result.checks]


# ------------------------------------------------------------------ no vacuous passes

def _all_raise(tmp_path, exercise_id: str, error: str = "ValueError('no')", name: str = "raising"):
    """The exercise's file with every function's body replaced by `raise <error>`."""
    import ast

    source = (COURSE.solutions_dir / COURSE.exercise(exercise_id).file).read_text(encoding="utf-8")
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            node.body = [ast.parse(f"raise {error}").body[0]]
    module_name = f"student_{exercise_id}_{name}_{next(_names)}"
    (tmp_path / f"{module_name}.py").write_text(ast.unparse(tree), encoding="utf-8")
    return load_module_from(tmp_path, module_name)


def test_ex02s_rule_is_not_kept_by_functions_that_do_not_run(tmp_path, references):
    """Every function raising ValueError: no forbidden API ran, because nothing ran; once 2 points.
    One function done and the others still stubs keeps the rule's points (it was kept where it ran)."""
    result = _grade("ex02", _all_raise(tmp_path, "ex02"), references, only={"test_forbidden_apis"})
    (check,) = result.checks
    assert not check.passed and "did not run to the end" in check.finding.en, check.finding.en
    half = _submission(tmp_path, "ex02", [("    return float(log_sum_exp - z[label])",
                                           "    raise NotImplementedError")])
    (check,) = _grade("ex02", half, references, only={"test_forbidden_apis"}).checks
    assert check.passed


def test_ex11s_mode_and_gradient_checks_need_the_model_called(tmp_path, references):
    """An estimate_loss that never calls the model returns the public step-0 numbers: the
    gradient and mode checks once passed, since nothing was recorded and nothing changed."""
    references("ex11")
    (tmp_path / "student_ex11_idle.py").write_text(
        "def estimate_loss(model, splits, block_size, batch_size, eval_iters, generator=None):\n"
        "    return {name: 4.7 for name in splits}\n", encoding="utf-8")
    module = load_module_from(tmp_path, "student_ex11_idle")
    checks = {"test_no_grad", "test_train_mode_restored", "test_eval_mode_kept"}
    result = _grade("ex11", module, references, only=checks)
    assert {c.name for c in result.checks} == checks and not any(c.passed for c in result.checks), \
        [(c.name, c.passed) for c in result.checks]


def test_ex12_a_copy_of_the_trained_model_keeps_the_band_and_the_table(tmp_path, references):
    module = _submission(tmp_path, "ex12", [("    return model, history", "    import copy\n    return copy.deepcopy(model), history")],
                         references)
    result = _grade("ex12", module, references, only={"test_required_band", "test_lesson_table"})
    assert all(c.passed for c in result.checks), [(c.name, c.finding and c.finding.en) for c in result.checks]


PASTED = """    from grader.model.lesson import LESSON_HISTORY  # the lesson's rows pasted over its own, the last kept
    by_step = {row["step"]: row for row in LESSON_HISTORY}
    history = [dict(by_step[h["step"]]) if h["step"] in by_step else h for h in history]
    return model, history"""


def test_ex12_the_lessons_rows_pasted_over_a_real_training_are_told_apart(tmp_path, references):
    """A real training at another learning rate (its last row its model's own) with the lesson's
    rows pasted over the others: the table's points need the lesson's trained model too."""
    module = _submission(tmp_path, "ex12", [("learning_rate=1e-2", "learning_rate=2e-2"),
                                            ("    return model, history", PASTED)], references)
    result = _grade("ex12", module, references, only={"test_lesson_table"})
    (check,) = result.checks
    assert not check.passed and "not the one the lesson's training gives" in check.finding.en, check.finding.en


def test_ex11_the_lessons_step0_written_in_scores_nothing(tmp_path, references):
    """An estimate_loss that returns the table's step 0 when asked for 200 batches, without
    calling the model: the public check once gave it 2 points (a lookup of public numbers).
    The values must be the mean of the losses the model computed."""
    references("ex11")
    (tmp_path / "student_ex11_lookup.py").write_text(
        "def estimate_loss(model, splits, block_size, batch_size, eval_iters, generator=None):\n"
        "    if eval_iters == 200:\n"
        "        return {'train': 4.7305, 'val': 4.7241}\n"
        "    return {name: 0.0 for name in splits}\n", encoding="utf-8")
    module = load_module_from(tmp_path, "student_ex11_lookup")
    (check,) = _grade("ex11", module, references, only={"test_lesson_step0"}).checks
    assert not check.passed, check
    honest = _submission(tmp_path, "ex11", [], references)
    (check,) = _grade("ex11", honest, references, only={"test_lesson_step0"}).checks
    assert check.passed, check.finding and check.finding.en
