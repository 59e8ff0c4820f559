"""click's usage errors follow `--lang`: Chinese in Chinese mode, click's English otherwise."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from grader.commands.main import main

HAN = re.compile(r"[\u4e00-\u9fff]")


def run(*args):
    return CliRunner().invoke(main, list(args), prog_name="grade")


@pytest.mark.parametrize("args,said", [
    (["hint"], "缺少参数 'EXERCISE_ID'"),                       # a missing argument
    (["list", "--colr"], "没有这个选项：'--colr'"),              # an unknown option of a command
    (["ex01", "--formt", "json"], "没有这个选项：'--formt'"),     # … of an exercise's command
    (["--colour", "list"], "没有这个选项：'--colour'"),          # … of grade itself
    (["lsit"], "没有这个命令：'lsit'"),                         # an unknown command
    (["batch"], "缺少参数 'FOLDER'"),                            # a command imported when it runs
    (["ex01", "--format", "pdf"], "'--format' 的值无效：'pdf' 不是"),
])
def test_usage_errors_are_chinese_in_chinese_mode(args, said):
    result = run("--lang", "zh", *args)
    assert result.exit_code == 2
    assert said in result.output, result.output
    assert "用法：grade" in result.output and "错误：" in result.output and "查看帮助" in result.output
    for english in ("Usage:", "Error:", "Missing", "No such", "Try ", "Invalid value", "Did you mean"):
        assert english not in result.output, result.output


def test_the_language_may_follow_the_command():
    result = run("hint", "--lang", "zh")
    assert result.exit_code == 2 and "缺少参数 'EXERCISE_ID'" in result.output


def test_a_suggestion_is_kept_and_translated():
    result = run("--lang", "zh", "lsit")
    assert "是不是想用 'list'" in result.output, result.output


@pytest.mark.parametrize("args", [["hint"], ["list", "--colr"], ["lsit"]])
def test_english_mode_keeps_clicks_words(args):
    result = run("--lang", "en", *args)
    assert result.exit_code == 2
    assert "Usage: grade" in result.output and "Error: " in result.output
    assert not HAN.search(result.output), result.output
