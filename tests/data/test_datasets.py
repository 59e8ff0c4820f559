"""grader.data.datasets 的测试：本地 HTTP 服务器模拟下载（好、截断、损坏、404、连不上）。

Tests for grader.data.datasets: a local http.server on 127.0.0.1 (ephemeral port) serves the
real corpus, truncated and corrupted copies, and 404s; folders, caches and the kit's own
datasets/ (tried after the cache, in a checkout) live in tmp_path. The corpus served and copied
is the repository's own (tests/corpus.py), which a checkout finds by itself.
"""

from __future__ import annotations

import hashlib
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.data import datasets
from grader.data.datasets import DataError, load_text, locate, read_catalog, resolve
from grader.commands.data import data as data_command
from tests import corpus as shipped
from tests.data.served import SHA, SIZE, CorpusServer


@pytest.fixture
def refused_url() -> str:
    """A URL on a port nobody listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/input.txt"


@pytest.fixture(autouse=True)
def _no_checkout_data(monkeypatch: pytest.MonkeyPatch) -> None:
    # The kit's own datasets/ (a developer may keep the corpus there) is tried only where a test says.
    monkeypatch.setattr(datasets, "checkout_folder", lambda relative: None)


def _cache_files(cache: Path) -> list[Path]:
    return sorted(p for p in cache.rglob("*") if p.is_file()) if cache.exists() else []


# --------------------------------------------------------------------------- catalog


def test_catalog_lists_tinyshakespeare() -> None:
    entry = read_catalog(datasets.default_catalog_path())["tinyshakespeare"]
    assert (entry.file, entry.sha256, entry.size) == ("input.txt", SHA, SIZE)
    assert entry.url == "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"


def test_catalog_rejects_unknown_keys(tmp_path: Path) -> None:
    bad = tmp_path / "catalog.toml"
    bad.write_text(
        '[[datasets]]\nname="x"\nfile="x"\nurl="u"\nsha256="' + "0" * 64 + '"\nsize=1\ndescription="d"\nextra=1\n',
        encoding="utf-8",
    )
    with pytest.raises(DataError, match="unknown keys"):
        read_catalog(bad)


def test_unknown_name(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="Unknown data set 'nope'"):
        resolve("nope", env={}, cache_dir=tmp_path, allow_download=False)


def test_default_cache_dir_follows_xdg(tmp_path: Path) -> None:
    assert datasets.default_cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "gpt-course"
    assert datasets.default_cache_dir({"HOME": str(tmp_path)}) == tmp_path / ".cache" / "gpt-course"


# --------------------------------------------------------------------------- downloads


def test_good_download_is_verified_and_cached(server: CorpusServer, tmp_path: Path, corpus: bytes) -> None:
    cache = tmp_path / "cache"
    url = server.url("/good/input.txt")
    before = server.hits["/good/input.txt"]  # the server is shared by the module's tests
    path = resolve(env={}, cache_dir=cache, url=url, progress=False)
    assert path == cache / "tinyshakespeare" / "input.txt"
    assert path.read_bytes() == corpus
    assert _cache_files(cache) == [path]  # no temp files left behind
    assert server.hits["/good/input.txt"] == before + 1

    again = resolve(env={}, cache_dir=cache, url=url, progress=False)
    assert again == path
    assert server.hits["/good/input.txt"] == before + 1  # second call served from the cache


def test_cache_found_through_xdg_cache_home(server: CorpusServer, tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    path = resolve(env=env, url=server.url("/good/input.txt"), progress=False)
    assert path == tmp_path / "gpt-course" / "tinyshakespeare" / "input.txt"
    assert resolve(env=env, allow_download=False) == path


def test_download_with_progress_bar(server: CorpusServer, tmp_path: Path) -> None:
    path = resolve(env={}, cache_dir=tmp_path, url=server.url("/good/input.txt"), progress=True)
    assert datasets.file_sha256(path) == SHA


def test_load_text(server: CorpusServer, tmp_path: Path) -> None:
    text = load_text(env={}, cache_dir=tmp_path, url=server.url("/good/input.txt"), progress=False)
    assert len(text) == SIZE and text.startswith("First Citizen:")


@pytest.mark.parametrize("route", ["/short/input.txt", "/prefix/input.txt"])
def test_truncated_download(server: CorpusServer, tmp_path: Path, route: str) -> None:
    with pytest.raises(DataError) as info:
        resolve(env={}, cache_dir=tmp_path, url=server.url(route), progress=False)
    message = str(info.value)
    assert "Incomplete download" in message and "下载不完整" in message
    assert f"expected {SIZE:,}" in message
    assert _cache_files(tmp_path) == []  # no partial file left


def test_too_long_download(server: CorpusServer, tmp_path: Path) -> None:
    with pytest.raises(DataError, match="longer than expected"):
        resolve(env={}, cache_dir=tmp_path, url=server.url("/long/input.txt"), progress=False)
    assert _cache_files(tmp_path) == []


def test_corrupted_download(server: CorpusServer, tmp_path: Path) -> None:
    with pytest.raises(DataError) as info:
        resolve(env={}, cache_dir=tmp_path, url=server.url("/corrupt/input.txt"), progress=False)
    message = str(info.value)
    assert f"expected sha256 {SHA}" in message
    assert "got      sha256 " in message and "实际 sha256" in message
    assert _cache_files(tmp_path) == []


def test_http_404(server: CorpusServer, tmp_path: Path) -> None:
    url = server.url("/missing/input.txt")
    with pytest.raises(DataError) as info:
        resolve(env={}, cache_dir=tmp_path, url=url, progress=False)
    message = str(info.value)
    assert "HTTP 404" in message and url in message
    assert "GPT_COURSE_DATA" in message and "grade data --dir" in message
    assert _cache_files(tmp_path) == []


def test_connection_refused(refused_url: str, tmp_path: Path) -> None:
    with pytest.raises(DataError) as info:
        resolve(env={}, cache_dir=tmp_path, url=refused_url, progress=False)
    message = str(info.value)
    assert "cannot reach" in message and "连不上" in message
    assert "GPT_COURSE_DATA" in message and "grade data --dir" in message
    assert _cache_files(tmp_path) == []


def test_corrupted_cache_is_replaced(server: CorpusServer, tmp_path: Path, corpus: bytes) -> None:
    cached = tmp_path / "tinyshakespeare" / "input.txt"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(corpus[:-1] + b"?")
    path = resolve(env={}, cache_dir=tmp_path, url=server.url("/good/input.txt"), progress=False)
    assert path == cached and path.read_bytes() == corpus


def test_corrupted_cache_without_download(tmp_path: Path, corpus: bytes) -> None:
    cached = tmp_path / "tinyshakespeare" / "input.txt"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(corpus[:100])
    with pytest.raises(DataError, match="failed its checksum"):
        resolve(env={}, cache_dir=tmp_path, allow_download=False)
    assert not cached.exists()


# --------------------------------------------------------------------------- folders


@pytest.mark.parametrize("layout", ["nested", "flat"])
def test_env_var_folder(tmp_path: Path, corpus: bytes, layout: str) -> None:
    folder = tmp_path / "data"
    target = folder / "tinyshakespeare" / "input.txt" if layout == "nested" else folder / "input.txt"
    target.parent.mkdir(parents=True)
    target.write_bytes(corpus)
    cache = tmp_path / "cache"
    path = resolve(env={"GPT_COURSE_DATA": str(folder)}, cache_dir=cache, allow_download=False)
    assert path == target
    assert _cache_files(cache) == []  # a user folder is read in place, never copied


@pytest.mark.parametrize("layout", ["nested", "flat"])
def test_data_dir_beats_env_var(tmp_path: Path, corpus: bytes, layout: str) -> None:
    mine = tmp_path / "mine"
    target = mine / "tinyshakespeare" / "input.txt" if layout == "nested" else mine / "input.txt"
    target.parent.mkdir(parents=True)
    target.write_bytes(corpus)
    other = tmp_path / "other"
    (other / "input.txt").parent.mkdir(parents=True)
    (other / "input.txt").write_bytes(b"not shakespeare")  # would fail if it were read
    env = {"GPT_COURSE_DATA": str(other)}
    assert resolve(data_dir=mine, env=env, cache_dir=tmp_path / "c", allow_download=False) == target


@pytest.mark.parametrize("layout", ["nested", "flat"])
def test_the_kits_datasets_folder_comes_after_the_cache(tmp_path: Path, corpus: bytes, layout: str) -> None:
    """GPT_COURSE_DATA, then the cache, then the checkout's datasets/, then a download."""
    kit = tmp_path / "kit" / "datasets"
    target = kit / "tinyshakespeare" / "input.txt" if layout == "nested" else kit / "input.txt"
    target.parent.mkdir(parents=True)
    target.write_bytes(corpus)
    cache = tmp_path / "cache"
    assert resolve(env={}, cache_dir=cache, kit_dir=kit, allow_download=False) == target
    assert _cache_files(cache) == []  # read in place
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "input.txt").write_bytes(corpus)
    assert resolve(env={"GPT_COURSE_DATA": str(mine)}, cache_dir=cache, kit_dir=kit,
                   allow_download=False) == mine / "input.txt"
    cached = cache / "tinyshakespeare" / "input.txt"
    cached.parent.mkdir(parents=True)
    cached.write_bytes(corpus)
    assert resolve(env={}, cache_dir=cache, kit_dir=kit, allow_download=False) == cached
    with pytest.raises(DataError, match="not found and downloading is off"):
        resolve(env={}, cache_dir=tmp_path / "empty", kit_dir=False, allow_download=False)


