"""Options several commands share."""

import click

# official runs (`--submission` as root or in CI, `grade batch`) grade in bubblewrap unless told otherwise
ISOLATION_OPTION = click.option(
    "--isolation", "isolation", type=click.Choice(["bubblewrap", "container"]), default=None,
    help="正式评分的隔离方式（默认 bubblewrap；每份提交一个容器时用 container）/ the official tier's isolation "
         "(default bubblewrap; container where a container per submission is the boundary: Gradescope, Docker)")
