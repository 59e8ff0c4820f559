"""The course the cohort tests grade with: the kit's, cut to ex01 and ex02 with 3 s limits."""

from __future__ import annotations

import pytest

from tests.kit import make_course


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return make_course(tmp_path_factory.mktemp("course"))
