"""数据集加载：按顺序在用户文件夹、缓存里找文件，找不到就下载，并且总是核对 sha256。

Data set loader: finds a course data set in a user-named folder or the cache, otherwise
downloads it, and always verifies its sha256 before handing out a path.

The data sets are listed in ``datasets/catalog.toml`` (name, file, url, sha256, size,
description); the files themselves are never committed. ``resolve`` looks, in order:

1. ``data_dir`` (the explicit argument; the CLI's ``--dir``, or course.toml's
   ``[data] dir``, which the caller passes here);
2. the folder named by the environment variable ``GPT_COURSE_DATA``;
3. the cache: ``$XDG_CACHE_HOME/gpt-course`` or ``~/.cache/gpt-course``;
4. a download (unless ``allow_download=False``) into the cache: streamed to a temporary
   file next to the target, checked for size and sha256, then renamed atomically.

A folder may hold the file either as ``<dir>/<name>/<file>`` or as ``<dir>/<file>``:
``~/data/tinyshakespeare/input.txt`` and ``~/data/input.txt`` both work.

Every failure a user can run into (no file, no network, HTTP error, truncated or
corrupted download, a wrong file in a folder) is a ``DataError`` whose message, in
Chinese then English, says what went wrong and how to get the right file.

Example::

    >>> text = load_text("tinyshakespeare")          # doctest: +SKIP
    >>> len(text), text[:9]                           # doctest: +SKIP
    (1115394, 'First Cit')

Left out: archives (every data set is one plain file), resuming a partial download,
mirrors (pass ``url=`` or a folder instead), and caching the checksum by size+mtime
(hashing the 1 MB corpus takes milliseconds).
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import socket
import sys
import tempfile
import tomllib
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from grader.model.paths import kit_file

__all__ = [
    "DataError",
    "Dataset",
    "ENV_VAR",
    "default_cache_dir",
    "default_catalog_path",
    "file_sha256",
    "get_dataset",
    "import_to_cache",
    "load_text",
    "locate",
    "read_catalog",
    "resolve",
]

ENV_VAR = "GPT_COURSE_DATA"
URL_ENV_VAR = "GPT_COURSE_DATA_URL"  # download from this address instead of the catalog's
CACHE_SUBDIR = "gpt-course"
_CHUNK = 1 << 16
_TIMEOUT = 30.0
_CATALOG_KEYS = ("name", "file", "url", "sha256", "size", "description")


class DataError(Exception):
    """数据集问题（缺文件、下载失败、校验不符）；消息先中文后英文。

    A data set problem (missing file, failed download, checksum mismatch). ``zh`` and
    ``en`` hold the two halves; ``str(err)`` is both, Chinese first.

    >>> str(DataError("找不到文件", "file not found"))
    '找不到文件\\nfile not found'
    """

    def __init__(self, zh: str, en: str) -> None:
        self.zh = zh
        self.en = en
        super().__init__(f"{zh}\n{en}")


@dataclass(frozen=True)
class Dataset:
    """目录里的一项 / One entry of the catalog.

    ``Dataset("tinyshakespeare", "input.txt", "https://…", "86c4…", 1115394, "…")``
    """

    name: str
    file: str
    url: str
    sha256: str
    size: int
    description: str


# --------------------------------------------------------------------------- catalog


def default_catalog_path() -> Path:
    """``<repo>/datasets/catalog.toml``, where ``<repo>`` is the parent of ``grader/``; installed
    from a wheel, the copy inside the package (``grader/_kit/datasets/catalog.toml``)."""
    return kit_file("datasets/catalog.toml")


def read_catalog(path: str | os.PathLike[str]) -> dict[str, Dataset]:
    """读取数据集目录 / Read a catalog file into ``{name: Dataset}``.

    ``[[datasets]] name = "tinyshakespeare" …`` -> ``{"tinyshakespeare": Dataset(...)}``.
    Missing or unknown keys, wrong types and duplicate names are a ``DataError``.
    """
    path = Path(path)
    try:
        with path.open("rb") as fh:
            raw = tomllib.load(fh)
    except FileNotFoundError:
        raise DataError(
            f"找不到数据集目录文件 {path}。",
            f"Data set catalog not found: {path}.",
        ) from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise DataError(
            f"无法读取数据集目录 {path}：{exc}",
            f"Cannot read the data set catalog {path}: {exc}",
        ) from None

    def bad(what: str) -> DataError:
        return DataError(f"数据集目录 {path} 有误：{what}", f"Bad data set catalog {path}: {what}")

    unknown_top = set(raw) - {"datasets"}
    if unknown_top:
        raise bad(f"unknown top-level keys {sorted(unknown_top)}")
    entries = raw.get("datasets", [])
    if not isinstance(entries, list):
        raise bad("`datasets` must be an array of tables ([[datasets]])")
    catalog: dict[str, Dataset] = {}
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise bad(f"entry {i} is not a table")
        missing = [k for k in _CATALOG_KEYS if k not in entry]
        unknown = sorted(set(entry) - set(_CATALOG_KEYS))
        if missing or unknown:
            raise bad(f"entry {i}: missing keys {missing}, unknown keys {unknown}")
        for key in _CATALOG_KEYS:
            want = int if key == "size" else str
            if not isinstance(entry[key], want) or isinstance(entry[key], bool):
                raise bad(f"entry {i}: `{key}` must be {want.__name__}")
        sha = entry["sha256"].lower()
        if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise bad(f"entry {i}: `sha256` must be 64 hex digits")
        if entry["name"] in catalog:
            raise bad(f"duplicate name {entry['name']!r}")
        catalog[entry["name"]] = Dataset(**{**entry, "sha256": sha})
    return catalog


def get_dataset(name: str, catalog_path: str | os.PathLike[str] | None = None) -> Dataset:
    """目录中名为 ``name`` 的数据集 / The catalog entry called ``name``.

    ``get_dataset("tinyshakespeare").size -> 1115394``
    """
    path = default_catalog_path() if catalog_path is None else Path(catalog_path)
    catalog = read_catalog(path)
    if name not in catalog:
        known = ", ".join(sorted(catalog)) or "(none)"
        raise DataError(
            f"未知的数据集 {name!r}；目录 {path} 里有：{known}",
            f"Unknown data set {name!r}; the catalog {path} lists: {known}",
        )
    return catalog[name]


# --------------------------------------------------------------------------- files


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME/gpt-course``，否则 ``~/.cache/gpt-course``。

    ``{"XDG_CACHE_HOME": "/tmp/c"} -> Path("/tmp/c/gpt-course")``
    """
    env = os.environ if env is None else env
    xdg = env.get("XDG_CACHE_HOME", "")
    if xdg and Path(xdg).is_absolute():  # the XDG spec ignores relative values
        return Path(xdg) / CACHE_SUBDIR
    home = env.get("HOME")
    base = Path(home) if home else Path.home()
    return base / ".cache" / CACHE_SUBDIR


