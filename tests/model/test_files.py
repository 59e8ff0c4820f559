"""Files written together (a gradebook's results.json and grades.csv): never one generation's
beside another's (grader.model.files.write_together)."""

from __future__ import annotations

import errno
import os

import pytest

import grader.model.files as files


def _old(tmp_path):
    (tmp_path / "results.json").write_text("old book", encoding="utf-8")
    (tmp_path / "grades.csv").write_text("old table", encoding="utf-8")


def test_a_disk_that_fills_changes_neither(tmp_path, monkeypatch):
    _old(tmp_path)
    real = files._written_beside

    def full(path, data, mode):
        if path.name == "grades.csv":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, data, mode)

    monkeypatch.setattr(files, "_written_beside", full)
    with pytest.raises(OSError):
        files.write_together([(tmp_path / "results.json", "new book"), (tmp_path / "grades.csv", "new table")])
    assert (tmp_path / "results.json").read_text(encoding="utf-8") == "old book"
    assert (tmp_path / "grades.csv").read_text(encoding="utf-8") == "old table"
    assert sorted(os.listdir(tmp_path)) == ["grades.csv", "results.json"]


def test_killed_between_the_two_renames_the_last_is_missing_never_older(tmp_path, monkeypatch):
    """Once results.json was new and grades.csv still the last run's (kill -9 between them)."""
    _old(tmp_path)
    real, done = os.replace, []

    def killed_after_one(src, dst):
        if done:
            raise KeyboardInterrupt  # stands in for the kill: nothing after the first rename runs
        done.append(dst)
        real(src, dst)

    monkeypatch.setattr(files.os, "replace", killed_after_one)
    with pytest.raises(KeyboardInterrupt):
        files.write_together([(tmp_path / "results.json", "new book"), (tmp_path / "grades.csv", "new table")])
    assert (tmp_path / "results.json").read_text(encoding="utf-8") == "new book"
    assert not (tmp_path / "grades.csv").exists()
