"""What a failure says is right, and says which part: whole student files, graded in this process.

Each submission here is a file a student could have written (the natural code, not a
mistake's variant), graded in this process as `grade check` grades mistakes (the checks, the
references and the diagnoses are the real ones; only the worker is skipped), and reported as
the student reads it (`for_student`, then the text report), in both languages.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from grader.judge.references import LiveReferences, load_module_from
from grader.judge.subjects import InProcessSubject
from grader.model.course import load_course
from grader.report.student_view import for_student
from grader.report.text import render_text
from grader.run.session import GradingSession, run_checks
from grader.run.startup import corpus_provider, resolve_corpus

COURSE = load_course()
_names = itertools.count()


@pytest.fixture(scope="module")
def references():
    return LiveReferences(COURSE)  # slow answers (ex12's trainings) kept in the session's cache, for every module


def _grade(tmp_path, references, exercise_id: str, source: str, only=None):
    """The student's file `source` for `exercise_id`, graded; the result and its text reports."""
    references(exercise_id)  # solutions/ on sys.path, for imports between exercises
    name = f"student_{exercise_id}_{next(_names)}"
    (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    subject = InProcessSubject(load_module_from(tmp_path, name), str(tmp_path))  # its frames are the student's
    (result,) = run_checks(GradingSession(COURSE, [exercise_id], references=references,
                                          in_process={exercise_id: subject}, corpus=corpus_provider(COURSE),
                                          only_checks=only))
    shown = for_student([result])
    return result, {lang: render_text(shown, lang) for lang in ("zh", "en")}


def _diagnosed(result) -> set[str]:
    return {c.finding.diagnosis["id"] for c in result.checks
            if not c.passed and c.finding is not None and c.finding.diagnosis}


def _failed(result) -> list[str]:
    return [c.name for c in result.checks if not c.passed and not c.manual]


# ------------------------------------------------------------------ one exercise, one explanation

EX01_OFF_BY_ONE = '''
def shift_pairs(tokens):
    if len(tokens) < 2:
        raise ValueError("need two tokens")
    return tokens[:-1], tokens[1:]


def make_windows(tokens, block_size, stride=1):
    if block_size < 1 or stride < 1:
        raise ValueError("block_size and stride must be >= 1")
    windows = []
    i = 0
    while i + block_size + 1 < len(tokens):
        windows.append((tokens[i:i + block_size], tokens[i + 1:i + block_size + 1]))
        i += stride
    return windows


def count_targets(n_tokens, block_size, stride=1):
    return len(make_windows(list(range(n_tokens)), block_size, stride)) * block_size
'''


def test_a_diagnosis_shared_by_five_checks_is_printed_once(tmp_path, references):
    result, text = _grade(tmp_path, references, "ex01", EX01_OFF_BY_ONE)
    failed = [c for c in result.checks if not c.passed]
    assert len(failed) == 5 and _diagnosed(result) == {"off_by_one_drop_last"}, [c.name for c in failed]
    for lang, same_as_above, reread in (("en", "diagnosis: the same as above", "reread "),
                                        ("zh", "诊断: 同上", "重读 ")):
        lines = text[lang].splitlines()
        full = [l for l in lines if l.strip().startswith(("diagnosis:", "诊断:")) and same_as_above not in l]
        assert len(full) == 1, text[lang]
        assert sum(same_as_above in l for l in lines) == 4, text[lang]
        assert sum(l.strip().startswith(reread) for l in lines) == 1, text[lang]


# ------------------------------------------------------------------ a failure says which part

EX10_NEW_PARAMETER = '''
import math

import torch
import torch.nn as nn


def uniform_loss(vocab_size):
    return math.log(vocab_size)


def mean_correct_prob(loss):
    return math.exp(-loss)


def init_is_suspicious(initial_loss, vocab_size, tol=0.1):
    return initial_loss - math.log(vocab_size) > tol


def small_init_(embedding, std=0.01):
    embedding.weight = nn.Parameter(torch.randn(embedding.weight.shape) * std)
'''


def test_replacing_the_parameter_in_small_init_is_diagnosed_and_named_by_its_key(tmp_path, references):
    result, text = _grade(tmp_path, references, "ex10", EX10_NEW_PARAMETER)
    assert _failed(result) == ["test_small_init_default"] and _diagnosed(result) == {"new_parameter"}
    assert "`same_parameter`" in text["en"] and "the Parameter was replaced" in text["en"], text["en"]
    assert "`same_parameter`" in text["zh"] and "Parameter 被换掉了" in text["zh"], text["zh"]
    for lang in ("zh", "en"):
        assert "形状对，值不对" not in text[lang] and "the right shape, wrong values" not in text[lang]
    # an instructor's report (every value shown) says expected against got, with the words
    (check,) = [c for c in result.checks if not c.passed]
    assert "`same_parameter`: expected True, got False — the Parameter was replaced" in check.finding.en
    assert "`same_parameter`：期望 True，得到 False——Parameter 被换掉了" in check.finding.zh


EX03_FROZEN_COUNTED = '''
def block_params(n_embd):
    return 12 * n_embd ** 2


def embedding_params(vocab_size, n_embd, tied=False):
    return vocab_size * n_embd if tied else 2 * vocab_size * n_embd


def gpt_params(n_layer, n_embd, vocab_size, tied=False):
    return n_layer * block_params(n_embd) + embedding_params(vocab_size, n_embd, tied)


def weight_bytes(n_params, dtype):
    import torch

    sizes = {"fp64": 8, "fp32": 4, "fp16": 2, "bf16": 2, "int8": 1,
             torch.float64: 8, torch.float32: 4, torch.float16: 2, torch.bfloat16: 2, torch.int8: 1}
    if dtype not in sizes:
        raise ValueError(f"unknown dtype {dtype}")
    return n_params * sizes[dtype]


def count_params(module):
    return sum(p.numel() for p in module.parameters())


def attention_cost_ratio(long_len, short_len):
    return (long_len / short_len) ** 2


ANSWER_PARAMS = 409_600_000
ANSWER_FP16_BYTES = 819_200_000
'''


def test_a_dict_of_counts_names_the_keys_that_differ(tmp_path, references):
    result, text = _grade(tmp_path, references, "ex03", EX03_FROZEN_COUNTED, only={"test_count_params_plain"})
    assert _failed(result) == ["test_count_params_plain"]
    for lang in ("zh", "en"):
        assert "`frozen_embedding`" in text[lang] and "`all_frozen`" in text[lang], text[lang]
        assert "`batchnorm_with_buffers`" not in text[lang].split("\n", 2)[-1].split("`frozen_embedding`")[0]
        assert "形状对，值不对" not in text[lang] and "the right shape" not in text[lang]
        assert "count_params_of" not in text[lang]  # the probe's name is the kit's


EX08_SECOND_RANDINT = '''
import torch


def get_batch(data, block_size, batch_size, generator=None):
    ix = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    x = torch.stack([data[i:i + block_size] for i in ix])
    iy = torch.randint(len(data) - block_size, (batch_size,), generator=generator)
    y = torch.stack([data[i + 1:i + block_size + 1] for i in iy])
    return x, y


def context_target_pairs(x_row, y_row):
    return [([int(v) for v in x_row[:t + 1]], int(y_row[t])) for t in range(len(y_row))]
'''


def test_a_y_drawn_by_a_second_randint_is_not_diagnosed_as_y_equals_x(tmp_path, references):
    result, text = _grade(tmp_path, references, "ex08", EX08_SECOND_RANDINT)
    assert "test_start_indices_uniform" in _failed(result)
    assert _diagnosed(result) == set(), _diagnosed(result)
    assert "`y_is_x_plus_1`" in text["en"] and "y should be x shifted by one" in text["en"], text["en"]
    assert "y 应当是 x 右移一位" in text["zh"]
    for lang in ("zh", "en"):  # no internal label: "the generator's next draws" once read "the:"
        assert "the:" not in text[lang] and "tiny:" not in text[lang]


EX08_BOUND_MINUS_ONE = EX08_SECOND_RANDINT.replace(
    "    iy = torch.randint(len(data) - block_size, (batch_size,), generator=generator)\n", "").replace(
    "for i in iy]", "for i in ix]").replace("ix = torch.randint(len(data) - block_size,",
                                            "ix = torch.randint(0, len(data) - block_size - 1,")


def test_randints_bound_one_too_small_is_diagnosed(tmp_path, references):
    assert "len(data) - block_size - 1," in EX08_BOUND_MINUS_ONE and "iy" not in EX08_BOUND_MINUS_ONE
    result, text = _grade(tmp_path, references, "ex08", EX08_BOUND_MINUS_ONE)
    assert _diagnosed(result) == {"randint_bound_minus_one"}, _diagnosed(result)
    assert "one too small" in text["en"] and "少了 1" in text["zh"]
    assert "`max_start`" in text["en"] and "len(data) - block_size - 1" in text["en"]


EX06_SET_ORDER = '''
class CharTokenizer:
    def __init__(self, text):
        self.chars = list(set(text))
        self.vocab_size = len(self.chars)
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}
        self.itos = {i: ch for i, ch in enumerate(self.chars)}

    def encode(self, s):
        return [self.stoi[ch] for ch in s]

    def decode(self, ids):
        return "".join(self.itos[int(i)] for i in ids)
'''


def test_an_unsorted_set_vocabulary_is_diagnosed(tmp_path, references):
    result, text = _grade(tmp_path, references, "ex06", EX06_SET_ORDER)
    assert _diagnosed(result) == {"set_order_vocab"}, _diagnosed(result)
    assert "list(set(text))" in text["en"] and "list(set(text))" in text["zh"]
    # The set's order follows this process's string hashes: the newline or the space may land in its
    # place by chance, and then that fact is right. Each fact the set got wrong is named.
    set_order = list(set(Path(resolve_corpus(COURSE)).read_text(encoding="utf-8")))
    wrong = {fact: words for fact, index, char, words in (
        ("id0", 0, "\n", "itos[0] should be the newline"), ("id1", 1, " ", "itos[1] should be the space"))
        if set_order[index] != char}
    for fact, words in wrong.items():
        assert f"`{fact}`" in text["en"] and words in text["en"], text["en"]


def test_the_first_appearance_order_is_not_the_set_order(tmp_path, references):
    first_seen = EX06_SET_ORDER.replace("list(set(text))", "list(dict.fromkeys(text))")
    result, _ = _grade(tmp_path, references, "ex06", first_seen)
    assert _diagnosed(result) == {"unsorted_vocab"}, _diagnosed(result)


def test_the_kits_own_reading_of_itos_is_not_the_students_error(tmp_path, references):
    """Ids from 1: the probe's own `itos[0]` once raised KeyError: 0, reported as "your code raised"."""
    from_one = EX06_SET_ORDER.replace("list(set(text))", "sorted(set(text))").replace(
        "enumerate(self.chars)}", "enumerate(self.chars, start=1)}")
    assert from_one.count("start=1") == 2
    result, text = _grade(tmp_path, references, "ex06", from_one, only={"test_course_vocab"})
    (check,) = result.checks
    assert not check.passed and check.finding.kind == "mismatch", check.finding
    assert "raised" not in text["en"] and "抛出" not in text["zh"], text["en"]
    assert "`id0`: expected '\\n', got None" in check.finding.en
    assert _diagnosed(result) == {"off_by_one_ids"}


# ------------------------------------------------------------------ the part that failed is named

EX13_ENCODE_RAISES = '''
def get_stats(ids):
    counts = {}
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids, pair, idx):
    out, i = [], 0
    while i < len(ids):
        if i < len(ids) - 1 and (ids[i], ids[i + 1]) == pair:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def train_bpe(text, vocab_size):
    if vocab_size < 256:
        raise ValueError("vocab_size must be at least 256")
    ids = list(text.encode("utf-8"))
    merges = []
    for idx in range(256, vocab_size):
        counts = get_stats(ids)
        if not counts:
            break
        pair = max(counts, key=counts.get)
        if counts[pair] < 2:
            break
        ids = merge(ids, pair, idx)
        merges.append((pair, idx))
    return merges


def bpe_encode(text, merges):
    ranks = {tuple(pair): idx for pair, idx in merges}
    ids = list(text.encode("utf-8"))
    first = ids[0]  # an empty text has none
    while len(ids) >= 2:
        candidates = [p for p in get_stats(ids) if p in ranks]
        if not candidates:
            break
        pair = min(candidates, key=lambda p: ranks[p])
        ids = merge(ids, pair, ranks[pair])
    return ids


def bpe_decode(ids, merges):
    vocab = {i: bytes([i]) for i in range(256)}
    for (a, b), idx in merges:
        vocab[idx] = vocab[a] + vocab[b]
    return b"".join(vocab[i] for i in ids).decode("utf-8", errors="replace")
'''


def test_a_round_trip_whose_encode_raised_names_encode(tmp_path, references):
    result, text = _grade(tmp_path, references, "ex13", EX13_ENCODE_RAISES, only={"test_roundtrip_own_merges"})
    (check,) = result.checks
    assert not check.passed and check.finding.raised_in == "bpe_encode"
    assert "bpe_encode(…): your code raised IndexError" in text["en"], text["en"]
    assert "decode(…)" not in text["en"] and "decode(…)" not in text["zh"]
    assert "your bpe_encode raised IndexError" in check.finding.en  # the instructor's copy says it too


# ------------------------------------------------------------------ a hidden failure: the part, never a placeholder

def test_a_hidden_failure_where_only_the_number_of_merges_differs_says_so_without_placeholders():
    from grader.judge.hiding import hidden_view
    from grader.model.calls import Observation

    merges = [((97 + i, 98 + i), 256 + i) for i in range(30)]
    view = hidden_view(Observation(ok=True, value=merges), Observation(ok=True, value=merges[:29]))
    assert view["en"] == "the number of items differs" and view["zh"] == "项数不同", view
    assert view["expected"].startswith("list[30] of ")
    assert "?" not in view["got"] and view["got"].startswith("list of "), view
    tables = hidden_view(Observation(ok=True, value={"t": __import__("torch").zeros(4, 8)}),
                         Observation(ok=True, value={"u": __import__("torch").zeros(5, 3), "v": 1}))
    assert "?" not in tables["got"] and "2 other keys" in tables["got"] and tables["en"] == "the keys differ", tables


def test_a_hidden_dict_of_facts_names_its_keys_never_their_values():
    from grader.judge.hiding import hidden_view
    from grader.model.calls import Observation

    expected = {"rows_are_slices": True, "max_start": 15, "stoi": {"a": 0, "b": 1}}
    got = {"rows_are_slices": True, "max_start": 14, "stoi": {"a": 1, "b": 0}}
    view = hidden_view(Observation(ok=True, value=expected), Observation(ok=True, value=got),
                       words={"max_start": ("最大起点不对", "the largest start should be reached")})
    assert view["en"] == ("these parts differ: `max_start` (its value: the largest start should be reached), "
                          "`stoi` (its value)"), view["en"]
    assert "`max_start`（值：最大起点不对）" in view["zh"], view["zh"]
    assert "15" not in view["en"] + view["zh"] and "14" not in view["en"] + view["zh"]
    assert view["expected"] is None and view["got"] is None  # the same shape twice says nothing


@pytest.mark.parametrize("label, name", [
    ("get_batch(tensor(shape=(100,)), block_size=8)", "get_batch(…)"),
    ("tiny Shakespeare round trip", ""), ("d loss / d table", ""), ("the generator's next draws", ""),
    ("torch.manual_seed(42); get_batch(x, 8, 4)", ""), ("len(train), len(val) on tiny Shakespeare", ""),
])
def test_a_hidden_label_is_a_call_of_the_students_or_nothing(label, name):
    from grader.report.student_view import call_name

    assert call_name(label) == name


def test_a_hidden_label_never_names_a_probe():
    from grader.judge.hiding import contract_names, hidden_label

    names = contract_names(COURSE.exercises_dir / COURSE.exercise("ex03").file)
    finding = type("F", (), {"raised_in": "", "label": "count_params_of('plain')"})
    assert hidden_label(finding, names) == ""  # the probe's name is the kit's
    finding.label = "count_params(m) for modules sharing a weight"
    assert hidden_label(finding, names) == "count_params(…)"
    ex06 = contract_names(COURSE.exercises_dir / COURSE.exercise("ex06").file)
    assert ex06["__init__"] == "CharTokenizer" and ex06["encode"] == "encode"


# ------------------------------------------------------------------ time-outs: the cause, and the line

def _timed_out(traceback: str = "", output: str = ""):
    from grader.judge.student_errors import student_error_finding
    from grader.model.calls import Observation

    return student_error_finding(Observation(ok=False, error={"type": "Timeout", "message": "10 s",
                                                              "traceback": traceback}, output=output), "f(1)")


LOOP = '  File "ex01_windows.py", line 54, in make_windows\n    while True:'


def test_an_endless_loop_is_suspected_only_with_the_line_it_was_running():
    with_line = _timed_out(LOOP)
    assert "ex01_windows.py, line 54 (make_windows)" in with_line.en and "endless loop" in with_line.en
    assert "ex01_windows.py, line 54 (make_windows)" in with_line.zh and "死循环" in with_line.zh
    no_line = _timed_out()
    assert "endless" not in no_line.en and "死循环" not in no_line.zh, no_line.en
    assert "still running after 10 s" in no_line.en


def test_printing_that_cost_the_time_is_named_as_the_cause():
    from grader.model.calls import Printed

    flood = _timed_out("", Printed.of("x\n" * 100, (20_000_000, 1_000_000)))
    assert "printed 20 MB (1,000,000 lines)" in flood.en and "printing takes time" in flood.en, flood.en
    assert "打印了 20 MB" in flood.zh and "endless" not in flood.en
    printing = _timed_out('  File "ex01_windows.py", line 55, in make_windows\n    print("window", k, tokens)')
    assert "it was printing then" in printing.en and "endless" not in printing.en, printing.en
    assert "正在打印" in printing.zh


def test_the_kits_own_unpacking_of_a_batch_is_not_the_students_error(tmp_path, references):
    """get_batch returning (x, y, ix): the probe's own `x, y = …` once raised "too many values to
    unpack", reported as the student's ValueError; now the answer is compared as returned."""
    three = EX08_SECOND_RANDINT.replace(
        "    iy = torch.randint(len(data) - block_size, (batch_size,), generator=generator)\n", "").replace(
        "for i in iy]", "for i in ix]").replace("    return x, y\n", "    return x, y, ix\n")
    result, text = _grade(tmp_path, references, "ex08", three, only={"test_small_example", "test_layout"})
    assert len(_failed(result)) == 2, _failed(result)
    for check in result.checks:
        assert check.finding.kind == "mismatch", (check.name, check.finding.en)
    assert "raised" not in text["en"] and "抛出" not in text["zh"], text["en"]
    assert "length differs: expected 2, got 3" in text["en"]
