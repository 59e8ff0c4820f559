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
    """12 million `{}` in a 60 MB answer once took a judge to 4.3 GB; the largest real answer
    (ex06's encoding of the corpus) has 1.1 million items."""
    import pytest

    from grader.sandbox import plaincodec

    assert len(plaincodec.decode(plaincodec.encode([7] * 1_115_399))) == 1_115_399
    with pytest.raises(plaincodec.DecodeError, match="more than 3,000,000 items"):  # counted whatever the item
        plaincodec.decode(plaincodec.encode([None] * (plaincodec.MAX_ITEMS + 1)))
    with pytest.raises(plaincodec.DecodeError, match="items"):  # nested: counted together
        plaincodec.decode(plaincodec.encode([[None] * 1_000_000] * 4))
