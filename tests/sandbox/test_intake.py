"""A submission read as data, by both of intake's walkers (file descriptors; paths, as on Windows).

Each rule is tried on real links (relative, absolute, to /proc/self/cwd/solutions, to the kit's
solutions/, nested, the folder itself and a folder on its path), a FIFO, sizes and counts over
the caps, and a file swapped between the survey and the read. The path walker also runs with
`O_NOFOLLOW`, `O_DIRECTORY` and `dir_fd` taken away, as on Windows, where it is chosen by itself.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from grader.sandbox import intake
from grader.sandbox.intake import SubmissionRefused, copy_submission, read_submission, survey

KIT = Path(__file__).resolve().parents[2]
EX01 = "ex01_windows.py"
pytestmark = pytest.mark.skipif(os.name != "posix", reason="makes POSIX links and FIFOs")


@pytest.fixture(params=["fd", "paths"])
def portable(request) -> bool:
    return request.param == "paths"


def _submission(folder: Path) -> Path:
    (folder / "data").mkdir(parents=True)
    (folder / EX01).write_text("X = 1\n", encoding="utf-8")
    (folder / "data" / "notes.txt").write_text("mine\n", encoding="utf-8")
    return folder


def test_a_plain_submission_gives_its_top_level_py_files(tmp_path, portable):
    sub = _submission(tmp_path / "sub")
    assert read_submission(str(sub), portable=portable) == {EX01: b"X = 1\n"}
    found = survey(str(sub), portable=portable)
    assert sorted(found.entries) == [("data",), ("data", "notes.txt"), (EX01,)]


@pytest.mark.parametrize("layout", ["relative", "absolute", "proc_cwd", "kit_file", "nested", "folder_itself",
                                    "on_the_path"])
def test_a_link_anywhere_refuses(tmp_path, portable, layout):
    sub = _submission(tmp_path / "sub")
    graded = sub
    if layout == "relative":
        os.symlink(os.path.relpath(KIT / "solutions", sub), sub / "reference")
    elif layout == "absolute":
        os.symlink(KIT / "solutions", sub / "reference")
    elif layout == "proc_cwd":
        os.symlink("/proc/self/cwd/solutions", sub / "exercises")
    elif layout == "kit_file":
        os.symlink(KIT / "solutions" / EX01, sub / "data" / "answer.txt")
    elif layout == "nested":
        (sub / "data" / "a" / "b").mkdir(parents=True)
        os.symlink(KIT / "solutions", sub / "data" / "a" / "b" / "c")
    elif layout == "folder_itself":
        os.symlink(KIT / "solutions", tmp_path / "linked")
        graded = tmp_path / "linked"
    else:
        os.symlink(tmp_path / "sub", tmp_path / "via")
        graded = tmp_path / "via" / "data"
    with pytest.raises(SubmissionRefused, match="is a symbolic link") as info:
        read_submission(str(graded), portable=portable)
    assert info.value.reason == "link" and "提交被拒绝" in info.value.zh


def test_special_files_and_caps_refuse(tmp_path, portable):
    sub = _submission(tmp_path / "sub")
    os.mkfifo(sub / "data" / "pipe")
    with pytest.raises(SubmissionRefused, match="data/pipe is a FIFO"):
        read_submission(str(sub), portable=portable)  # never opened: it would block
    os.unlink(sub / "data" / "pipe")
    with pytest.raises(SubmissionRefused, match="too large"):
        read_submission(str(sub), {"max_file": 2}, portable=portable)
    with pytest.raises(SubmissionRefused, match="too large"):
        read_submission(str(sub), {"max_total": 8}, portable=portable)  # the data file counts
    with pytest.raises(SubmissionRefused, match="too many entries"):
        read_submission(str(sub), {"max_entries": 2}, portable=portable)
    (sub / "data" / "a" / "b").mkdir(parents=True)
    with pytest.raises(SubmissionRefused, match="nested too deeply"):
        read_submission(str(sub), {"max_depth": 2}, portable=portable)


def test_tolerated_entries_are_recorded_not_followed(tmp_path, portable):
    sub = _submission(tmp_path / "sub")
    os.symlink(KIT / "solutions" / EX01, sub / "ex02_nll.py")
    found = survey(str(sub), tolerate=lambda parts, err: parts == ("ex02_nll.py",), portable=portable)
    assert [(p.parts, p.reason) for p in found.problems] == [(("ex02_nll.py",), "link")]
    assert ("ex02_nll.py",) not in found.entries


def test_a_file_swapped_after_the_survey_is_not_read(tmp_path, portable):
    sub = _submission(tmp_path / "sub")
    found = survey(str(sub), portable=portable)
    (sub / "other.py").write_text("X = 2\n", encoding="utf-8")  # made while the surveyed file lives
    os.replace(sub / "other.py", sub / EX01)
    (result,) = found.read([(EX01,)], 1 << 20).values()
    assert isinstance(result, SubmissionRefused) and result.reason == "changed"
    found = survey(str(sub), portable=portable)
    os.unlink(sub / EX01)
    os.symlink(KIT / "solutions" / EX01, sub / EX01)
    (result,) = found.read([(EX01,)], 1 << 20).values()
    assert isinstance(result, SubmissionRefused) and result.reason == "link"


def test_without_nofollow_and_dir_fd_the_path_walker_is_chosen(tmp_path, monkeypatch):
    """As on Windows: no O_NOFOLLOW, no O_DIRECTORY, no dir_fd; the same answers, the same refusals."""
    for name in ("O_NOFOLLOW", "O_DIRECTORY"):
        monkeypatch.delattr(os, name, raising=False)
    monkeypatch.setattr(os, "supports_dir_fd", set())
    monkeypatch.setattr(os, "supports_fd", set())
    assert isinstance(intake._walker(), intake._PathWalk)
    sub = _submission(tmp_path / "sub")
    assert read_submission(str(sub)) == {EX01: b"X = 1\n"}
    os.symlink(KIT / "solutions", sub / "data" / "reference")
    with pytest.raises(SubmissionRefused, match="data/reference is a symbolic link"):
        read_submission(str(sub))


def test_the_private_copy_holds_only_what_was_read(tmp_path, portable):
    sub = _submission(tmp_path / "sub")
    assert copy_submission(str(sub), str(tmp_path / "copy"), portable=portable) is None
    assert sorted(os.listdir(tmp_path / "copy")) == [EX01]
    os.symlink(KIT / "solutions", sub / "reference")
    refusal = copy_submission(str(sub), str(tmp_path / "copy2"), portable=portable)
    assert refusal and "submission refused" in refusal and os.listdir(tmp_path / "copy2") == []
