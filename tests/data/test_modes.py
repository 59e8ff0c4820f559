"""root 也是普通用户：缓存里的数据人人可读。

Data imported or downloaded (as root too, under any umask) is readable by every user: files
0644, the cache folders the kit made 0755, so the fenced workers (another uid, as root) can
read the corpus. As root: with umask 077 and a fresh cache, `grade data --dir …` then a
correct ex06 gets full marks from fenced workers.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from grader.data import datasets
from tests import corpus as shipped
from tests.data.test_datasets import _no_proxy, corpus, server  # noqa: F401  (fixtures)
from tests.in_process import grade

KIT = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask077():
    old = os.umask(0o077)
    yield
    os.umask(old)


def test_imported_file_is_world_readable(tmp_path, corpus, umask077):  # noqa: F811
    source = tmp_path / "mine" / "input.txt"
    source.parent.mkdir()
    source.write_bytes(corpus)
    cache = tmp_path / "cache"
    target = datasets.import_to_cache(source, cache_dir=cache, env={})
    assert _mode(target) == 0o644
    assert _mode(target.parent) == 0o755 and _mode(cache) == 0o755


def test_downloaded_file_is_world_readable(tmp_path, server, umask077):  # noqa: F811
    cache = tmp_path / "cache"
    path = datasets.resolve(env={}, cache_dir=cache, url=server.url("/good/input.txt"), progress=False)
    assert _mode(path) == 0o644 and _mode(path.parent) == 0o755


def test_a_cache_an_older_kit_wrote_0600_is_opened_up(tmp_path, corpus):  # noqa: F811
    cache = tmp_path / "cache"
    target = cache / "tinyshakespeare" / "input.txt"
    target.parent.mkdir(parents=True, mode=0o700)
    target.write_bytes(corpus)
    os.chmod(target, 0o600)
    assert datasets.resolve(env={}, cache_dir=cache, allow_download=False) == target
    assert _mode(target) == 0o644 and _mode(target.parent) == 0o755


@pytest.mark.skipif(os.geteuid() != 0, reason="the workers run as another uid only as root")
def test_as_root_data_then_a_correct_ex06_gets_full_marks(tmp_path, umask077):
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    env = {"GPT_COURSE_DATA": None, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}
    got = grade("data", "--dir", str(shipped.FOLDER), env=env)
    assert got.returncode == 0, got.stderr
    cached = home / ".cache" / "gpt-course" / "tinyshakespeare" / "input.txt"
    assert _mode(cached) == 0o644
    submission = tmp_path / "sub"
    submission.mkdir()
    name = "ex06_char_tokenizer.py"
    (submission / name).write_text((KIT / "solutions" / name).read_text(encoding="utf-8"), encoding="utf-8")
    run = grade("ex06", "--submission", str(submission), "--format", "json", env=env, cwd=tmp_path)
    report = json.loads(run.stdout)
    failed = [c["message"] for e in report["exercises"] for c in e["checks"] if not c["passed"]]
    assert report["score"] == report["max_score"] > 0, failed


@pytest.mark.skipif(os.geteuid() != 0, reason="the workers run as another uid only as root")
@pytest.mark.parametrize("kind", ["private", "a link elsewhere"])
def test_as_root_a_private_data_folder_is_copied_where_the_workers_can_read_it(tmp_path, kind):
    """GPT_COURSE_DATA naming a copy made under umask 077 (folders 0700, the file 0600), or
    whose file is a link to one in /tmp (a worker's /tmp is its own): the kit grades from a
    readable copy in its cache, never charging the student for where the data lies."""
    private = tmp_path / "private"
    (private / "tinyshakespeare").mkdir(parents=True, mode=0o700)
    private.chmod(0o700 if kind == "private" else 0o755)
    corpus_file = private / "tinyshakespeare" / "input.txt"
    if kind == "private":
        corpus_file.write_bytes(shipped.FILE.read_bytes())
        corpus_file.chmod(0o600)
    else:
        (private / "tinyshakespeare").chmod(0o755)
        elsewhere = tmp_path / "elsewhere.txt"
        elsewhere.write_bytes(shipped.FILE.read_bytes())
        elsewhere.chmod(0o644)
        corpus_file.symlink_to(elsewhere)
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    env = {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "GPT_COURSE_DATA": str(private)}
    submission = tmp_path / "sub"
    submission.mkdir()
    name = "ex06_char_tokenizer.py"
    (submission / name).write_text((KIT / "solutions" / name).read_text(encoding="utf-8"), encoding="utf-8")
    run = grade("ex06", "--submission", str(submission), "--format", "json", env=env, cwd=tmp_path)
    report = json.loads(run.stdout)
    failed = [c["message"] for e in report["exercises"] for c in e["checks"] if not c["passed"]]
    assert report["score"] == report["max_score"] > 0, failed
    assert _mode(home / ".cache" / "gpt-course" / "tinyshakespeare" / "input.txt") == 0o644
    if kind == "private":
        assert _mode(corpus_file) == 0o600  # the instructor's own copy is left as it is


@pytest.mark.skipif(os.geteuid() != 0, reason="the workers run as another uid only as root")
def test_as_root_a_cache_other_users_cannot_read_is_said_not_charged(tmp_path):
    """The cache folder made by another user, mode 0700: the copy there is no use to the
    workers; the kit says so (and how to fix it) instead of failing the checks as the code's."""
    private = tmp_path / "private"
    (private / "tinyshakespeare").mkdir(parents=True, mode=0o700)
    (private / "tinyshakespeare" / "input.txt").write_bytes(shipped.FILE.read_bytes())
    private.chmod(0o700)
    cache = tmp_path / "cache"
    (cache / "gpt-course" / "tinyshakespeare").mkdir(parents=True)
    for folder in (cache / "gpt-course", cache / "gpt-course" / "tinyshakespeare"):
        os.chown(folder, 65534, 65534)
        folder.chmod(0o700)
    env = {"XDG_CACHE_HOME": str(cache), "GPT_COURSE_DATA": str(private), "GRADE_LANG": "en"}
    submission = tmp_path / "sub"
    submission.mkdir()
    name = "ex06_char_tokenizer.py"
    (submission / name).write_text((KIT / "solutions" / name).read_text(encoding="utf-8"), encoding="utf-8")
    run = grade("ex06", "--submission", str(submission), env=env, cwd=tmp_path)
    assert run.returncode == 1 and "cannot be read by other users" in run.stdout, run.stdout + run.stderr
    assert "your code raised" not in run.stdout