def file_sha256(path: str | os.PathLike[str]) -> str:
    """文件的 sha256（十六进制）/ The file's sha256, hex. ``b"" -> "e3b0c442…b855"``"""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _in_folder(folder: Path, ds: Dataset) -> Path | None:
    """``folder/<name>/<file>`` or ``folder/<file>``, whichever exists first; or a file path."""
    if folder.is_file():
        return folder
    for candidate in (folder / ds.name / ds.file, folder / ds.file):
        if candidate.is_file():
            return candidate
    return None


def _how_to_get(ds: Dataset, cache_dir: Path) -> tuple[str, str]:
    zh = (
        f"获取方法（任选其一）：\n"
        f"  1. 联网后运行 `grade data`，会下载 {ds.url} 到缓存 {cache_dir}；\n"
        f"  2. 手动下载上面的地址，放到某个文件夹，例如 ~/data/{ds.name}/{ds.file}，然后运行\n"
        f"     `grade data --dir ~/data`，或设置环境变量 {ENV_VAR}=~/data，\n"
        f"     或在 course.toml 里写 [data] dir = \"~/data\"。\n"
        f"  正确的文件：{ds.size:,} 字节，sha256 {ds.sha256}"
    )
    en = (
        f"How to get it (any one):\n"
        f"  1. with a network, run `grade data`: it downloads {ds.url} into the cache {cache_dir};\n"
        f"  2. download that address yourself into a folder, e.g. ~/data/{ds.name}/{ds.file}, then run\n"
        f"     `grade data --dir ~/data`, or set the environment variable {ENV_VAR}=~/data,\n"
        f"     or put [data] dir = \"~/data\" in course.toml.\n"
        f"  The right file: {ds.size:,} bytes, sha256 {ds.sha256}"
    )
    return zh, en


