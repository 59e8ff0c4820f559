"""Requests reach the worker exactly as the judge built them, however they travel."""

from __future__ import annotations

import copy
import math
import pickle

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.probes.seeding import seed_global
from grader.sandbox.requestcodec import pack, unpack

plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=4) | st.integers(), inner, max_size=4),
    max_leaves=12,
)


def same(a, b) -> bool:
    """Equal, of the same types all the way down (True == 1 and 1.0 == 1 do not pass)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        return (a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride()
                and a.requires_grad == b.requires_grad and torch.equal(a, b))
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


@settings(max_examples=80, deadline=None)
@given(plain)
def test_plain_requests_travel_plain_and_come_back_the_same(value):
    request = {"probe": "ex01.shift_pairs", "args": (value,), "kwargs": {"k": copy.deepcopy(value)}}
    data = pack(request)
    assert data[:1] == b"p"
    assert same(unpack(data), request)


def test_plain_tensors_come_back_exact_and_the_workers_own():
    sent = {"args": (torch.arange(6).view(2, 3), torch.tensor([1.5, -0.0, math.inf]), torch.zeros(0, 3),
                     torch.tensor(True), torch.ones(2, dtype=torch.bfloat16)), "module": "ex01_windows"}
    data = pack(sent)
    assert data[:1] == b"p"
    got = unpack(data)
    assert same(got, sent)
    first = got["args"][0]
    first.resize_(10)  # storage of its own, not the frame's bytes
    first.add_(1)
    assert sent["args"][0].tolist() == [[0, 1, 2], [3, 4, 5]]


class Mine(torch.Tensor):
    pass


base = torch.arange(12.0)
shared = torch.ones(3)
twice = [1, 2]


@pytest.mark.parametrize("value", [
    torch.ones(2, requires_grad=True),
    torch.nn.Parameter(torch.ones(2)),
    base[2:5],                          # a view of a larger tensor
    base.view(3, 4).t(),                # not contiguous
    (shared, shared),                   # one tensor twice
    (shared, shared.view(1, 3)),        # two tensors over one storage
    (twice, twice),                     # one list twice
    torch.float64,                      # not plain data
    torch.Size([2, 3]),
    slice(1, 2),
    torch.arange(3).as_subclass(Mine),
])
def test_what_the_plain_format_would_change_is_pickled_as_before(value):
    request = {"probe": "ex03.weight_bytes_dtype", "args": (value,)}
    data = pack(request)
    assert data[:1] == b"k"
    got = unpack(data)
    assert same(got, request) or pickle.dumps(got) == pickle.dumps(request)
    if value is twice or (isinstance(value, tuple) and value[0] is twice):
        assert got["args"][0][0] is got["args"][0][1]  # still one list, as pickle keeps it


def test_seed_global_seeds_what_torch_manual_seed_seeds_and_queues_nothing():
    queued = len(torch.cuda._queued_calls)
    seed_global(1234)
    ours = torch.get_rng_state()
    after_ours = len(torch.cuda._queued_calls)
    torch.manual_seed(1234)
    assert torch.equal(ours, torch.get_rng_state())
    if not torch.cuda._is_compiled():  # this machine's torch: CPU only
        assert after_ours == queued
