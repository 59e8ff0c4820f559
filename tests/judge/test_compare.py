"""Comparisons: shapes first, then dtype, then values; where they first differ."""

from __future__ import annotations

import torch

from grader.judge.compare import Tol, compare, short


def test_shape_is_reported_before_values():
    found = compare(torch.zeros(8, 32), torch.zeros(32, 8))
    assert "expected (8, 32), got (32, 8)" in found.en


def test_dtype_then_values_with_first_index():
    assert "dtype" in compare(torch.zeros(2, dtype=torch.long), torch.zeros(2)).en
    found = compare(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([[1.0, 2.0], [3.0, 4.5]]))
    assert "(1, 1)" in found.en and "largest difference 0.5" in found.en


def test_tolerance_and_nan():
    assert compare(1.0, 1.0 + 1e-7) is None
    assert compare(1.0, 1.01) is not None
    assert compare(1.0, 1.01, Tol(rtol=0.1)) is None
    assert compare(float("nan"), float("nan")) is None
    assert compare(torch.tensor([float("nan")]), torch.tensor([float("nan")])) is None


def test_ints_are_exact_and_typed():
    assert compare(409_600_000, 409_600_000) is None
    assert compare(409_600_000, 409_600_001) is not None
    assert "type" in compare(3, "3").en
    # A 0-dim tensor is not the contract's float, a tuple not its list (issue 10): the message
    # says how to get the right type.
    assert ".item()" in compare(2.44, torch.tensor(2.44)).en
    assert ".item()" in compare(7, torch.tensor(7)).en
    assert "int(...)" in compare(7, 7.0).en
    assert ".tolist()" in compare([1, 2], torch.tensor([1, 2])).en
    assert "int64" in compare(3, {"__unsupported__": "int64"}).en  # a numpy int, named by the worker


def test_sequences_and_dicts():
    assert "use list(...)" in compare([1, 2], (1, 2)).en
    assert "use tuple(...)" in compare(((97, 97), 256), [[97, 97], 256]).en
    assert "use tuple(...)" in compare([((97, 97), 256)], [([97, 97], 256)]).en
    assert "length" in compare([1, 2], [1, 2, 3]).en
    assert "[1]" in compare({"a": [1, 2]}, {"a": [1, 3]}).en
    assert "missing" in compare({"a": 1}, {"b": 1}).en


def test_short_forms():
    assert short((torch.zeros(2, 4), torch.zeros(2, 4))) == "(2, 4) (2, 4)"
    assert short(torch.tensor(3.5)) == "3.5000"


def test_a_huge_answer_is_described_without_being_spelled_out():
    """An answer keyed by 16 MB tensors, or holding a long string or a huge int, is described
    in about the room given, and quickly: the judge's own time is not the student's to spend
    (spelled out, a dict keyed by three such tensors takes minutes and gigabytes of report)."""
    import time

    from grader.judge.verdicts import hand_mismatch

    keyed = {torch.randn((4,) * 11) + i: i for i in range(3)}
    started = time.monotonic()
    texts = [short(keyed), short(list(keyed), 120), short({"a": "x" * 10**6}), short([1] * 10**6),
             compare({"a": 1}, keyed).en, compare(["a"], [10**5000]).en]
    assert time.monotonic() - started < 5.0  # summarised, never walked item by item
    assert all(len(t) <= 200 for t in texts), [len(t) for t in texts]
    assert texts[0].startswith("{T(4, 4,") and "≈10^5000 (5001 digits)" in texts[-1]
    assert "≈10^5000" in compare(2.5, 10**5000).en  # no float of it: no OverflowError
    assert "too large" in hand_mismatch(7, 10**5000)[1]
    assert short(-(10**40)) == "-≈10^40 (41 digits)"


def test_a_file_that_raises_while_importing_does_not_answer_a_check_that_expects_the_raise():
    """`raise ValueError` at the top of every exercise file scores none of the four checks that
    expect a ValueError: the import failed, no function was called."""
    from grader.judge.verdicts import DEFAULT_TOL, _verdict
    from grader.model.calls import Observation

    expected = Observation.from_answer({"ok": False, "error": {"type": "ValueError", "mro": ["ValueError"]}})
    raised_by_the_call = Observation.from_answer({"ok": False, "error": {"type": "ValueError", "mro": ["ValueError"]}})
    raised_at_import = Observation.from_answer({"ok": False, "error": {"type": "UnicodeEncodeError", "import_error": True,
                                                                       "mro": ["UnicodeEncodeError", "ValueError"]}})
    assert _verdict(expected, raised_by_the_call, DEFAULT_TOL, True) is None
    assert _verdict(expected, raised_at_import, DEFAULT_TOL, True) is not None
