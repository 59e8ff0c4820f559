"""The data sets' catalog (datasets/catalog.toml), the cache folder, and the messages of `DataError`.

    >>> get_dataset("tinyshakespeare").size
    1115394
    >>> default_cache_dir({"XDG_CACHE_HOME": "/tmp/c"})
    PosixPath('/tmp/c/gpt-course')
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from grader.model.paths import kit_file

ENV_VAR = "GPT_COURSE_DATA"
URL_ENV_VAR = "GPT_COURSE_DATA_URL"  # download from this address instead of the catalog's
CACHE_SUBDIR = "gpt-course"
# Folders of the cache that are the grader's alone, hidden from every worker by the fence: the
# reference answers computed ahead (grader.judge.references) and the key that seals a batch's
# OUT (grader.cohort.seal).
PRIVATE_FOLDERS = ("answers", "keys")
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


def every_cache_dir(env: Mapping[str, str] | None = None) -> list[Path]:
    """Every folder this user's runs may have used as their cache: the current one, the
    `~/.cache` one an earlier run without `XDG_CACHE_HOME` used, and the one under the
    account's own home when `HOME` points elsewhere. The fence hides the private folders of
    each (a key or answers from an earlier run stay out of reach of a later one's workers).

    ``{"XDG_CACHE_HOME": "/tmp/c", "HOME": "/home/a"} -> [/tmp/c/gpt-course, /home/a/.cache/gpt-course, …]``
    """
    env = os.environ if env is None else env
    found = [default_cache_dir(env), default_cache_dir({k: v for k, v in env.items() if k != "XDG_CACHE_HOME"})]
    try:
        import pwd

        found.append(Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / CACHE_SUBDIR)
    except (ImportError, KeyError):  # no pwd (Windows), or a uid with no account (containers)
        pass
    return list(dict.fromkeys(found))


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
