"""Sealed hand answers (grader.judge.sealed): matched like the value, never read.

A student release records ANSWER_PARAMS and the like sealed; the judge must still tell a
right answer from a wrong one under the check's tolerance, and a known mistake's recorded
(sealed) answer from the student's, while nothing it prints holds the value.
"""

from __future__ import annotations

import zlib

from grader.judge.compare import Tol, compare
from grader.judge.sealed import Sealed, from_plain, seal, to_plain
from grader.judge.verdicts import hand_mismatch


def test_an_int_a_float_and_a_shape_match_as_their_values_do():
    count = seal(123_456_789, "salt")
    assert count == 123_456_789 and 123_456_789 == count
    assert count != 123_456_788 and count != 123_456_789.0 and count != "123456789"
    shape = seal((2, 4, 8), "salt")
    assert (2, 4, 8) == shape and (2, 4, 9) != shape and [2, 4, 8] != shape and len(shape) == 3
    assert str(shape) == repr(count) == "?"
    assert seal(7, "one") == 7 and seal(7, "one").digest != seal(7, "two").digest  # salted


def test_a_float_matches_within_the_checks_tolerance():
    answer = seal(2.4911, "s")
    two_decimals = Tol(rtol=0.0, atol=0.005)
    assert compare(answer, 2.4961, two_decimals) is None and compare(answer, 2.49, two_decimals) is None
    assert compare(answer, 2.4962, two_decimals) is not None
    assert compare(answer, 2.49111) is None and compare(answer, 2.4915) is not None  # the default tolerance
    assert compare(answer, float("nan")) is not None and compare(answer, "2.4911") is not None


def test_compare_either_way_and_says_no_value():
    answer = seal(123_456_789, "s")
    assert compare(answer, 123_456_789) is None and compare(123_456_789, answer) is None  # a mistake's, recorded
    wrong = compare(answer, 61_728_394)
    assert wrong is not None and "123" not in wrong.en + wrong.zh and "not shown" in wrong.en
    assert compare({"hidden": seal((2, 4, 8), "s")}, {"hidden": (2, 4, 8)}) is None


def test_the_hand_message_tells_only_the_kind():
    assert "int" in hand_mismatch(seal(123_456_789, "s"), 123_456_789.0)[1]
    zh, en = hand_mismatch(seal(123_456_789, "s"), 61_728_394)
    assert en.startswith("not right.") and "small" not in en and "123" not in zh + en


def test_sealed_values_travel_in_the_recorded_answers():
    import grader.sandbox.wire as wire

    value = {"shapes": {"hidden": seal((2, 4, 8), "s"), "n_valid": seal(6, "s")}, "other": [1, (2, 3)]}
    back = from_plain(wire.decode(zlib.decompress(zlib.compress(wire.encode(to_plain(value))))))
    assert isinstance(back["shapes"]["hidden"], Sealed) and back["shapes"]["hidden"] == (2, 4, 8)
    assert back["shapes"]["n_valid"] == 6 and back["other"] == [1, (2, 3)]
    assert b"(2, 4, 8)" not in wire.encode(to_plain(value))
