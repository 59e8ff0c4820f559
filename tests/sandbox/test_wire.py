"""Plain data crosses from the worker to the judge; nothing else does."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.sandbox.wire import DecodeError, decode, encode, to_plain

plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=60, deadline=None)
@given(plain)
def test_plain_data_round_trips(value):
    assert decode(encode(to_plain(value))) == value


def test_tensors_round_trip_as_plain_tensors():
    value = {"x": torch.arange(6).view(2, 3), "p": torch.nn.Parameter(torch.ones(2)), "s": torch.Size([2, 3])}
    back = decode(encode(to_plain(value)))
    assert type(back["x"]) is torch.Tensor and back["x"].tolist() == [[0, 1, 2], [3, 4, 5]]
    assert type(back["p"]) is torch.Tensor and not back["p"].requires_grad
    assert back["s"] == (2, 3)


class AlwaysEqual(int):
    def __eq__(self, other):
        return True

    __hash__ = int.__hash__


class Payload:
    def __reduce__(self):
        return (print, ("this must never run in the judge",))


def test_lying_numbers_are_not_converted_but_named():
    """An int subclass is not the contract's int (issue 10: the worker converts nothing); the
    judge gets its type's name, compares it unequal to any number and says `int(...)`."""
    from grader.judge.compare import compare

    got = to_plain(AlwaysEqual(3))
    assert got == {"__unsupported__": "AlwaysEqual"}
    assert "int(...)" in compare(3, decode(encode(got))).en


class SneakyTensor(torch.Tensor):
    pass


def test_a_tensor_subclass_arrives_as_a_plain_tensor():
    back = decode(encode(torch.ones(2).as_subclass(SneakyTensor)))
    assert type(back) is torch.Tensor and back.tolist() == [1.0, 1.0]


@pytest.mark.parametrize("hostile", [AlwaysEqual(3), Payload()])
def test_the_judge_refuses_anything_but_plain_data(hostile, capsys):
    with pytest.raises((DecodeError, TypeError)):  # the codec has no way to say "a class"
        decode(encode(hostile))
    with pytest.raises(DecodeError):  # nor does it read what pickle writes
        decode(__import__("pickle").dumps(hostile))
    assert "must never run" not in capsys.readouterr().out


def test_unknown_objects_are_described_not_sent():
    assert to_plain(object()) == {"__unsupported__": "object"}
    assert math.isnan(decode(encode(to_plain(float("nan")))))


def test_answers_the_judge_could_not_read_are_described_instead():
    """A tensor of more dimensions than the judge reads, a meta tensor (no data) and a dict
    keyed by something that is no plain key arrive as named markers: never a frame the judge
    refuses as forged, nor an error charged as the student's code raising."""
    import numpy

    many = to_plain(torch.zeros((1,) * 20))
    assert decode(encode(many)) == {"__unsupported__": "tensor of 20 dimensions"}
    assert to_plain(torch.empty(3, device="meta")) == {"__unsupported__": "meta tensor"}
    keyed = to_plain({numpy.int64(1): 2})
    assert decode(encode(keyed)) == {"__unsupported__": "dict keyed by int64"}
    with pytest.raises(TypeError):  # the codec itself sends no shape the judge would refuse
        encode(torch.zeros((1,) * 17))
