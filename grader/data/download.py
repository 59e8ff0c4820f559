"""Downloading a data set: streamed to a temporary file, checked for size and sha256, renamed.

The file, and the cache folders the kit made, are left readable by everyone (0644 / 0755),
whatever the umask: as root (Docker, Colab), the fenced workers run as another uid and must
read the corpus, or every data check would be charged to the student.

    >>> _download(url, cache / "tinyshakespeare" / "input.txt", ds, show_progress=False, cache_dir=cache)
"""

from __future__ import annotations

import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

from grader.data.catalog import DataError, Dataset, _how_to_get

_CHUNK = 1 << 16
_TIMEOUT = 30.0
FILE_MODE = 0o644
DIR_MODE = 0o755


def make_shared(path: Path, up_to: Path) -> None:
    """`path` readable by every user (0644), and its folders up to `up_to` listable (0755).

    Only what this user owns is changed; folders above `up_to` (a home folder) are left as
    they are (the fence lets a worker through those to the folders it is granted).
    """
    path, up_to = Path(path), Path(up_to)
    try:
        if path.is_file() and not path.is_symlink() and path.stat().st_uid == os.geteuid():
            os.chmod(path, path.stat().st_mode & 0o7777 | FILE_MODE)
    except OSError:
        pass
    folder = path if path.is_dir() and not path.is_symlink() else path.parent
    while True:
        try:
            info = folder.lstat()
            if folder.is_dir() and not folder.is_symlink() and info.st_uid == os.geteuid() \
                    and info.st_mode & DIR_MODE != DIR_MODE:
                os.chmod(folder, info.st_mode & 0o7777 | DIR_MODE)
        except OSError:
            pass
        if folder == up_to or folder == folder.parent or up_to not in folder.parents:
            break
        folder = folder.parent


def make_dirs(folder: Path, up_to: Path) -> None:
    """`folder` and its parents up to `up_to`, created 0755 whatever the umask."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    make_shared(Path(folder), up_to)


def _progress_bar(enabled: bool, total: int | None, label: str):
    """A ``(advance, close)`` pair; the kit's byte progress bar on stderr when ``enabled``."""
    if not enabled:
        return (lambda n: None), (lambda: None)
    from grader.report.live import progress_bar

    bar = progress_bar(counts="bytes")
    task = bar.add_task(label, total=total)
    return (lambda n: bar.advance(task, n)), bar.stop


def _download(url: str, target: Path, ds: Dataset, *, show_progress: bool, cache_dir: Path) -> Path:
    """Stream ``url`` to a temp file beside ``target``, verify size and sha256, rename."""
    how_zh, how_en = _how_to_get(ds, cache_dir)
    try:
        make_dirs(target.parent, cache_dir)
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
        os.chmod(tmp, FILE_MODE)  # mkstemp makes 0600: the fenced workers could not read it
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
    except (TimeoutError, http.client.HTTPException, OSError, ValueError) as exc:
        # ValueError: a malformed URL (e.g. no scheme).
        raise DataError(
            f"下载失败（{url}）：{type(exc).__name__}: {exc}。没有保存任何文件。\n{how_zh}",
            f"Download failed ({url}): {type(exc).__name__}: {exc}. Nothing was saved.\n{how_en}",
        ) from None
    finally:
        tmp.unlink(missing_ok=True)
