"""攻击样本：学生代码想给自己加分、想读答案、想破坏评分。每一个都拿不到分，也伤不到别人。

An attack corpus run through `grade batch` (and some through `grade all --submission`), in this
process (tests.in_process: the judges and their sandboxes are real processes), graded
officially (bubblewrap): each attack is a student whose ex01_windows.py tries one trick (their
ex02 is the stub). Graded in the same batch as an honest student (the reference, full marks)
and a stub student (zero), by one judge: every student after an attack is graded by the judge
and the sandbox it attacked. For every attack we prove: it earns no point beyond what its
outputs earn, the grader finishes, the honest student keeps full marks, no file outside the
output folder changes, and no process of the student's is left running.

The course used is the kit's own, cut to ex01 and ex02 with a 1 s time limit per check
(a copy of course.toml next to symlinks to the kit's folders): an attack that loops or hoards
memory is stopped at 1 s of its CPU time.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from grader.sandbox.bubblewrap import bwrap_path
from tests.in_process import grade
from tests.kit import EX01, EX02, KIT, WRONG, make_course, snapshot
from tests.processes import named

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or bwrap_path() is None,
                                reason="official grading runs in bubblewrap (Linux; .ci/run installs it)")


def honest_ex01() -> str:
    return (KIT / "solutions" / EX01).read_text(encoding="utf-8")


def attacks(paths: dict) -> dict[str, str]:
    """Student name -> the source of their ex01_windows.py."""
    sol = str(KIT / "solutions" / EX01)
    check = str(KIT / "grader" / "per_exercise" / "ex01" / "checks.py")
    marker = paths["marker"]
    return {
        # patching comparison functions, builtins and the grader inside the worker
        "patch_compare": textwrap.dedent('''
            import builtins, torch, torch.testing
            torch.testing.assert_close = lambda *a, **k: None
            torch.allclose = lambda *a, **k: True
            torch.equal = lambda *a, **k: True
            builtins.all = lambda *a, **k: True
            import grader.judge.compare, grader.judge.verdicts, grader.sandbox.wire, grader.sandbox.worker
            grader.compare.compare = lambda *a, **k: None
            grader.judge.same = lambda *a, **k: None
            grader.wire.to_plain = lambda v, _depth=0: {"passed": True}
            grader.worker.describe_error = lambda *a, **k: {"type": "Passed"}
        ''') + WRONG,
        # objects whose == is always true (plain class, list/int/tensor subclasses)
        "always_equal": textwrap.dedent('''
            import torch

            class Yes:
                def __eq__(self, other): return True
                def __ne__(self, other): return False
                def __len__(self): return 2
                def __iter__(self): return iter((self, self))
                def __getitem__(self, i): return self

            class YesList(list):
                def __eq__(self, other): return True

            class YesInt(int):
                def __eq__(self, other): return True
                def __hash__(self): return 0

            class YesTensor(torch.Tensor):
                def __eq__(self, other): return True

            def shift_pairs(tokens):
                return Yes()

            def make_windows(tokens, block_size, stride=1):
                return YesList()

            def count_targets(n_tokens, block_size, stride=1):
                return YesInt(-1)
        '''),
        "sys_exit_import": "import sys\nsys.exit(0)\n" + WRONG,
        "os_exit_import": "import os\nos._exit(0)\n" + WRONG,
        "exit_in_call": textwrap.dedent('''
            import os, sys

            def shift_pairs(tokens):
                sys.exit(0)

            def make_windows(tokens, block_size, stride=1):
                os._exit(0)

            def count_targets(n_tokens, block_size, stride=1):
                raise SystemExit(0)
        '''),
        "loop_ignoring_signals": textwrap.dedent('''
            import signal
            for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM, signal.SIGXCPU):
                signal.signal(s, signal.SIG_IGN)
            while True:
                pass
        '''),
        "memory_bomb": textwrap.dedent('''
            import torch
            hoard = []

            def shift_pairs(tokens):
                while True:
                    hoard.append(bytearray(256 * 1024 * 1024))

            def make_windows(tokens, block_size, stride=1):
                return torch.empty(10**11)

            def count_targets(n_tokens, block_size, stride=1):
                return "x" * (50 * 1024**3)
        '''),
        "print_flood": textwrap.dedent('''
            import sys
            def shift_pairs(tokens):
                for _ in range(200):
                    print("x" * 1_000_000)
                return [0], [0]
            def make_windows(tokens, block_size, stride=1):
                for _ in range(200):
                    sys.stderr.write("y" * 1_000_000)
                return []
            def count_targets(n_tokens, block_size, stride=1):
                return 0
        '''),
        "bounded_fork": textwrap.dedent('''
            import os, time
            for _ in range(12):
                try:
                    pid = os.fork()
                except OSError:
                    break
                if pid == 0:
                    try:
                        os.setsid()  # out of the worker's process group
                    except OSError:
                        pass
                    time.sleep(3600)
                    os._exit(0)
        ''') + WRONG,
        "background_thread": textwrap.dedent('''
            import threading, time, builtins
            def spin():
                while True:
                    builtins.KEEP = getattr(builtins, "KEEP", 0) + 1
            threading.Thread(target=spin, daemon=False).start()
        ''') + WRONG,
        "pickled_payload": textwrap.dedent(f'''
            import os, pickle, grader.sandbox.worker, grader.sandbox.plaincodec

            class Boom:
                def __reduce__(self):
                    return (os.system, ("touch {marker}",))

            def shift_pairs(tokens):
                return Boom()

            _send = grader.sandbox.worker.send_frame
            def forged(sock, blob):
                _send(sock, pickle.dumps({{"ok": True, "value": Boom(), "output": ""}}))
            grader.sandbox.worker.send_frame = forged
        ''') + WRONG.replace("def shift_pairs(tokens):\n    return [0], [0]\n", ""),
        "read_solutions": textwrap.dedent(f'''
            import glob, os
            found = {{}}
            for path in [{sol!r}, {check!r}] + glob.glob({str(KIT / "solutions" / "*.py")!r}):
                try:
                    found[path] = open(path).read()
                except OSError:
                    pass
            if {sol!r} in found:
                exec(found[{sol!r}], globals())
            else:
        ''') + textwrap.indent(WRONG, "    ").replace("\n    \n", "\n\n") + "\n",
        "rng_tamper": textwrap.dedent('''
            import random, torch
            torch.manual_seed(0)
            random.seed(0)
            torch.randint = lambda *a, **k: torch.zeros(a[-1] if a else 1, dtype=torch.long)
            torch.randperm = lambda n, **k: torch.arange(n)
            random.randint = lambda a, b: a
        ''') + honest_ex01(),
        "write_files": textwrap.dedent(f'''
            import os
            GOOD_EX02 = {(KIT / "solutions" / EX02).read_text(encoding="utf-8")!r}
            targets = {{
                {str(KIT / "grader" / "evil_attack.py")!r}: "x = 1",
                {str(KIT / "solutions" / EX01)!r}: "hacked",
                {str(KIT / "grader" / "checks" / "test_ex01_windows.py")!r}: "",
                {paths["out"] + "/grades.csv"!r}: "student,total\\nwrite_files,999\\n",
                {paths["out"] + "/results.json"!r}: "{{}}",
                {paths["cohort"] + "/write_files/" + EX02!r}: GOOD_EX02,
                {paths["cohort"] + "/honest/" + EX01!r}: "broken",
                {marker!r}: "x",
            }}
            for path, text in targets.items():
                try:
                    with open(path, "w") as f:
                        f.write(text)
                except OSError:
                    pass
        ''') + WRONG,
        "kill_others": textwrap.dedent('''
            import os, signal
            for pid in [os.getppid()] + [int(p) for p in os.listdir("/proc") if p.isdigit()]:
                if pid != os.getpid():
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
        ''') + WRONG,
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("attacks")
    course = make_course(tmp, timeout=1)
    cohort, out, marker = tmp / "cohort", tmp / "out", tmp / "pwned"
    paths = {"cohort": str(cohort), "out": str(out), "marker": str(marker)}
    token = "atk" + secrets.token_hex(5)  # a process name no other run on the machine has
    naming = f"import ctypes as _ctypes\n_ctypes.CDLL(None).prctl(15, {token.encode()!r}, 0, 0, 0)  # PR_SET_NAME\n"
    sources = {"honest": honest_ex01(), "stub": (KIT / "exercises" / EX01).read_text(encoding="utf-8"),
               **{name: naming + source for name, source in attacks(paths).items()}}
    for name, source in sources.items():
        (cohort / name).mkdir(parents=True)
        (cohort / name / EX01).write_text(source, encoding="utf-8")
        ex02 = KIT / ("solutions" if name == "honest" else "exercises") / EX02
        (cohort / name / EX02).write_text(ex02.read_text(encoding="utf-8"), encoding="utf-8")
    watched = [KIT / "solutions", KIT / "grader", cohort]
    before = snapshot(*watched)
    done = threading.Event()
    seen = []  # the attacks' processes, named, while they ran: the look for what is left can find them

    def look() -> None:
        while not done.is_set() and not any(seen):
            seen.append(named(token))
            time.sleep(0.05)

    threading.Thread(target=look, daemon=True).start()
    try:
        run = grade("--course", str(course), "batch", str(cohort), "--out", str(out), "-j", "1", "--no-progress",
                    cwd=tmp)
    finally:
        done.set()
    after = snapshot(*watched)
    book = json.loads((out / "results.json").read_text(encoding="utf-8")) if (out / "results.json").exists() else None
    # What this run left is still there a moment after it ended: seen twice, three seconds apart.
    first = named(token)
    time.sleep(3)
    left = first & named(token)
    return {"run": run, "book": book, "before": before, "after": after, "marker": marker, "tmp": tmp,
            "course": course, "cohort": cohort, "procs": left, "seen": any(seen)}


ATTACKS = sorted(attacks({"cohort": "", "out": "", "marker": ""}))


def test_batch_finishes(graded):
    assert graded["run"].returncode == 0, graded["run"].stderr[-3000:]
    assert graded["book"] is not None


def test_honest_student_keeps_full_marks(graded):
    honest = graded["book"]["students"]["honest"]
    assert honest["score"] == honest["max_score"] > 0, honest


def test_stub_scores_zero(graded):
    assert graded["book"]["students"]["stub"]["score"] == 0


@pytest.mark.parametrize("name", ATTACKS)
def test_attack_earns_nothing(graded, name):
    """Every attack but rng_tamper implements ex01 wrongly: 0. rng_tamper is honest code: ex01 full."""
    result = graded["book"]["students"][name]
    by_id = {e["id"]: e for e in result["exercises"]}
    assert by_id["ex02"]["score"] == 0, (name, by_id["ex02"])  # the stub, whatever ex01 did
    if name == "rng_tamper":
        honest = {e["id"]: e for e in graded["book"]["students"]["honest"]["exercises"]}
        assert by_id["ex01"]["score"] == honest["ex01"]["score"]
    else:
        assert by_id["ex01"]["score"] == 0, (name, [c for c in by_id["ex01"]["checks"] if c["passed"]])


def test_no_file_outside_the_output_folder_changed(graded):
    changed = {p for p in set(graded["before"]) | set(graded["after"])
               if graded["before"].get(p) != graded["after"].get(p)}
    assert not changed
    assert not graded["marker"].exists()
    assert not (KIT / "grader" / "evil_attack.py").exists()


def test_forged_gradebook_is_overwritten(graded):
    text = (graded["tmp"] / "out" / "grades.csv").read_text(encoding="utf-8")
    assert "999" not in text


def test_no_student_process_left(graded):
    assert graded["seen"]  # while the batch ran
    assert not graded["procs"], graded["procs"]


def test_gradebook_names_every_student(graded):
    assert set(graded["book"]["students"]) == set(ATTACKS) | {"honest", "stub"}


@pytest.mark.parametrize("name", ["patch_compare", "always_equal", "pickled_payload", "os_exit_import",
                                  "write_files", "read_solutions"])
def test_attack_through_grade_all(graded, name, tmp_path):
    """The same attacks through `grade all --submission DIR --format json` (one process, CI's way)."""
    folder = graded["cohort"] / name
    before = snapshot(KIT / "solutions", KIT / "grader", graded["cohort"])
    out = tmp_path / "report.json"
    run = grade("--course", str(graded["course"]), "all", "--submission", str(folder), "--format", "json",
                "--out", str(out), cwd=tmp_path, env={"CI": "true"})
    assert run.returncode == 1, run.stderr[-2000:]
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["score"] == 0
    after = snapshot(KIT / "solutions", KIT / "grader", graded["cohort"])
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)
               and not Path(p).name.startswith(".grade")}  # the student's own progress file
    assert not changed
    assert not graded["marker"].exists()