def _mismatch(
    ds: Dataset, path: Path, size: int, sha: str, cache_dir: Path, origin: tuple[str, str]
) -> DataError:
    how_zh, how_en = _how_to_get(ds, cache_dir)
    return DataError(
        f"{origin[0]}的文件 {path} 不是 {ds.name} 数据集：\n"
        f"  期望 sha256 {ds.sha256}（{ds.size:,} 字节）\n"
        f"  实际 sha256 {sha}（{size:,} 字节）\n"
        f"请删除或替换这个文件。{how_zh}",
        f"The file {path} ({origin[1]}) is not the {ds.name} data set:\n"
        f"  expected sha256 {ds.sha256} ({ds.size:,} bytes)\n"
        f"  got      sha256 {sha} ({size:,} bytes)\n"
        f"Delete or replace that file. {how_en}",
    )


def _check(path: Path, ds: Dataset) -> tuple[bool, int, str]:
    """``(matches, size, sha256)`` of a file; an unreadable file is a ``DataError``."""
    try:
        size = path.stat().st_size
        sha = file_sha256(path)
    except OSError as exc:
        raise DataError(
            f"无法读取 {path}：{exc}",
            f"Cannot read {path}: {exc}",
        ) from None
    return (size == ds.size and sha == ds.sha256), size, sha


# --------------------------------------------------------------------------- download


def _progress_bar(enabled: bool, total: int | None, label: str):
    """A ``(advance, close)`` pair; a rich progress bar on stderr when ``enabled``."""
    if not enabled:
        return (lambda n: None), (lambda: None)
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
        TransferSpeedColumn,
    )

    bar = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        DownloadColumn(),
        TransferSpeedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    bar.start()
    task = bar.add_task(label, total=total)
    return (lambda n: bar.advance(task, n)), bar.stop


def _download(url: str, target: Path, ds: Dataset, *, show_progress: bool, cache_dir: Path) -> Path:
    """Stream ``url`` to a temp file beside ``target``, verify size and sha256, rename."""
    how_zh, how_en = _how_to_get(ds, cache_dir)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{ds.file}.", suffix=".part", dir=target.parent)
    except OSError as exc:
        raise DataError(
            f"无法写入缓存目录 {target.parent}：{exc}\n{how_zh}",
            f"Cannot write to the cache folder {target.parent}: {exc}\n{how_en}",
        ) from None
    tmp = Path(tmp_name)
    digest = hashlib.sha256()
    received = 0
    announced: int | None = None
    try:
        with os.fdopen(fd, "wb") as out:
            request = urllib.request.Request(url, headers={"User-Agent": "gpt-course-grader"})
            with urllib.request.urlopen(request, timeout=_TIMEOUT) as resp:
                length = resp.headers.get("Content-Length")
                announced = int(length) if length and length.isdigit() else None
                advance, close = _progress_bar(show_progress, announced or ds.size, ds.name)
                try:
                    # Read at most one byte past the expected size: enough to tell "too long".
                    while received <= ds.size:
                        chunk = resp.read(min(_CHUNK, ds.size + 1 - received))
                        if not chunk:
                            break
                        out.write(chunk)
                        digest.update(chunk)
                        received += len(chunk)
                        advance(len(chunk))
                finally:
                    close()
            out.flush()
            os.fsync(out.fileno())

        if received != ds.size:
            shorter = received < ds.size
            note_zh = f"（服务器声明 {announced:,} 字节）" if announced is not None else ""
            note_en = f" (the server announced {announced:,})" if announced is not None else ""
            raise DataError(
                f"下载不完整：从 {url} 收到 {received:,} 字节{note_zh}，应为 {ds.size:,} 字节"
                f"{'（连接中途断开？）' if shorter else '（文件比预期长，不是这个数据集）'}。"
                f"没有保存任何文件，请重试。\n{how_zh}",
                f"Incomplete download: got {received:,} bytes from {url}{note_en}, expected "
                f"{ds.size:,}{' (connection dropped?)' if shorter else ' (longer than expected: not this data set)'}. "
                f"Nothing was saved; try again.\n{how_en}",
            )
        sha = digest.hexdigest()
        if sha != ds.sha256:
            raise DataError(
                f"下载的文件校验不符（来自 {url}）：\n"
                f"  期望 sha256 {ds.sha256}\n  实际 sha256 {sha}\n"
                f"文件已损坏或地址不对，没有保存任何文件。\n{how_zh}",
                f"Downloaded file fails its checksum (from {url}):\n"
                f"  expected sha256 {ds.sha256}\n  got      sha256 {sha}\n"
                f"The file is corrupted or the address is wrong; nothing was saved.\n{how_en}",
            )
        os.replace(tmp, target)
        return target
    except urllib.error.HTTPError as exc:
        raise DataError(
            f"下载失败：{url} 返回 HTTP {exc.code} {exc.reason}。\n{how_zh}",
            f"Download failed: {url} answered HTTP {exc.code} {exc.reason}.\n{how_en}",
        ) from None
    except urllib.error.URLError as exc:
        raise DataError(
            f"下载失败：连不上 {url}（{exc.reason}）。没有网络？\n{how_zh}",
            f"Download failed: cannot reach {url} ({exc.reason}). No network?\n{how_en}",
        ) from None
    except (http.client.HTTPException, socket.timeout, OSError, ValueError) as exc:
        # ValueError: a malformed URL (e.g. no scheme).
        raise DataError(
            f"下载失败（{url}）：{type(exc).__name__}: {exc}。没有保存任何文件。\n{how_zh}",
            f"Download failed ({url}): {type(exc).__name__}: {exc}. Nothing was saved.\n{how_en}",
        ) from None
    finally:
        tmp.unlink(missing_ok=True)