def test_a_checkout_reads_the_corpus_it_ships_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh clone: no GPT_COURSE_DATA, an empty cache, no network; the repository's own
    datasets/ holds the corpus, verified, read in place (`grade data --no-download` too)."""
    from grader.model import paths

    monkeypatch.setattr(datasets, "checkout_folder", paths.checkout_folder)  # this checkout's datasets/
    cache = tmp_path / "cache"
    assert resolve(env={}, cache_dir=cache, allow_download=False) == shipped.FILE
    assert _cache_files(cache) == []
    result = CliRunner().invoke(data_command, ["--no-download"],
                                env={"XDG_CACHE_HOME": str(tmp_path / "xdg"), "GPT_COURSE_DATA": None, "GRADE_LANG": "en"})
    assert result.exit_code == 0 and str(shipped.FILE) in result.output, result.output


def test_a_wrong_file_in_the_kits_datasets_folder_is_named(tmp_path: Path) -> None:
    kit = tmp_path / "datasets"
    kit.mkdir()
    (kit / "input.txt").write_bytes(b"not shakespeare")
    with pytest.raises(DataError, match="in the kit's datasets/"):
        resolve(env={}, cache_dir=tmp_path / "c", kit_dir=kit, allow_download=False)


def test_empty_folder_falls_through_to_cache(server: CorpusServer, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    cache = tmp_path / "cache"
    path = resolve(data_dir=empty, env={"GPT_COURSE_DATA": str(empty)}, cache_dir=cache,
                   url=server.url("/good/input.txt"), progress=False)
    assert path == cache / "tinyshakespeare" / "input.txt"


def test_wrong_file_in_user_folder(tmp_path: Path, corpus: bytes) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "input.txt").write_bytes(corpus.replace(b"ROMEO", b"JULIE", 1))
    got = hashlib.sha256((folder / "input.txt").read_bytes()).hexdigest()
    with pytest.raises(DataError) as info:
        resolve(env={"GPT_COURSE_DATA": str(folder)}, cache_dir=tmp_path / "c", allow_download=False)
    message = str(info.value)
    assert f"expected sha256 {SHA}" in message and f"got      sha256 {got}" in message
    assert "期望 sha256" in message and str(folder / "input.txt") in message
    assert "raw.githubusercontent.com" in message  # how to get the right one


def test_no_network_no_folder(tmp_path: Path, refused_url: str) -> None:
    """No folder, an empty cache, and the network is down: the message says how to get it."""
    missing = tmp_path / "nowhere"
    with pytest.raises(DataError) as info:
        resolve(data_dir=missing, env={"GPT_COURSE_DATA": str(missing)}, cache_dir=tmp_path / "c",
                url=refused_url, progress=False)
    message = str(info.value)
    for needle in ("GPT_COURSE_DATA", "grade data --dir", "grade data",
                   "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",
                   SHA, "获取方法", "How to get it"):
        assert needle in message


def test_no_download_no_folder(tmp_path: Path) -> None:
    with pytest.raises(DataError) as info:
        resolve(env={}, cache_dir=tmp_path, allow_download=False)
    message = str(info.value)
    assert "downloading is off" in message and "不允许下载" in message
    assert "GPT_COURSE_DATA" in message and "grade data --dir" in message
    assert str(tmp_path / "tinyshakespeare" / "input.txt") in message


# --------------------------------------------------------------------------- CLI


def test_cli_downloads_and_prints(server: CorpusServer, tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path), "GPT_COURSE_DATA": None, "GRADE_LANG": "en"}
    result = CliRunner().invoke(data_command, ["--url", server.url("/good/input.txt")], env=env)
    assert result.exit_code == 0, result.output
    assert str(tmp_path / "gpt-course" / "tinyshakespeare" / "input.txt") in result.output
    assert "1,115,394 bytes" in result.output and SHA in result.output


def test_cli_dir_copies_into_cache(tmp_path: Path, corpus: bytes) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "input.txt").write_bytes(corpus)
    env = {"XDG_CACHE_HOME": str(tmp_path / "xdg"), "GPT_COURSE_DATA": None, "GRADE_LANG": "en"}
    result = CliRunner().invoke(data_command, ["--dir", str(folder)], env=env)
    assert result.exit_code == 0, result.output
    cached = tmp_path / "xdg" / "gpt-course" / "tinyshakespeare" / "input.txt"
    assert cached.read_bytes() == corpus
    # later runs find it without --dir or a network
    again = CliRunner().invoke(data_command, ["--no-download"], env=env)
    assert again.exit_code == 0 and str(cached) in again.output


def test_cli_failure_exits_1_with_message(tmp_path: Path, refused_url: str) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path), "GPT_COURSE_DATA": None, "GRADE_LANG": "en"}
    result = CliRunner().invoke(data_command, ["--url", refused_url], env=env)
    assert result.exit_code == 1
    assert "cannot reach" in result.output and "grade data --dir" in result.output
    assert "Traceback" not in result.output

    empty = tmp_path / "empty"
    empty.mkdir()
    result = CliRunner().invoke(data_command, ["--dir", str(empty)], env=env)
    assert result.exit_code == 1 and "No tinyshakespeare in" in result.output

    result = CliRunner().invoke(data_command, ["--no-download"], env=env)
    assert result.exit_code == 1 and "downloading is off" in result.output


def test_locate_wrong_file(tmp_path: Path) -> None:
    (tmp_path / "input.txt").write_text("hello", encoding="utf-8")
    with pytest.raises(DataError, match="expected sha256"):
        locate(tmp_path)
