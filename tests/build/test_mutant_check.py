"""`grade check --mutants`: mutants of a reference graded in-process; survivors listed; a report,
not a gate."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

from grader.build.mutant_check import grade_mutants, summary
from grader.build.mutant_limits import LimitedSubject, OverLimit, graded_apart
from grader.build.mutants import Mutant
from grader.commands.main import main
from grader.judge.references import LiveReferences
from grader.judge.verdicts import call
from grader.model.course import load_course

COURSE = load_course()
EX01 = (COURSE.solutions_dir / COURSE.exercise("ex01").file).read_text(encoding="utf-8")
LINE = "    inputs = tokens[:-1]  # (n-1,)\n"


def _mutant(operator: str, after: str) -> Mutant:
    """ex01's reference with its `inputs = tokens[:-1]` line written as `after`."""
    assert EX01.count(LINE) == 1
    line = EX01[:EX01.index(LINE)].count("\n") + 1
    return Mutant(operator, line, "inputs = tokens[:-1]", after.strip(), EX01.replace(LINE, after + "\n"))


@pytest.fixture(scope="module")
def references():
    return LiveReferences(COURSE)


def test_a_bug_is_killed_and_an_equivalent_mutant_survives(references):
    """The same program in other words passes every check: it is a survivor, never counted as
    killed; the shift turned the wrong way fails a check."""
    shifted = _mutant("ShiftByOne", "    inputs = tokens[1:]")
    same = _mutant("by hand", "    inputs = tokens[:len(tokens) - 1]")
    report = grade_mutants(COURSE, "ex01", references, mutants=[shifted, same])
    assert [o.killed for o in report.outcomes] == [True, False]
    assert report.killed == 1 and report.survivors == [same] and report.ratio() == "50%"
    assert summary(report) == "ex01  solutions/ex01_windows.py: 2 mutants, 1 of 2 killed (50%)"
    assert same.shown("ex01 solutions/ex01_windows.py") == (
        f"ex01 solutions/ex01_windows.py:{same.line}  inputs = tokens[:-1] -> inputs = tokens[:len(tokens) - 1]"
        "  (by hand)")


def test_an_exercise_over_the_budget_is_left_out_and_says_how_to_run_it(references):
    report = grade_mutants(COURSE, "ex01", references, mutants=[_mutant("ShiftByOne", "    inputs = tokens[1:]")],
                           budget=1e-6)
    assert report.outcomes == [] and "--budget 0" in report.left_out
    assert summary(report).startswith("ex01  solutions/ex01_windows.py: 1 mutants; ")


def test_a_reference_that_fails_its_own_checks_grades_no_mutant(references):
    """Against a reference that fails, every mutant would count as killed: none is graded."""
    real = references("ex01")

    class Broken:  # the reference's answers, with a known mistake as the code mutated
        module = real.mistakes[0].variant(real.module)

        def __getattr__(self, name):
            return getattr(real, name)

    shifted = _mutant("ShiftByOne", "    inputs = tokens[1:]")
    report = grade_mutants(COURSE, "ex01", lambda ex_id: Broken(), mutants=[shifted])
    assert report.outcomes == [] and report.left_out.startswith("the reference does not pass its own checks: test_")


def test_a_call_that_never_ends_is_stopped_at_the_time_limit():
    """A mutant's endless loop (`i += 0`) is the call's error, as a worker's time limit makes it."""
    module = types.ModuleType("ex99_loop")
    exec("def spin():\n    i = 0\n    while i < 1:\n        i += 0\n", module.__dict__)
    exec("def fine():\n    return 1\n", module.__dict__)
    subject = LimitedSubject(module, 0.2)
    assert subject.observe(call("fine")).value == 1
    observation = subject.observe(call("spin"))
    assert not observation.ok and observation.error_type == OverLimit.__name__
    assert observation.error["message"] == "a mutant's call ran past the time limit"
    assert subject.observe(call("fine")) is observation  # the calls after it are not run


def test_a_call_that_grows_for_ever_is_stopped_at_the_memory_cap():
    """A loop that appends without end (the condition of `make_windows` turned round) stops at the
    cap, long before it takes the machine's memory."""
    module = types.ModuleType("ex99_grow")
    exec("def grow():\n    kept = []\n    while True:\n        kept.append([0] * 1000)\n", module.__dict__)
    observation = LimitedSubject(module, 60, memory=64 * 1024**2).observe(call("grow"))
    assert not observation.ok and observation.error["message"] == "a mutant's call ran past the memory cap"



