"""`grade data`：找到或下载课程数据集，核对后打印路径、大小和 sha256。

The `grade data` command: resolve (or download) a course data set and print its path,
size and sha256. The lead registers it on the `grade` group
(``grade.add_command(data)``); nothing runs on import.
"""

from __future__ import annotations

import click

from grader.data import datasets


@click.command("data")
@click.option(
    "--dir",
    "data_dir",
    type=click.Path(file_okay=True, dir_okay=True, path_type=str),
    default=None,
    help="含 input.txt（或 tinyshakespeare/input.txt）的文件夹；核对后复制进缓存。"
    " / A folder holding input.txt (or tinyshakespeare/input.txt); verified, then copied into the cache.",
)
@click.option("--url", default=None, help="从这个地址下载 / Download from this address instead of the catalog's.")
@click.option(
    "--no-download",
    is_flag=True,
    default=False,
    help="不联网，只找本地文件 / Never download; only look in folders and the cache.",
)
@click.option(
    "--name",
    default="tinyshakespeare",
    show_default=True,
    help="数据集名（见 datasets/catalog.toml）/ Data set name (see datasets/catalog.toml).",
)
@click.pass_obj
def data(obj, data_dir: str | None, url: str | None, no_download: bool, name: str) -> None:
    """找到或下载数据集并核对 sha256 / Find or download a data set and verify its sha256.

    With --dir: verify the file in that folder and copy it into the cache, so later
    runs find it without --dir. Without: look in $GPT_COURSE_DATA, then the cache
    (~/.cache/gpt-course), then download (unless --no-download).
    """
    from grader.model.messages import default_lang, say

    lang = getattr(obj, "lang", None) or default_lang()
    try:
        cached = None
        if data_dir is not None:
            # A named folder must hold the file: no silent fallback to a download.
            path = datasets.locate(data_dir, name)
            cached = datasets.import_to_cache(path, name)
        else:
            path = datasets.resolve(name, allow_download=not no_download, url=url, progress=None)
        size = path.stat().st_size
        sha = datasets.file_sha256(path)
    except datasets.DataError as exc:
        raise click.ClickException(exc.en if lang == "en" else exc.zh) from None
    click.echo(f"{say('data_path', lang)} {path}")
    click.echo(f"{say('data_size', lang)} {say('data_bytes', lang, size=f'{size:,}')}")
    click.echo(f"{say('data_sha256', lang)} {sha}  ({say('data_ok', lang)})")
    if cached is not None and cached != path:
        click.echo(f"{say('data_cached', lang)} {cached}")