# --------------------------------------------------------------------------- public


def resolve(
    name: str = "tinyshakespeare",
    *,
    data_dir: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    allow_download: bool = True,
    url: str | None = None,
    progress: bool | None = None,
    catalog_path: str | os.PathLike[str] | None = None,
) -> Path:
    """找到（必要时下载）数据集文件，核对 sha256 后返回路径。

    Find (or download) the data set's file, verify its sha256, return its path.

    Order: ``data_dir`` (pass course.toml's ``[data] dir`` here) -> the folder in the
    environment variable ``GPT_COURSE_DATA`` (read from ``env``, default ``os.environ``)
    -> the cache (``cache_dir``, default ``$XDG_CACHE_HOME/gpt-course`` or
    ``~/.cache/gpt-course``; the file lives at ``<cache>/<name>/<file>``) -> a download
    from ``url`` (default: ``$GPT_COURSE_DATA_URL``, else the catalog's) when ``allow_download``.

    A folder may hold ``<name>/<file>`` or ``<file>`` directly (``data_dir`` may also
    be the file itself). A folder without the file is skipped; a folder with a wrong
    file is a ``DataError`` (expected vs got sha256). A wrong file in the cache is
    deleted and fetched again. ``progress``: ``True`` shows a progress bar on stderr,
    ``False`` never, ``None`` (default) only when stderr is a terminal.

    ``resolve(data_dir="~/data") -> Path("~/data/tinyshakespeare/input.txt")`` (expanded)
    """
    env = os.environ if env is None else env
    ds = get_dataset(name, catalog_path)
    cache_root = default_cache_dir(env) if cache_dir is None else Path(cache_dir).expanduser()
    looked: list[str] = []

    folders: list[tuple[str, str, str | os.PathLike[str]]] = []
    if data_dir is not None and str(data_dir) != "":
        folders.append(("指定文件夹里", "in the folder you named", data_dir))
    if env.get(ENV_VAR):
        folders.append((f"环境变量 {ENV_VAR} 所指文件夹里", f"in the folder ${ENV_VAR} names", env[ENV_VAR]))
    for origin_zh, origin_en, folder in folders:
        folder = Path(folder).expanduser()
        found = _in_folder(folder, ds)
        if found is None:
            looked.append(f"{folder / ds.name / ds.file}, {folder / ds.file}")
            continue
        ok, size, sha = _check(found, ds)
        if not ok:
            raise _mismatch(ds, found, size, sha, cache_root, (origin_zh, origin_en))
        return found

    cached = cache_root / ds.name / ds.file
    removed_zh = removed_en = ""
    if cached.is_file():
        ok, size, sha = _check(cached, ds)
        if ok:
            return cached
        cached.unlink(missing_ok=True)
        removed_zh = f"缓存里的 {cached} 校验不符（sha256 {sha}），已删除。\n"
        removed_en = f"The cached {cached} failed its checksum (sha256 {sha}) and was deleted.\n"
    looked.append(str(cached))

    if allow_download:
        url = url or env.get(URL_ENV_VAR) or None  # a mirror (a school's server, a test's)
        show = bool(progress) if progress is not None else _stderr_is_tty()
        return _download(url or ds.url, cached, ds, show_progress=show, cache_dir=cache_root)

    how_zh, how_en = _how_to_get(ds, cache_root)
    places = "\n".join(f"  - {p}" for p in looked)
    raise DataError(
        f"{removed_zh}找不到数据集 {ds.name}（{ds.file}），不允许下载。找过：\n{places}\n{how_zh}",
        f"{removed_en}Data set {ds.name} ({ds.file}) not found and downloading is off. Looked in:\n"
        f"{places}\n{how_en}",
    )