# ------------------------------------------- the grader's own correct pieces, and what the judge reads

PIECE_THIEVES = {
    "ex08_get_batch.py": ("ex08", "from grader.pieces.get_batch import get_batch\n"),
    "ex08_get_batch.py ": ("ex08", "import sys\n\ndef get_batch(*a, **k):\n"
                                   "    return sys.modules['grader.pieces.get_batch'].get_batch(*a, **k)\n"),
    "ex09_bigram.py": ("ex09", "from grader.pieces.bigram import BigramLanguageModel\n"),
    "ex11_estimate_loss.py": ("ex11", "from grader.pieces.estimate_loss import estimate_loss\n"),
}


def costly_ex05() -> str:
    """ex05 answered with dicts keyed by 16 MB tensors and an int of 5,000 digits where a count
    is asked."""
    source = (KIT / "solutions" / "ex05_tinygpt_loss.py").read_text(encoding="utf-8")
    return source + ("\n_bomb = {torch.randn((4,) * 11) + i: i for i in range(3)}\n"
                     "SHAPE_ANSWERS = dict(_bomb)\n"
                     "def trace_shapes(model, input_ids, labels):\n    return dict(_bomb)\n"
                     "def lm_loss(logits, labels):\n    return 10 ** 5000\n")


def _grade_all(tmp: Path, files: dict[str, str | Path]) -> tuple[subprocess.CompletedProcess, Path]:
    """`grade all --submission SUB --format json --out REPORT` (CI: official) of a submission of
    `files` (text, or a Path the file is a symbolic link to), on the kit's course: every other
    exercise is missing, and runs nothing."""
    sub = tmp / "sub"
    sub.mkdir(parents=True)
    for name, content in files.items():
        if isinstance(content, Path):
            (sub / name).symlink_to(content)
        else:
            (sub / name).write_text(content, encoding="utf-8")
    out = tmp / "report.json"
    run = grade("all", "--submission", str(sub), "--format", "json", "--out", str(out),
                env={"CI": "true", "GRADE_LANG": "en"})
    return run, out


