"""A disk that fills while the gradebook is written: a clear refusal, never a half-written book.

OUT is a real tmpfs of 64 KiB (too small for the staged copies and the gradebook): the batch
stops with the reason and a non-zero exit, leaves no grades.csv or results.json behind (the
gradebook is written whole or not at all), and once the disk has room again the same
command finishes with the gradebook an uninterrupted run gives.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.cohorts import batch, batch_here, cohort

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("mount"), reason="mounts a tmpfs (root)")


@pytest.fixture
def small_disk(tmp_path):
    where = tmp_path / "disk"
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)], check=True)
    yield where
    subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_is_refused_then_the_same_book_once_there_is_room(course, tmp_path, small_disk,  # noqa: F811
                                                                      in_process_runner):
    folder = cohort(tmp_path / "cohort", 3)
    out = small_disk / "out"
    full = batch(course, folder, out, "-j", "1")
    assert full.returncode == 3  # the grader could not finish: neither a failed check (1) nor usage (2)
    assert "No space left on device" in full.stderr and "Traceback" not in full.stderr
    assert not (out / "grades.csv").exists() and not (out / "results.json").exists()

    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    again = batch_here(course, folder, out)
    assert again.returncode == 0, again.stderr[-2000:]
    single = batch_here(course, folder, tmp_path / "single")
    assert single.returncode == 0, single.stderr[-2000:]
    assert (out / "grades.csv").read_text(encoding="utf-8") == (tmp_path / "single" / "grades.csv").read_text(
        encoding="utf-8")


def test_a_single_runs_result_on_a_full_disk_leaves_the_earlier_one_whole(tmp_path, small_disk):
    """`grade ex01 --out F` where the disk fills: exit 3, and F as it was (once cut at the disk's
    size: invalid JSON whose first line said full marks)."""
    import json

    from tests.in_process import grade
    from tests.kit import KIT

    earlier = small_disk / "result.json"
    earlier.write_text('{"earlier": 1}\n', encoding="utf-8")
    filler = small_disk / "filler"
    filler.write_bytes(b"x" * (64 * 1024 - 4096))  # what is left (a block) is less than the report
    # in this process: the report is written by the command itself (an exception it let out is raised here)
    run = grade("ex01", "--submission", str(KIT / "solutions"), "--format", "json", "--out", str(earlier))
    assert run.returncode == 3 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert json.loads(earlier.read_text(encoding="utf-8")) == {"earlier": 1}
    assert sorted(p.name for p in small_disk.iterdir()) == ["filler", "result.json"]  # no temporary file left
