"""数据集加载：按顺序在用户文件夹、缓存里找文件，找不到就下载，并且总是核对 sha256。

Data set loader: finds a course data set in a user-named folder or the cache, otherwise
downloads it, and always verifies its sha256 before handing out a path.

The data sets are listed in ``datasets/catalog.toml`` (name, file, url, sha256, size,
description); a checkout carries tinyshakespeare's file in ``datasets/``, an installed kit
does not. ``resolve`` looks, in order:

1. ``data_dir`` (the explicit argument; the CLI's ``--dir``, or course.toml's
   ``[data] dir``, which the caller passes here);
2. the folder named by the environment variable ``GPT_COURSE_DATA``;
3. the cache: ``$XDG_CACHE_HOME/gpt-course`` or ``~/.cache/gpt-course``;
4. the kit's own ``datasets/`` folder, when the kit runs from a checkout (an installed kit
   has none: its catalog travels in the package, the corpus never does);
5. a download (unless ``allow_download=False``) into the cache: streamed to a temporary
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
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

from grader.data.catalog import (
    CACHE_SUBDIR,
    ENV_VAR,
    URL_ENV_VAR,
    DataError,
    Dataset,
    _how_to_get,
    _mismatch,
    default_cache_dir,
    default_catalog_path,
    get_dataset,
    read_catalog,
)
from grader.data.download import FILE_MODE, _download, make_dirs, make_shared
from grader.model.files import readable_by_others
from grader.model.paths import checkout_folder

__all__ = [
    "CACHE_SUBDIR",
    "ENV_VAR",
    "URL_ENV_VAR",
    "DataError",
    "Dataset",
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

_CHUNK = 1 << 16


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


def _verified_in(folder: Path, ds: Dataset, origin: tuple[str, str], cache_root: Path, looked: list[str]) -> Path | None:
    """The data set's file in `folder`, verified (a wrong one is a ``DataError``); None, noted in
    `looked`, when the folder does not hold it."""
    found = _in_folder(folder, ds)
    if found is None:
        looked.append(f"{folder / ds.name / ds.file}, {folder / ds.file}")
        return None
    ok, size, sha = _check(found, ds)
    if not ok:
        raise _mismatch(ds, found, size, sha, cache_root, origin)
    outside = not found.resolve().is_relative_to(folder.resolve())  # a link out: the worker sees only `folder`
    if outside or (os.name == "posix" and os.geteuid() == 0 and not readable_by_others(found, below=folder)):
        # The fenced workers run as another uid (as root) and see only the data folders granted
        # them (a private /tmp): a copy made under umask 077, or a link to one elsewhere, would
        # fail every data check as the student's error. The cache's copy is left readable.
        cached = import_to_cache(found, ds.name, cache_dir=cache_root)
        if os.name == "posix" and os.geteuid() == 0 and not readable_by_others(cached, below=cache_root):
            raise DataError(
                f"缓存 {cached} 别的用户读不到（它的某个文件夹属于别人，或权限是 0700），评分进程读不到数据。"
                f"请修改它的权限，或用 XDG_CACHE_HOME 指定另一个缓存文件夹。",
                f"The cache {cached} cannot be read by other users (a folder of it is someone else's, or mode "
                f"0700), so the grading workers cannot read the data. Fix its modes, or point XDG_CACHE_HOME "
                f"at another cache folder.")
        return cached
    return found


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
    kit_dir: str | os.PathLike[str] | None | bool = None,
) -> Path:
    """找到（必要时下载）数据集文件，核对 sha256 后返回路径。

    Find (or download) the data set's file, verify its sha256, return its path.

    Order: ``data_dir`` (pass course.toml's ``[data] dir`` here) -> the folder in the
    environment variable ``GPT_COURSE_DATA`` (read from ``env``, default ``os.environ``)
    -> the cache (``cache_dir``, default ``$XDG_CACHE_HOME/gpt-course`` or
    ``~/.cache/gpt-course``; the file lives at ``<cache>/<name>/<file>``) -> the kit's
    ``datasets/`` folder (``kit_dir``; None: the checkout's, none when installed; False: skip)
    -> a download from ``url`` (default: ``$GPT_COURSE_DATA_URL``, else the catalog's) when
    ``allow_download``.

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
        # The real path: a folder reached through a link is granted to the fence by where it is.
        found = _verified_in(Path(folder).expanduser().resolve(), ds, (origin_zh, origin_en), cache_root, looked)
        if found is not None:
            return found

    cached = cache_root / ds.name / ds.file
    removed_zh = removed_en = ""
    if cached.is_file():
        ok, size, sha = _check(cached, ds)
        if ok:
            make_shared(cached, cache_root)  # a cache an older kit wrote 0600
            return cached
        cached.unlink(missing_ok=True)
        removed_zh = f"缓存里的 {cached} 校验不符（sha256 {sha}），已删除。\n"
        removed_en = f"The cached {cached} failed its checksum (sha256 {sha}) and was deleted.\n"
    looked.append(str(cached))

    kit = checkout_folder("datasets") if kit_dir is None else (None if kit_dir is False else Path(kit_dir))
    if kit is not None and kit.is_dir():
        found = _verified_in(kit, ds, ("工具包 datasets/ 文件夹里", "in the kit's datasets/"), cache_root, looked)
        if found is not None:
            return found

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
        make_dirs(target.parent, cache_root)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{ds.file}.", suffix=".part", dir=target.parent)
        os.close(fd)
        try:
            shutil.copyfile(src, tmp_name)
            os.chmod(tmp_name, FILE_MODE)  # readable by the fenced workers (another uid, as root)
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
