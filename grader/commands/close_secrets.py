"""`grade close-secrets`: close what no worker may read to other users, for the container tier."""

import click


@click.command("close-secrets")
@click.pass_obj
def close_secrets(obj):
    """容器模式：让工作进程读不到参考答案与隐藏检查（chmod go-rwx）/ for the container tier: close the
    reference, the hidden checks, the known mistakes, the correct pieces and the course secret to
    other users (chmod go-rwx). Run as root when the image is built (the Gradescope bundle's
    setup.sh does)."""
    from grader.run.startup import close_secrets as close

    for path in close(obj.course):
        click.echo(f"closed: {path}")
