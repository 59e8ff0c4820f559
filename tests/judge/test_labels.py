"""Calls in the report read as Python reads them."""

from __future__ import annotations

import torch

from grader.judge.labels import argument, call_label
from grader.model.calls import DataFile


def test_numbers_have_no_thousands_separators():
    assert call_label("gpt_params", (13, 499, 2084), {"tied": False}) == "gpt_params(13, 499, 2084, tied=False)"


def test_a_shortened_list_keeps_its_bracket():
    label = call_label("make_windows", ([25, 20, 30, 8, 27, 29, 1, 2, 3, 4, 5], 2), {"stride": 3})
    assert label.startswith("make_windows([25, 20") and ", …], 2, stride=3)" in label
    assert label.count("[") == label.count("]") and label.count("(") == label.count(")")


def test_a_tensor_is_shown_by_its_shape():
    assert argument(torch.zeros(4, 8)) == "tensor(shape=(4, 8))"
    assert call_label("get_batch", (torch.arange(100),), {"block_size": 8}) == \
        "get_batch(tensor(shape=(100,)), block_size=8)"
    assert argument(torch.tensor(2.5)) == "tensor(2.5)"


def test_strings_data_files_and_nesting():
    assert argument("hi") == "'hi'"
    long = argument("x" * 100)
    assert long.startswith("'xxx") and long.endswith("…'") and len(long) <= 30
    assert argument(DataFile("tinyshakespeare", "/d/input.txt", "0" * 64)) == "<tinyshakespeare>"
    assert argument((7,)) == "(7,)"
    assert argument({"a": [1, 2]}) == "{'a': [1, 2]}"
    assert argument(torch.float16) == "torch.float16"
