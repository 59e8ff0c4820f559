"""Where the kit finds its own files: beside the package in a checkout, inside it when installed.

Installed from a wheel, the package's parent is site-packages, where other distributions keep
folders of their own (Hugging Face's `datasets/`, say): the installed kit reads only the copies
it carries (`grader/_kit/`), and has no checkout `datasets/` folder to look for the corpus in.
The layouts are built in tmp_path and the paths module pointed at them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from grader.data import catalog
from grader.model import paths


def _layout(root: Path, monkeypatch: pytest.MonkeyPatch, *, beside: bool, bundled: bool) -> Path:
    package = root / "grader"
    package.mkdir(parents=True)
    if beside:
        (root / "course.toml").write_text("", encoding="utf-8")
        (root / "datasets").mkdir()
        (root / "datasets" / "catalog.toml").write_text("", encoding="utf-8")
    if bundled:
        (package / "_kit" / "datasets").mkdir(parents=True)
        (package / "_kit" / "course.toml").write_text("", encoding="utf-8")
        (package / "_kit" / "datasets" / "catalog.toml").write_text("", encoding="utf-8")
    monkeypatch.setattr(paths, "KIT_ROOT", root)
    monkeypatch.setattr(paths, "BUNDLED", package / "_kit")
    return root


def test_a_checkout_reads_beside_the_package(tmp_path, monkeypatch):
    root = _layout(tmp_path / "kit", monkeypatch, beside=True, bundled=False)
    assert paths.in_checkout()
    assert paths.kit_file("course.toml") == root / "course.toml"
    assert catalog.default_catalog_path() == root / "datasets" / "catalog.toml"
    assert paths.checkout_folder("datasets") == root / "datasets"


def test_an_installed_kit_reads_its_own_copies_whatever_lies_beside_it(tmp_path, monkeypatch):
    site = _layout(tmp_path / "site-packages", monkeypatch, beside=False, bundled=True)
    (site / "datasets").mkdir()  # another distribution's package, with a file of the same name
    (site / "datasets" / "catalog.toml").write_text("not ours", encoding="utf-8")
    (site / "exercises").mkdir()
    assert not paths.in_checkout()
    assert paths.kit_file("course.toml") == site / "grader" / "_kit" / "course.toml"
    assert catalog.default_catalog_path() == site / "grader" / "_kit" / "datasets" / "catalog.toml"
    assert paths.checkout_folder("datasets") is None  # the corpus: GPT_COURSE_DATA, the cache, a download


def test_the_real_catalog_is_found_and_read():
    entry = catalog.get_dataset("tinyshakespeare")
    assert entry.size == 1_115_394 and catalog.default_catalog_path().is_file()