def locate(
    folder: str | os.PathLike[str],
    name: str = "tinyshakespeare",
    *,
    catalog_path: str | os.PathLike[str] | None = None,
) -> Path:
    """在一个文件夹里找数据集文件并核对；找不到或不符都报 ``DataError``。

    Find the data set's file in one folder (``<folder>/<name>/<file>`` or
    ``<folder>/<file>``; ``folder`` may be the file itself) and verify it; missing or
    wrong is a ``DataError``. Nothing else is searched and nothing is downloaded.
    ``locate("~/data") -> Path("~/data/input.txt")`` (expanded)
    """
    ds = get_dataset(name, catalog_path)
    root = Path(folder).expanduser()
    found = _in_folder(root, ds)
    if found is None:
        how_zh, how_en = _how_to_get(ds, default_cache_dir())
        raise DataError(
            f"{root} 里没有 {ds.name}：找过 {root / ds.name / ds.file} 和 {root / ds.file}。\n{how_zh}",
            f"No {ds.name} in {root}: looked for {root / ds.name / ds.file} and {root / ds.file}.\n{how_en}",
        )
    ok, size, sha = _check(found, ds)
    if not ok:
        raise _mismatch(ds, found, size, sha, default_cache_dir(), ("指定文件夹里", "in the folder you named"))
    return found


def import_to_cache(
    path: str | os.PathLike[str],
    name: str = "tinyshakespeare",
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    catalog_path: str | os.PathLike[str] | None = None,
) -> Path:
    """把已核对的文件复制进缓存，以后不用再指定文件夹 / Copy a file into the cache.

    The file is verified first; the copy goes to a temp file and is renamed atomically.
    ``import_to_cache("~/data/input.txt") -> Path("~/.cache/gpt-course/tinyshakespeare/input.txt")``
    """
    env = os.environ if env is None else env
    ds = get_dataset(name, catalog_path)
    cache_root = default_cache_dir(env) if cache_dir is None else Path(cache_dir).expanduser()
    src = Path(path).expanduser()
    ok, size, sha = _check(src, ds)
    if not ok:
        raise _mismatch(ds, src, size, sha, cache_root, ("指定", "the file you named"))
    target = cache_root / ds.name / ds.file
    if target.resolve() == src.resolve():
        return target
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{ds.file}.", suffix=".part", dir=target.parent)
        os.close(fd)
        try:
            shutil.copyfile(src, tmp_name)
            os.replace(tmp_name, target)
        finally:
            Path(tmp_name).unlink(missing_ok=True)
    except OSError as exc:
        raise DataError(
            f"无法把 {src} 复制到缓存 {target}：{exc}",
            f"Cannot copy {src} into the cache {target}: {exc}",
        ) from None
    return target


def load_text(name: str = "tinyshakespeare", **kw) -> str:
    """数据集的全文（UTF-8）/ The data set's whole text. Keywords go to ``resolve``.

    ``load_text()[:9] -> "First Cit"``; ``len(load_text()) -> 1115394``
    """
    path = resolve(name, **kw)
    return path.read_text(encoding="utf-8")


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False
