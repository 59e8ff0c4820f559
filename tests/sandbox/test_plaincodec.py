"""The worker-to-judge codec: reading an answer is bounded by the call's time.

A student's function can return millions of items (`[1 << 70] * 4_700_000`); reading them in
the judge took as long as building them in the worker, time no limit counted (a 60 s exercise
took 100 s). `decode(data, deadline)` stops at the deadline: the call is over its limit.
"""

from __future__ import annotations

import time

import pytest
import torch

from grader.sandbox.plaincodec import DecodeError, DecodeTimeout, decode, encode


def test_a_huge_answer_is_read_only_until_the_deadline():
    blob = encode({"ok": True, "value": [1 << 70] * 200_000})
    started = time.monotonic()
    with pytest.raises(DecodeTimeout):
        decode(blob, started)  # the call's time is already up
    stopped = time.monotonic() - started
    started = time.monotonic()
    assert decode(blob, started + 600)["value"][-1] == 1 << 70  # in time: read whole
    assert stopped < (time.monotonic() - started) / 2  # the late one stopped early, not after reading it all
    assert issubclass(DecodeTimeout, DecodeError)


def test_plain_answers_round_trip():
    value = {"ok": True, "value": [None, True, 1.5, -3, 1 << 80, "张三", (1, [2]), torch.arange(6).reshape(2, 3)]}
    back = decode(encode(value), time.monotonic() + 60)
    assert back["value"][:7] == value["value"][:7] and torch.equal(back["value"][7], value["value"][7])


def test_an_answer_of_too_many_items_is_refused_before_the_judges_memory_grows():
    """Items are counted whatever their kind, packed ints included: 12 million `{}` fit in a
    60 MB answer and take gigabytes once built in the judge; the largest real answer (ex06's
    encoding of the corpus) has 1.1 million items."""
    import pytest

    from grader.sandbox import plaincodec

    assert len(plaincodec.decode(plaincodec.encode([7] * 1_115_399))) == 1_115_399
    with pytest.raises(plaincodec.DecodeError, match="more than 3,000,000 items"):  # counted whatever the item
        plaincodec.decode(plaincodec.encode([None] * (plaincodec.MAX_ITEMS + 1)))
    with pytest.raises(plaincodec.DecodeError, match="items"):  # nested: counted together
        plaincodec.decode(plaincodec.encode([[None] * 1_000_000] * 4))
    with pytest.raises(plaincodec.DecodeError, match="more than 3,000,000 items"):  # packed ints too
        plaincodec.decode(plaincodec.encode([7] * (plaincodec.MAX_ITEMS + 1)))
    with pytest.raises(plaincodec.DecodeError, match="items"):
        plaincodec.decode(plaincodec.encode([[7] * 1_000_000] * 4))


def test_a_long_list_of_ints_travels_packed_and_comes_back_the_same():
    """ex06's 1.1 million ids go as one block of int64 (tag `q`), not an item at a time; what
    comes back is the same list of ints. A list with anything else in it (a bool, an int past
    int64, a float) goes item by item and keeps each item's type."""
    ids = list(range(-3, 1_115_396))
    blob = encode(ids)
    assert blob[:1] == b"q" and len(blob) == 1 + 4 + 8 * len(ids)
    back = decode(blob)
    assert back == ids and type(back) is list and {type(i) for i in back} == {int}
    for mixed in ([1] * 100 + [True], [1] * 100 + [1 << 63], [1] * 100 + [1.0], [-(1 << 63)] * 100):
        back = decode(encode(mixed))
        assert back == mixed and [type(i) for i in back] == [type(i) for i in mixed]
    assert encode([-(1 << 63)] * 100)[:1] == b"q" and encode([1] * 100 + [1 << 63])[:1] == b"l"


def test_a_forged_packed_list_is_refused():
    """A count the bytes do not hold, or more items than an answer may have, is refused before
    anything is built."""
    with pytest.raises(DecodeError, match="truncated"):
        decode(b"q" + (1_000_000).to_bytes(4, "little") + bytes(80))
    with pytest.raises(DecodeError, match="items"):
        decode(b"q" + (3_000_001).to_bytes(4, "little") + bytes(8 * 3_000_001))
    with pytest.raises(DecodeError, match="trailing"):
        decode(b"q" + (1).to_bytes(4, "little") + bytes(9))
