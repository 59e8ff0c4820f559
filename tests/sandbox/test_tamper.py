"""Issue 10, written the way a student who wants the points would write it.

Every attack goes through the real command line (`grade batch`, `grade <ex> --submission`,
`grade all --submission`), as root here, in this process (tests.in_process: the sandboxes and
workers are real processes); the PID-namespace attack and the tracer also as an ordinary user
(uid 61999 in a private mount namespace that makes the interpreter reachable), a process of its
own. Each one must earn nothing: the linked
folders score 0 with "submission refused", a `*.py` that is a link or a FIFO is not read and
its exercise scores 0 saying so (a correct answer beside links and FIFOs it never reads, its
own exercise's file included, keeps full marks), code that goes after what once observed the
student's code in the worker (probes, nets, frames) scores exactly what its outputs earn, the
score of the same code without the attack, and every file that reaches for the grader or
hides a name carries the review mark in the text report, results.json, grades.csv and the CI
formats.
"""

from __future__ import annotations

import csv
import functools
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests import corpus
from tests.in_process import grade
from tests.kit import make_course
from tests.sandbox.as_user import as_user_prefix, user_env

KIT = Path(__file__).resolve().parents[2]
GRADE = [str(Path(sys.executable).parent / "grade")]
DATA = str(corpus.FOLDER)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fence is Linux's")


def _grade(*args, **env: str) -> subprocess.CompletedProcess:
    """`grade ARGS` from the kit's folder, in this process (`env` added to its environment)."""
    return grade(*args, cwd=KIT, env={"GPT_COURSE_DATA": DATA, "GRADE_LANG": "en", **env})


