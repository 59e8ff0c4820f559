"""`grade all --format A --out a --format B --out b`: one grading run, every format a workflow needs."""

from __future__ import annotations

import doctest
import json

import pytest
from click.testing import CliRunner

from grader.commands.main import main


def grade(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_one_run_writes_each_format_to_its_file(tmp_path):
    junit, summary, book = tmp_path / "grade.xml", tmp_path / "summary.md", tmp_path / "grade.json"
    run = grade("--lang", "en", "ex01", "--reference", "--format", "junit", "--out", str(junit),
                "--format", "github", "--out", str(summary), "--format", "json", "--out", str(book))
    assert run.exit_code == 0, run.output
    assert run.output == ""  # everything went to the files
    assert junit.read_text(encoding="utf-8").startswith("<?xml") and "<testsuites" in junit.read_text(encoding="utf-8")
    assert summary.read_text(encoding="utf-8").startswith("## ")
    scores = json.loads(book.read_text(encoding="utf-8"))
    assert scores["score"] == scores["max_score"] > 0
    assert f"{scores['score']}/{scores['max_score']}" in summary.read_text(encoding="utf-8")


@pytest.mark.parametrize("args,words", [
    (["--format", "junit", "--format", "github", "--out", "one.md"], "2 --format for 1 --out"),
    (["--format", "junit", "--out", "a.xml", "--out", "b.xml"], "1 --format for 2 --out"),
    (["--format", "junit", "--out", "same", "--format", "github", "--out", "same"], "is given twice"),
])
def test_formats_and_files_that_do_not_pair_are_a_usage_error(tmp_path, args, words):
    args = [str(tmp_path / a) if a in ("one.md", "a.xml", "b.xml", "same") else a for a in args]
    run = grade("--lang", "en", "ex01", "--reference", *args)
    assert run.exit_code == 2 and words in run.output, run.output
    assert not any(tmp_path.iterdir())  # refused before anything was graded or written


def test_the_pairing_rules_worked_examples():
    from grader.run import outputs

    assert doctest.testmod(outputs).failed == 0