def test_a_call_whose_first_stop_is_lost_is_stopped_at_the_next_step():
    """The first OverLimit swallowed (as Python ignores one raised in a finaliser): the call is
    stopped once it has grown by a further cap, not left to grow (it gives up by itself at about
    five caps, so that a kit without the next step fails here rather than taking the machine).
    Run in a fresh interpreter, whose resident size follows what the loop allocates (a process
    that freed memory before reuses it without growing)."""
    code = textwrap.dedent("""
        import types
        from grader.build.mutant_limits import LimitedSubject
        from grader.judge.verdicts import call
        module = types.ModuleType("ex99_grow_on")
        def grow():
            kept, swallowed = [], False
            while len(kept) < 40_000:
                try:
                    kept.append([0] * 1000)
                except Exception:
                    if swallowed:
                        raise
                    swallowed = True
            return "ran away"
        module.grow = grow
        observation = LimitedSubject(module, 60, memory=64 * 1024**2).observe(call("grow"))
        print(observation.ok, observation.error and observation.error["message"])
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])})
    assert run.stdout.strip() == "False a mutant's call ran past the memory cap", run.stdout + run.stderr[-2000:]

LEFT_BEHIND = []
needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this OS: mutants are graded in the judge")


@needs_fork
def test_a_mutant_is_graded_in_a_fork_that_takes_what_it_left_behind():
    def grade():
        LEFT_BEHIND.append("a probe's cache")
        return ("test_a",)

    assert graded_apart(grade, 60) == ("test_a",) and LEFT_BEHIND == []


@needs_fork
def test_a_computation_no_signal_reaches_is_stopped_at_the_budget():
    """C busy for minutes (a number of millions of digits): the kernel stops the fork; killed."""
    assert graded_apart(lambda: (pow(12, 4096**2), ())[1], 1) == ("(the mutant's run was stopped: the exercise's "
                                                                    "budget)",)


def test_a_failure_of_the_grader_in_the_fork_is_the_grader_s_not_a_kill():
    def grade():
        raise LookupError("no such probe")

    with pytest.raises(RuntimeError, match="LookupError: no such probe"):
        graded_apart(grade, 60)


def test_the_command_reports_and_exits_0():
    result = CliRunner().invoke(main, ["--lang", "en", "check", "--mutants", "ex07", "--max-mutants", "3"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("ex07  solutions/ex07_split.py: ") and "of 3 killed (" in lines[0]
    assert "; 3 of " in lines[0] and "graded (--max-mutants 3)" in lines[0]
    assert "| exercise | mutants | killed | ratio |" in lines and any(l.startswith("| ex07 | 3 | ") for l in lines)


def test_exercises_named_without_mutants_are_the_self_check_s_only():
    result = CliRunner().invoke(main, ["--lang", "en", "check", "ex07"])
    assert result.exit_code == 0, result.output
    assert "ex07: the reference passes every check" in result.output and "ex01" not in result.output


@pytest.mark.parametrize("args", [["--mutants", "ex99"], ["--only", "ex99"], ["ex99"]])
def test_an_unknown_exercise_is_a_usage_error(args):
    result = CliRunner().invoke(main, ["check", *args])
    assert result.exit_code == 2 and "ex99" in result.output


def test_without_cosmic_ray_the_command_says_what_to_install(monkeypatch):
    """cosmic-ray is the instructor extra's: a kit without it is told so, not shown a traceback."""
    for name in [n for n in sys.modules if n.startswith(("grader.build.mutant", "grader.build.tensor_mutations"))]:
        monkeypatch.delitem(sys.modules, name)
    for name in [n for n in sys.modules if n.partition(".")[0] == "cosmic_ray"] + ["cosmic_ray"]:
        monkeypatch.setitem(sys.modules, name, None)  # import cosmic_ray…: ModuleNotFoundError
    result = CliRunner().invoke(main, ["check", "--mutants", "ex07"])
    assert result.exit_code == 2 and "pip install cosmic-ray" in result.output