def _write(folder: Path, name: str, code: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(textwrap.dedent(code), encoding="utf-8")


@pytest.fixture(scope="module")
def graded_cohort(tmp_path_factory):
    """One `grade batch` (ex01, ex02, ex11; one judge) of the linked students (point 1) and of
    every observer attack beside its twin (point 2), each format written: the output folder.
    The linked students hand in ex01 only, the attacks ex02 or ex11: every other exercise of
    theirs is missing and runs nothing."""
    cohort = tmp_path_factory.mktemp("tamper") / "cohort"
    _linked_students(cohort)
    _observer_students(cohort)
    out = cohort.parent / "out"
    run = _grade("batch", str(cohort), "--out", str(out), "--only", "ex01", "--only", "ex02", "--only", "ex11",
                 "-j", "1", "--no-progress", "--format", "junit", "--format", "gradescope", "--format", "github")
    assert run.returncode in (0, 1), run.stderr[-3000:]
    return out


# --------------------------------------------------------------------------- point 1: links

def _linked_students(cohort: Path) -> None:
    """`exercises -> /proc/self/cwd/solutions`, an absolute link, a linked file, a FIFO, a linked
    student, a helper module that is a link."""
    (cohort / "cwdlink").mkdir(parents=True)
    os.symlink("/proc/self/cwd/solutions", cohort / "cwdlink" / "exercises")
    (cohort / "abslink").mkdir()
    os.symlink(KIT / "solutions", cohort / "abslink" / "exercises")
    (cohort / "filelink").mkdir()
    os.symlink(KIT / "solutions" / "ex01_windows.py", cohort / "filelink" / "ex01_windows.py")
    (cohort / "fifo").mkdir()
    os.mkfifo(cohort / "fifo" / "ex01_windows.py")
    os.symlink(KIT / "solutions", cohort / "wholelink")  # the student folder itself
    _write(cohort / "helperlink", "ex01_windows.py", "from windows_helper import *\n")
    os.symlink(KIT / "solutions" / "ex01_windows.py", cohort / "helperlink" / "windows_helper.py")


def _ex01(student: dict) -> dict:
    return [e for e in student["exercises"] if e["id"] == "ex01"][0]


def test_linked_folders_and_files_score_zero_in_batch(graded_cohort):
    out = graded_cohort
    rows = {r["student"]: r for r in csv.DictReader((out / "grades.csv").open(encoding="utf-8")) if r["student"] != "(max)"}
    for name in ("cwdlink", "abslink", "filelink", "fifo"):
        assert rows[name]["ex01"] == "0", (name, rows[name])
    book = json.loads((out / "results.json").read_text(encoding="utf-8"))["students"]
    for name in ("filelink", "fifo"):  # the file refused alone: said as a single run says it, not "not implemented"
        ex01 = _ex01(book[name])
        assert ex01["status"] == "failed" and {c["kind"] for c in ex01["checks"]} == {"refused"}, ex01
    assert rows.get("wholelink", {"ex01": "0"})["ex01"] == "0"
    # importing a helper refused alone: the import error says why, as a single run's does
    assert rows["helperlink"]["ex01"] == "0"
    said = {c["message"] for c in _ex01(book["helperlink"])["checks"]}
    assert all(m.endswith("No module named 'windows_helper' (windows_helper.py: is a symbolic link, not read)") for m in said), said


@pytest.mark.parametrize("layout", ["folder_link", "cwd_link", "module_link", "module_fifo", "helper_link"])
def test_submission_linked_or_importing_a_link_is_refused(tmp_path, layout):
    """`grade ex01 --submission`: the folder a link refuses it whole; ex01's own file a link or a
    FIFO refuses that file, never opened; a helper module that is a link to the reference is
    not read, and ex01's import of it says why."""
    student = tmp_path / "student"
    student.mkdir()
    if layout == "folder_link":
        os.symlink(KIT / "solutions", student / "exercises")
        folder = student / "exercises"
    elif layout == "cwd_link":
        os.symlink("/proc/self/cwd/solutions", student / "exercises")
        folder = student / "exercises"
    elif layout == "helper_link":
        folder = student
        _write(folder, "ex01_windows.py", "from windows_helper import *\n")
        os.symlink(KIT / "solutions" / "ex01_windows.py", folder / "windows_helper.py")
    else:
        folder = student
        if layout == "module_link":
            os.symlink(KIT / "solutions" / "ex01_windows.py", folder / "ex01_windows.py")
        else:
            os.mkfifo(folder / "ex01_windows.py")
    run = _grade("ex01", "--submission", str(folder))
    assert run.returncode == 1
    assert " 0/" in run.stdout.splitlines()[0]
    told = {"folder_link": "submission refused", "cwd_link": "submission refused",
            "helper_link": "No module named 'windows_helper' (not read: windows_helper.py is a symbolic link"}
    said = told.get(layout, "not read: ex01_windows.py is a ")
    assert run.stdout.count(said) == 1, run.stdout[-3000:]  # once, then the checks it stopped in one line
    assert "check(s) could not run" in run.stdout
    assert ("FIFO" if layout == "module_fifo" else "symbolic link") in run.stdout


def test_links_and_fifos_beside_the_work_are_left_alone(tmp_path):
    """A correct ex01 beside `data -> …`, a FIFO, a link deep inside, a virtual environment, and
    other exercises' files that are a link to the reference, a FIFO and over the size cap (refused
    alone, as `grade batch` refuses them): none followed or opened, full marks."""
    student = tmp_path / "student"
    (student / "data" / "more").mkdir(parents=True)
    shutil.copy(KIT / "solutions" / "ex01_windows.py", student / "ex01_windows.py")
    os.symlink(KIT / "solutions", student / "reference")
    os.mkfifo(student / "notes")
    os.symlink(KIT / "solutions" / "ex01_windows.py", student / "data" / "more" / "answer.py")
    os.mkfifo(student / "data" / "more" / "pipe")
    (student / ".venv" / "bin").mkdir(parents=True)
    os.symlink(sys.executable, student / ".venv" / "bin" / "python")
    os.symlink(KIT / "solutions" / "ex02_nll.py", student / "ex02_nll.py")
    os.mkfifo(student / "ex03_param_budget.py")
    with open(student / "ex04_parallel_vs_generate.py", "wb") as big:
        big.truncate(5 * 1024 * 1024)  # sparse: over the 2 MiB cap, never read
    run = _grade("ex01", "--submission", str(student))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert " 10/10" in run.stdout.splitlines()[0] and "refused" not in run.stdout


# --------------------------------------------------------------------------- point 2: observers

EX02_CHEAT = """
    import torch
    import torch.nn.functional as F
    import contextlib
    {reach}

    @contextlib.contextmanager
    def _noop(used):
        yield

    {patch}

    def stable_softmax(logits):
        return F.softmax(logits, dim=-1)

    def nll(logits, label):
        t = torch.as_tensor(logits, dtype=torch.float32)
        return float(torch.logsumexp(t, -1) - t[label])

    def masked_mean_nll(logits, labels, ignore_index=-100):
        return F.cross_entropy(logits, labels, ignore_index=ignore_index)
"""

EX11_CHEAT = """
    import torch
    {reach}
    from ex08_get_batch import get_batch

    def _patch(p):
        p.grad_recorded = lambda mod, **kw: False
        p.modes_during = lambda mod, **kw: [False]
        p.mode_after = lambda mod, seed=0, mode="train", **kw: mode == "train"

    {patch}

    def estimate_loss(model, splits, block_size, batch_size, eval_iters, generator=None):
        {during}
        out = {{}}
        for name, data in splits.items():
            losses = []
            for _ in range(eval_iters):
                x, y = get_batch(data, block_size, batch_size, generator=generator)
                logits, loss = model(x, y)
                losses.append(loss.item())
            out[name] = sum(losses) / len(losses)
        model.train()
        return out
"""

# Frame walks that try not to look like the submission's: code compiled under a library's
# file name, code compiled from a string, a module written to the working folder, a signal
# handler's frame argument. Each walk rebinds the probe's observer where it finds it.
_WALK = ("f = sys._getframe(1)\n"
         "while f is not None:\n"
         "    if 'grad_recorded' in f.f_globals:\n"
         "        f.f_globals['grad_recorded'] = lambda mod, **kw: False\n"
         "    f = f.f_back\n")
_SPOOFED = f"""try:
            exec(compile({"import sys" + chr(10) + _WALK!r}, {__import__("json").__file__!r}, "exec"), {{}})
        except Exception:
            pass"""
_FROM_STRING = f"""try:
            exec({"import sys" + chr(10) + _WALK!r}, {{}})
        except Exception:
            pass"""
_WRITTEN = f"""try:
            import os
            with open(os.path.join(os.getcwd(), "helper_walk.py"), "w") as out:
                out.write("import sys" + chr(10) + "def walk():" + chr(10) + "".join("    " + l + chr(10) for l in {_WALK!r}.splitlines()))
            sys.path.insert(0, os.getcwd())
            import helper_walk
            helper_walk.walk()
        except Exception:
            pass"""
_SIGNAL = """def _on_alarm(signum, frame):
        f = frame
        while f is not None:
            if 'grad_recorded' in f.f_globals:
                f.f_globals['grad_recorded'] = lambda mod, **kw: False
            for value in list(f.f_locals.values()):
                if isinstance(value, list):
                    value.clear()
            f = f.f_back
    import signal as _sg
    _sg.signal(_sg.SIGALRM, _on_alarm)
    _sg.setitimer(_sg.ITIMER_REAL, 0.0005, 0.0005)"""

# ex02 with the aten watch taken off around the forbidden calls: popped through torch's own
# helper, or by the C functions reached under a name built at run time.
EX02_POP = """
    import torch
    import torch.nn.functional as F
    {reach}

    def stable_softmax(logits):
        with _off():
            return F.softmax(torch.as_tensor(logits), dim=-1)

    def nll(logits, label):
        t = torch.as_tensor(logits, dtype=torch.float32)
        with _off():
            return float(torch.logsumexp(t, -1) - t[label])

    def masked_mean_nll(logits, labels, ignore_index=-100):
        with _off():
            return F.cross_entropy(logits, labels, ignore_index=ignore_index)
"""
_POP_HELPER = "from torch.utils._python_dispatch import _pop_mode_temporarily as _off"
_POP_BUILT = """import contextlib
    _pop = getattr(torch._C, "_pop_torch" + "_dispatch_stack")
    _push = getattr(torch._C, "_push_on_torch" + "_dispatch_stack")

    @contextlib.contextmanager
    def _off():
        try:
            mode = _pop()
        except Exception:
            yield
            return
        try:
            yield
        finally:
            _push(mode)"""

# ex02 computed where the net cannot see: torch's own ops run in another thread (a
# TorchDispatchMode is the calling thread's alone; the ops bound at import, before the
# Python-level patches) or in a fresh interpreter.
EX02_ELSEWHERE = """
    import torch
    import torch.nn.functional as F
    {reach}

    def stable_softmax(logits):
        return _elsewhere("softmax", torch.as_tensor(logits))

    def nll(logits, label):
        t = torch.as_tensor(logits, dtype=torch.float32)
        return float(_elsewhere("lse", t) - t[label])

    def masked_mean_nll(logits, labels, ignore_index=-100):
        return _elsewhere("ce", logits, labels, ignore_index)
"""
_IN_A_THREAD = """import threading
    # torch's own builtins, bound before the Python-level patches: only the aten watch sees them
    _softmax, _lse, _log_softmax = torch.softmax, torch.logsumexp, torch.log_softmax

    def _ce(logits, labels, ignore):
        valid = labels != ignore
        picked = _log_softmax(logits, -1).gather(-1, torch.where(valid, labels, 0).unsqueeze(-1)).squeeze(-1)
        return -(picked * valid).sum() / valid.sum()

    def _elsewhere(what, *args):
        out = []
        run = {"softmax": lambda: _softmax(args[0], -1), "lse": lambda: _lse(args[0], -1),
               "ce": lambda: _ce(*args)}[what]
        worker = threading.Thread(target=lambda: out.append(run()))
        worker.start()
        worker.join()
        return out[0]"""
_IN_A_PROCESS = """import pickle, subprocess, sys
    _CHILD = (
        "import pickle, sys, torch, torch.nn.functional as F\\n"
        "what, args = pickle.load(sys.stdin.buffer)\\n"
        "out = {'softmax': lambda: F.softmax(args[0], dim=-1), 'lse': lambda: torch.logsumexp(args[0], -1),\\n"
        "       'ce': lambda: F.cross_entropy(args[0], args[1], ignore_index=args[2])}[what]()\\n"
        "sys.stdout.buffer.write(pickle.dumps(out.detach()))\\n")

    def _elsewhere(what, *args):
        done = subprocess.run([sys.executable, "-c", _CHILD], input=pickle.dumps((what, args)),
                              capture_output=True, check=True)
        return pickle.loads(done.stdout)"""

# ex02 from torch's own kernels called for one dispatch key, below the Python key a
# TorchDispatchMode sits on (`op._op_dk(CPU, …)`, `op.redispatch(keys, …)`): in the exercise's
# file, or in a module of the submission's own that it imports (its code runs in ex02's worker).
EX02_KERNELS = """
    import torch
    {reach}

    def stable_softmax(logits):
        return _log_softmax(torch.as_tensor(logits, dtype=torch.float32)).exp()

    def nll(logits, label):
        t = torch.as_tensor(logits, dtype=torch.float32)
        return float(-_log_softmax(t)[label])

    def masked_mean_nll(logits, labels, ignore_index=-100):
        keep = labels != ignore_index
        picked = _log_softmax(logits).gather(-1, torch.where(keep, labels, 0)[:, None])[:, 0]
        return -(picked * keep).sum() / keep.sum()
"""
_ONE_KEY = """_CPU = torch._C.DispatchKey.CPU

    def _log_softmax(x):
        d = x.detach()
        value = torch.ops.aten._log_softmax.default._op_dk(_CPU, d, -1, False)
        return value + (x - d) - (value.exp() * (x - d)).sum(-1, keepdim=True)  # its gradient by hand"""
_REDISPATCH_HELPER = """import torch
_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.AutogradCPU) | torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


def log_softmax(x):
    return torch.ops.aten._log_softmax.default.redispatch(_KEYS, x, -1, False)
"""
# Modules an attack's folder holds beside its exercise file: name -> {file: code}
HELPERS = {"ex02_kernels_in_a_helper": {"nethelp.py": _REDISPATCH_HELPER}}

ATTACKS = {
    "ex02_by_import": ("ex02", "ex02_nll.py", EX02_CHEAT.format(reach="import grader.per_exercise.ex02.probes as p",
                                                                patch="p.forbidden_net = _noop")),
    "ex02_by_sys_modules": ("ex02", "ex02_nll.py", EX02_CHEAT.format(
        reach="import sys", patch="try:\n        sys.modules['grader.per_exercise.ex02.probes'].forbidden_net = _noop\n    except Exception:\n        pass")),
    # at import, before any check: what the check right after the import must see (the guard
    # takes the submission's own module into sys.modules without a full comparison, Guard.admit)
    "ex02_swaps_a_module_at_import": ("ex02", "ex02_nll.py", EX02_CHEAT.format(
        reach="import sys, types", patch="_fake = types.ModuleType('torch.nn.functional')\n    "
        "_fake.__dict__.update(vars(F))\n    sys.modules['torch.nn.functional'] = _fake")),
    "ex02_by_importlib": ("ex02", "ex02_nll.py", EX02_CHEAT.format(
        reach="import importlib", patch="try:\n        importlib.import_module('grader.per_exercise.' + 'ex02.probes').forbidden_net = _noop\n    except Exception:\n        pass")),
    "ex02_by_grader_attribute": ("ex02", "ex02_nll.py", EX02_CHEAT.format(
        reach="import grader", patch="try:\n        grader.per_exercise.ex02.probes.forbidden_net = _noop\n    except Exception:\n        pass")),
    "ex02_patch_torch_back": ("ex02", "ex02_nll.py", EX02_CHEAT.format(
        reach="_real = F.softmax", patch="F.max_pool1d = _real")),
    "ex11_by_import": ("ex11", "ex11_estimate_loss.py", EX11_CHEAT.format(
        reach="import grader.per_exercise.ex11.probes as p", patch="_patch(p)", during="pass")),
    "ex11_by_gc": ("ex11", "ex11_estimate_loss.py", EX11_CHEAT.format(
        reach="import gc, types",
        patch="try:\n        [_patch(o) for o in gc.get_objects() if isinstance(o, types.ModuleType) and o.__name__ == 'grader.per_exercise.ex11.probes']\n    except Exception:\n        pass",
        during="pass")),
    "ex11_by_frames": ("ex11", "ex11_estimate_loss.py", EX11_CHEAT.format(
        reach="import sys", patch="",
        during="try:\n            f = sys._getframe(1)\n            while f is not None:\n                if 'grad_recorded' in f.f_globals:\n                    f.f_globals['grad_recorded'] = lambda mod, **kw: False\n                f = f.f_back\n        except Exception:\n            pass")),
    "ex11_by_traceback_frame": ("ex11", "ex11_estimate_loss.py", EX11_CHEAT.format(
        reach="import sys", patch="",
        during="try:\n            raise ValueError\n        except ValueError as e:\n            try:\n                e.__traceback__.tb_frame.f_back.f_globals['grad_recorded'] = lambda mod, **kw: False\n            except Exception:\n                pass")),
    "ex11_by_spoofed_file_name": ("ex11", "ex11_estimate_loss.py", EX11_CHEAT.format(
        reach="import sys", patch="", during=_SPOOFED)),
    "ex11_by_code_from_a_string": ("ex11", "ex11_estimate_loss.py", EX11_CHEAT.format(
        reach="import sys", patch="", during=_FROM_STRING)),
    "ex11_by_a_module_it_wrote": ("ex11", "ex11_estimate_loss.py", EX11_CHEAT.format(
        reach="import sys", patch="", during=_WRITTEN)),
    "ex11_by_signal_frames": ("ex11", "ex11_estimate_loss.py", EX11_CHEAT.format(
        reach="import sys", patch=_SIGNAL, during="pass")),
    "ex02_pop_by_helper": ("ex02", "ex02_nll.py", EX02_POP.format(reach=_POP_HELPER)),
    "ex02_in_a_thread": ("ex02", "ex02_nll.py", EX02_ELSEWHERE.format(reach=_IN_A_THREAD)),
    "ex02_in_a_fresh_interpreter": ("ex02", "ex02_nll.py", EX02_ELSEWHERE.format(reach=_IN_A_PROCESS)),
    "ex02_pop_by_built_name": ("ex02", "ex02_nll.py", EX02_POP.format(reach=_POP_BUILT)),
    "ex02_empty_the_net_in_place": ("ex02", "ex02_nll.py", EX02_CHEAT.format(
        reach="", patch="""def _every(cls):
        for sub in type.__subclasses__(cls):
            yield sub
            yield from _every(sub)
    for _cls in list(_every(object)):
        if _cls.__name__ == "_AtenNet":
            try:
                _cls.__torch_dispatch__.__globals__['_ATEN_NAMES'].clear()
                _cls.__torch_dispatch__.__globals__['_WATCH_SWITCHES'].clear()
            except Exception:
                pass""")),
    # a library (functools) makes the assignment, so no frame of the submission's asks for it
    "ex02_net_code_through_a_library": ("ex02", "ex02_nll.py", EX02_CHEAT.format(
        reach="import functools\n    import torch.utils._python_dispatch", patch="""def _let_through(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))
    for _cls in type.__subclasses__(torch.utils._python_dispatch.TorchDispatchMode):
        if _cls.__name__ == "_AtenNet":
            try:
                functools.update_wrapper(_cls.__torch_dispatch__, _let_through, assigned=("__code__",), updated=())
            except Exception:
                pass""")),
    "ex02_kernel_for_one_key": ("ex02", "ex02_nll.py", EX02_KERNELS.format(reach=_ONE_KEY)),
    "ex02_kernels_in_a_helper": ("ex02", "ex02_nll.py", EX02_KERNELS.format(
        reach="from nethelp import log_softmax as _log_softmax")),
    "ex11_by_import_hook": ("ex11", "ex11_estimate_loss.py", EX11_CHEAT.format(
        reach="import sys", patch="class _Finder:\n        def find_spec(self, *a, **k):\n            return None\n    sys.meta_path.insert(0, _Finder())",
        during="pass")),
}


# The same code without the attack: what the attack's outputs earn. ex02's forbidden APIs are
# read from the source (the same names in both), ex11's modes and gradients from the numbers
# estimate_loss returns (the same loop in both).
_EX02_HONEST = EX02_CHEAT.format(reach="", patch="")
TWINS = {
    **{name: _EX02_HONEST for name, (ex, _, code) in ATTACKS.items() if code.startswith(EX02_CHEAT[:60])},
    **{name: EX11_CHEAT.format(reach="", patch="", during="pass") for name, (ex, _, _) in ATTACKS.items() if ex == "ex11"},
    "ex02_pop_by_helper": EX02_POP.format(reach="import contextlib\n    _off = contextlib.nullcontext"),
    "ex02_pop_by_built_name": EX02_POP.format(reach="import contextlib\n    _off = contextlib.nullcontext"),
    "ex02_in_a_thread": EX02_ELSEWHERE.format(reach="""def _elsewhere(what, *args):
        if what == "ce":
            return F.cross_entropy(args[0], args[1], ignore_index=args[2])
        return F.softmax(args[0], dim=-1) if what == "softmax" else torch.logsumexp(args[0], -1)"""),
    "ex02_kernel_for_one_key": EX02_KERNELS.format(reach="def _log_softmax(x):\n        return torch.log_softmax(x, -1)"),
    "ex02_kernels_in_a_helper": EX02_KERNELS.format(reach="def _log_softmax(x):\n        return torch.log_softmax(x, -1)"),
}
TWINS["ex02_in_a_fresh_interpreter"] = TWINS["ex02_in_a_thread"]
# Attacks whose source neither reaches for the grader nor hides a name: with nothing left in
# the worker to attack, their code is plain forbidden-API use, and the rule scores it so.
UNFLAGGED = {"ex02_pop_by_helper", "ex02_in_a_thread", "ex02_kernel_for_one_key", "ex02_kernels_in_a_helper"}
# A signal handler clearing every list in the running frames every half millisecond: what its
# outputs earn depends on where it strikes, never more than the same code without it.
CHAOTIC = {"ex11_by_signal_frames"}


def _attack_files(name: str, code: str) -> dict[str, str]:
    """The files of a student handing in `code` as attack `name`'s exercise: its helper modules,
    and for ex11 the reference ex08 it imports."""
    exercise, file, _ = ATTACKS[name]
    files = {file: textwrap.dedent(code), **{helper: textwrap.dedent(text) for helper, text in HELPERS.get(name, {}).items()}}
    if exercise == "ex11":
        files["ex08_get_batch.py"] = (KIT / "solutions" / "ex08_get_batch.py").read_text(encoding="utf-8")
    return files


@functools.cache
def _twin_students() -> dict[str, str]:
    """Attack -> the student holding its twin. Attacks whose twins are the same files share one
    twin student (ex11's ten attacks all have the same estimate_loss without the attack)."""
    students: dict[tuple, str] = {}
    return {name: students.setdefault(tuple(sorted(_attack_files(name, TWINS[name]).items())), f"twin_{name}")
            for name in sorted(ATTACKS)}


def _observer_students(cohort: Path) -> None:
    """Every observer attack, and every twin (the same code without the attack), a student each."""
    students = {name: _attack_files(name, code) for name, (_, _, code) in ATTACKS.items()}
    students.update({student: _attack_files(name, TWINS[name]) for name, student in _twin_students().items()})
    for student, files in students.items():
        (cohort / student).mkdir(parents=True)
        for name, text in files.items():
            (cohort / student / name).write_text(text, encoding="utf-8")


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_observer_attacks_score_what_their_outputs_earn(graded_cohort, name):
    exercise, twin_student = ATTACKS[name][0], _twin_students()[name]
    book = json.loads((graded_cohort / "results.json").read_text(encoding="utf-8"))

    def checks(student):
        found = [e for e in book["students"][student]["exercises"] if e["id"] == exercise][0]
        return {c["name"]: c["passed"] for c in found["checks"]}, found["score"]

    (attack, attack_score), (twin, twin_score) = checks(name), checks(twin_student)
    if name in CHAOTIC:
        assert attack_score <= twin_score, (attack, twin)
    else:
        assert (attack, attack_score) == (twin, twin_score)
    assert twin_score == (0 if exercise == "ex02" else 9)  # F.softmax in every ex02 function; ex11 without eval, no_grad
    assert bool(book["students"][name]["review"]["flagged"]) is (name not in UNFLAGGED), book["students"][name]["review"]
    assert not book["students"][twin_student]["review"]["flagged"], book["students"][twin_student]["review"]


def test_review_mark_in_every_format(graded_cohort):
    rows = list(csv.DictReader((graded_cohort / "grades.csv").open(encoding="utf-8")))
    flagged = [r for r in rows if r["student"] == "ex11_by_gc"][0]
    assert "gc.get_objects" in flagged["review"]
    reports = graded_cohort / "reports"
    junit = next(reports.glob("ex11_by_gc*.xml")).read_text(encoding="utf-8")
    assert 'name="review"' in junit and "flagged for review" in junit
    gradescope = json.loads(next(reports.glob("ex11_by_gc*.gradescope.json")).read_text(encoding="utf-8"))
    assert "flagged for review" in gradescope["output"]
    github = next(reports.glob("ex11_by_gc*.md")).read_text(encoding="utf-8")
    assert "flagged for review" in github


def test_honest_submission_is_not_flagged_and_not_tampered(tmp_path):
    """The reference itself, as a submission graded on ex02, ex11 and ex13 (the kit's course cut
    to them, its own limits): every check passes, no mark (no false alarm)."""
    folder = tmp_path / "honest"
    folder.mkdir()
    for name in ("ex02_nll.py", "ex11_estimate_loss.py", "ex08_get_batch.py", "ex09_bigram.py", "ex13_bpe.py"):
        shutil.copy(KIT / "solutions" / name, folder / name)
    course = make_course(tmp_path, timeout=None, exercises=("ex02", "ex11", "ex13"))
    run = _grade("--course", str(course), "all", "--submission", str(folder), "--format", "json")
    data = json.loads(run.stdout)
    assert sorted(e["id"] for e in data["exercises"]) == ["ex02", "ex11", "ex13"], data["exercises"]
    for exercise in data["exercises"]:
        assert exercise["score"] == exercise["max_score"], (exercise["id"], [c for c in exercise["checks"] if not c["passed"]])
    assert not data["review"]["flagged"]


# --------------------------------------------------------------------------- point 2: types

def test_wrong_types_fail_with_the_way_to_the_right_one(tmp_path):
    """An encode returning a LongTensor, merges with list pairs and float ids: the contract's types."""
    folder = tmp_path / "types"
    source = (KIT / "solutions" / "ex13_bpe.py").read_text(encoding="utf-8")
    source += textwrap.dedent("""

        _train, _encode = train_bpe, bpe_encode

        def train_bpe(text, vocab_size):
            return [[list(pair), float(idx)] for pair, idx in _train(text, vocab_size)]

        def bpe_encode(text, merges):
            import torch
            return torch.tensor(_encode(text, merges))
    """)
    _write(folder, "ex13_bpe.py", source)
    run = _grade("ex13", "--submission", str(folder))
    first = run.stdout.splitlines()[0]
    assert "16/16" not in first
    assert "type differs" in run.stdout
    assert "use .tolist()" in run.stdout or "use tuple(...)" in run.stdout


# --------------------------------------------------------------------------- point 4: signals

KILLER = """

    import os as _os, signal as _signal
    for _name in _os.listdir("/proc"):
        if _name.isdigit() and int(_name) != _os.getpid():
            try:
                _os.kill(int(_name), _signal.SIGKILL)
            except Exception:
                pass
    try:
        _os.kill(-1, _signal.SIGKILL)
    except Exception:
        pass
"""
_CHILD = ("import ctypes, os; r = ctypes.CDLL(None, use_errno=True).ptrace(16, os.getppid(), 0, 0); "
          "print('ATTACH', r, ctypes.get_errno())")
# A program the code starts, at its import, tries ptrace(PTRACE_ATTACH) on the worker; what it
# got is the import's error
TRACER = f"""
    import subprocess, sys
    _done = subprocess.run([sys.executable, "-c", {_CHILD!r}], capture_output=True, text=True, timeout=20)
    raise RuntimeError("the child said " + _done.stdout.strip())
"""


@pytest.fixture(scope="module")
def as_a_user():
    """One submission graded officially (bubblewrap) as uid 61999 by `grade all --submission`, on
    the kit's course cut to ex01 and ex02 with its own limits: ex01 the reference that first, at
    its import, kills every process it can see (KILLER); ex02 the TRACER. Each exercise runs in a
    worker of its own, in a PID namespace of its own, so neither decides the other's checks."""
    import tempfile

    if os.geteuid() != 0:
        pytest.skip("an ordinary user's run is started from root here")
    place = Path(tempfile.mkdtemp(prefix="grade-asuser-", dir="/tmp"))
    try:
        folder = place / "student"
        _write(folder, "ex01_windows.py", (KIT / "solutions" / "ex01_windows.py").read_text(encoding="utf-8") + textwrap.dedent(KILLER))
        _write(folder, "ex02_nll.py", TRACER)
        for p in folder.iterdir():
            p.chmod(0o644)
        folder.chmod(0o755)
        course = make_course(place, timeout=None, exercises=("ex01", "ex02"))
        env = user_env(place, GPT_COURSE_DATA=DATA, GRADE_LANG="en", CI="true")
        yield subprocess.run([*as_user_prefix(place), *GRADE, "--course", str(course), "all", "--submission", str(folder)],
                             cwd="/", env=env, capture_output=True, text=True, timeout=600)
    finally:
        shutil.rmtree(place, ignore_errors=True)


def test_as_a_user_the_worker_cannot_signal_the_grader(as_a_user):
    """kill(-1) and a kill of every pid in /proc from the student's import: the grade survives.

    Run as uid 61999 (no one else's): outside the sandbox's PID namespace, kill(-1) would end
    the grader.
    """
    run = as_a_user
    assert run.returncode == 1, (run.stdout[-2000:], run.stderr[-2000:])  # finished: only ex02, the tracer, failed
    first, second = run.stdout.splitlines()[0], [line for line in run.stdout.splitlines() if line.startswith("ex02")][0]
    assert first.startswith("ex01") and first.split()[-1].split("/")[0] == first.split()[-1].split("/")[1], first  # full marks
    assert second.split()[-1].startswith("0/"), second


@pytest.mark.parametrize("as_user", [False, True], ids=["root", "user"])
def test_a_program_the_code_starts_cannot_trace_the_worker(as_user, tmp_path, request):
    """A program the code starts tries ptrace(PTRACE_ATTACH) on the worker, to stop it and rewrite
    its memory: the sandbox's syscall filter refuses it (EPERM), as root (this process's own
    user, graded officially in this process) and as a user (the same uid as the worker's)."""
    if as_user:
        run = request.getfixturevalue("as_a_user")
    else:
        _write(tmp_path / "tracer", "ex01_windows.py", TRACER)
        run = _grade("ex01", "--submission", str(tmp_path / "tracer"), CI="true")
    assert "the child said ATTACH -1 1" in run.stdout, run.stdout[-2000:]  # EPERM


# --------------------------------------------------------------------------- point 2: the channel

def test_a_frame_written_to_the_workers_channel_is_not_an_answer(tmp_path):
    """The submission finds the channel's descriptor and writes an answer of its own (in the
    shape a signed one once had), then leaves before the worker answers: what the judge reads is
    the worker's answer and is not plain data, the exercise scores 0 and says why.
    (tests/sandbox/test_forged_channel.py: well-formed frames score what their outputs earn.)"""
    import struct

    from grader.sandbox import plaincodec

    blob = b"A" + bytes(32) + plaincodec.encode({"ok": True, "value": False, "output": ""})
    frame = struct.pack("!Q", len(blob)) + blob
    folder = tmp_path / "forger"
    _write(folder, "ex11_estimate_loss.py", EX11_CHEAT.format(reach="import os", patch="", during=f"""for fd in range(3, 256):
            try:
                os.write(fd, {frame!r})
            except OSError:
                pass
        os._exit(0)"""))
    shutil.copy(KIT / "solutions" / "ex08_get_batch.py", folder / "ex08_get_batch.py")
    run = _grade("ex11", "--submission", str(folder), "--format", "json")
    data = json.loads(run.stdout)
    exercise = data["exercises"][0]
    assert exercise["score"] == 0, exercise
    assert all("ended unexpectedly" in c["message"] for c in exercise["checks"]), exercise["checks"][0]
