"""The kit proves itself, for ex08–ex13 (ex01–ex07, and the orphaned files:
test_selfcheck_ex01_ex07.py): every reference passes, every stub fails as not implemented,
every known mistake fails at least one check and is named there. The tests are
tests/build/selfcheck_run.py's, run here over this half of the course."""

from __future__ import annotations

from tests.build.selfcheck_run import (SECOND_HALF, pytest_generate_tests,  # noqa: F401 (pytest's)
                                       test_each_known_mistake_fails_and_is_named, test_files_agree_with_course_toml,
                                       test_reference_passes_every_check, test_stub_fails_every_check_as_not_implemented,
                                       test_the_self_check_judged_nothing_else, verdicts)

EXERCISES, ORPHANS = SECOND_HALF, False