@pytest.fixture(scope="module")
def submissions(tmp_path_factory):
    """Two submissions, each graded once. The first holds ex01 as a link to the reference, ex05's
    costly answer, and a thief of the grader's correct pieces in each of ex08, ex09 and ex11;
    the second, the other ex08 thief. Each exercise runs in a worker of its own, and each thief
    fails at its own import or call, whatever the others do: no exercise decides another's checks."""
    first = {EX01: KIT / "solutions" / EX01, "ex05_tinygpt_loss.py": costly_ex05(),
             **{name: source for name, (_, source) in PIECE_THIEVES.items() if name != "ex08_get_batch.py "}}
    second = {"ex08_get_batch.py": PIECE_THIEVES["ex08_get_batch.py "][1]}
    graded = {}
    for key, files in (("first", first), ("second", second)):
        run, out = _grade_all(tmp_path_factory.mktemp(key), files)
        graded[key] = {"run": run, "out": out, "report": json.loads(out.read_text(encoding="utf-8"))}
    return graded


def _exercise(report: dict, exercise: str) -> dict:
    return [e for e in report["exercises"] if e["id"] == exercise][0]


@pytest.mark.parametrize("name", sorted(PIECE_THIEVES))
def test_the_graders_correct_pieces_are_out_of_reach(name, submissions):
    # ex11 and ex12 are graded with correct get_batch / bigram / estimate_loss in place of the
    # student's; those pieces must never be within reach of the exercise they answer.
    exercise = PIECE_THIEVES[name][0]
    report = submissions["second" if name == "ex08_get_batch.py " else "first"]["report"]
    passed = [c["name"] for c in _exercise(report, exercise)["checks"] if c["passed"] and c["score"]]
    assert not passed, passed


def test_a_symlink_to_the_solution_is_not_followed(submissions):
    # The judge reads the submission for the worker: a link to solutions/ must not become the answer.
    ex01 = _exercise(submissions["first"]["report"], "ex01")
    assert ex01["score"] == 0, [c["name"] for c in ex01["checks"] if c["passed"]]


def test_an_answer_costly_to_spell_out_costs_the_grader_nothing(submissions):
    """ex05's costly answer (costly_ex05): the report names its parts by shape and size, never
    spells them out (in full they would take the judge minutes past every time limit and write
    gigabytes of report), and a 5,000-digit int is no grader error."""
    run, out = submissions["first"]["run"], submissions["first"]["out"]
    assert run.returncode == 1, run.stderr[-2000:]
    assert out.stat().st_size < 200_000
    text = out.read_text(encoding="utf-8")
    assert "T(4, 4, 4" in text and "grader error" not in text
