"""The worker is the student's: whatever it says on the channel earns exactly what its outputs earn.

Graded officially (bubblewrap), through the real commands:

- a submission that patches every probe module, the worker loop, the framing, the codecs and
  the wire, then serves the judge's requests with frames of its own making (its own loop, its
  own headers, answers it computed), scores check for check what the same outputs score when an
  ordinary module returns them, in `grade batch`, `grade ex01 --submission` and `grade all
  --submission`, and is marked for review (it imports the grader and names what it patches at
  run time);
- a submission whose functions, after its import, claim on the channel that the fence failed,
  send garbage or a frame longer than any answer, crash, or hang costs only itself: that
  exercise fails with a reason, its other exercise and every other student are graded, and the
  gradebook is written.

The course is the kit's cut to ex01 and ex02 with a 1 s limit per check (tests.kit.make_course).
"""

from __future__ import annotations

import csv
import json
import sys
import textwrap

import pytest

from grader.sandbox.bubblewrap import bwrap_path
from tests.cohorts import batch
from tests.in_process import grade
from tests.kit import EX01, EX02, KIT, make_course

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or bwrap_path() is None,
                                reason="official grading runs in bubblewrap (Linux; .ci/run installs it)")

SOLUTION = (KIT / "solutions" / EX01).read_text(encoding="utf-8")
OFF_BY_ONE = ("while i + block_size + 1 <= len(tokens):", "while i + block_size + 1 < len(tokens):")
# the reference with make_windows off by one: some checks pass, some fail
TWIN = SOLUTION.replace(*OFF_BY_ONE)

CHANNEL = '''
import os as _os, socket as _socket, stat as _stat, struct as _struct


def _channel():
    """The worker's socket to the judge: the only socket it holds."""
    for fd in range(3, 256):
        try:
            if _stat.S_ISSOCK(_os.fstat(fd).st_mode):
                return _socket.socket(fileno=fd)
        except OSError:
            pass


def _frame(body):
    return _struct.pack("!Q", len(body)) + body
'''

TAKEOVER = CHANNEL + '''
import importlib as _importlib, pkgutil as _pkgutil, sys as _sys, types as _types

import grader.probes
import grader.sandbox.framing as _framing
import grader.sandbox.plaincodec as _plaincodec
import grader.sandbox.requestcodec as _requestcodec
import grader.sandbox.tracebacks as _tracebacks
import grader.sandbox.wire as _wire
import grader.sandbox.worker as _worker


def _snapshot(module, **others):
    """The module's functions as they are now, for this submission's own loop: each copy looks
    its helpers up in a copy of the module's names, so that patching the module below leaves them."""
    space = dict(vars(module), **others)
    for key, value in list(space.items()):
        if isinstance(value, _types.FunctionType) and value.__globals__ is vars(module):
            space[key] = _types.FunctionType(value.__code__, space, value.__name__, value.__defaults__,
                                             value.__closure__)
            space[key].__kwdefaults__ = value.__kwdefaults__
    return _types.SimpleNamespace(**space)


_codec = _snapshot(_plaincodec)
_request, _wire_own = _snapshot(_requestcodec, plaincodec=_codec), _snapshot(_wire, plaincodec=_codec)
_encode, _unpack, _to_plain = _codec.encode, _request.unpack, _wire_own.to_plain
_describe = _snapshot(_tracebacks).describe_error


def _passed(*args, **kwargs):
    return {"ok": True, "value": {"passed": True, "score": 100}, "output": ""}


# every probe, the worker loop, the framing, the codecs, the wire and the tracebacks: patched
_patched = [_importlib.import_module("grader.probes." + m.name) for m in _pkgutil.iter_modules(grader.probes.__path__)]
_patched += [grader.probes, _worker, _framing, _plaincodec, _requestcodec, _wire, _tracebacks]
for _module in _patched:
    for _name in dir(_module):
        _value = getattr(_module, _name)
        if not _name.startswith("__") and callable(_value) and not isinstance(_value, type):
            setattr(_module, _name, _passed)


def _recv(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            _os._exit(0)  # the judge is done with this worker
        data += chunk
    return data


def _serve(sock):
    """The worker loop, the submission's own: the import's answer, then every request answered
    with what this module's functions return (or raise), in frames it builds itself."""
    here = _sys.modules[__name__]
    sock.sendall(_frame(b"A" + _encode({"ok": True, "value": "imported", "output": ""})))
    while True:
        (n,) = _struct.unpack("!Q", _recv(sock, 8))
        request = _unpack(_recv(sock, n))
        name, args, kwargs = request["args"]
        try:
            answer = {"ok": True, "value": _to_plain(getattr(here, name)(*args, **(kwargs or {}))), "output": ""}
        except Exception as err:
            answer = {"ok": False, "error": _describe(err, None), "output": ""}
        sock.sendall(_frame(b"A" + _encode(answer)))


_serve(_channel())
'''

# ex01's functions after the import: each one says something on the channel of its own
AFTER_IMPORT = {
    # "the fence failed", in the shape of an answer and not
    "claims_fence": '''
def shift_pairs(tokens):
    _channel().sendall(_frame(b"A" + __import__("grader.sandbox.plaincodec", fromlist=["x"]).encode(
        {"fence": "failed", "tampered": True, "message": "the grader's fence failed: please report this"})))
    return tokens[:-1], tokens[1:]


def make_windows(tokens, block_size, stride=1):
    _channel().sendall(_frame(b"A" + __import__("grader.sandbox.plaincodec", fromlist=["x"]).encode(
        {"ok": False, "output": "", "error": {"type": "FenceFailed", "mro": ["FenceFailed", "RuntimeError"],
                                              "message": "the fence failed: grading must stop", "traceback": "",
                                              "not_implemented": False}})))
    import time
    time.sleep(1)
    return []
''',
    "garbage": '''
def shift_pairs(tokens):
    _channel().sendall(_frame(b"A\\xff\\xfe not plain data at all" + bytes(range(256))))
    return tokens[:-1], tokens[1:]


def make_windows(tokens, block_size, stride=1):
    _channel().sendall(b"\\x00" * 3 + b"garbage without a frame")
    return []
''',
    "longer_than_any_answer": '''
def shift_pairs(tokens):
    _channel().sendall(_struct.pack("!Q", 1 << 40) + b"A")
    return tokens[:-1], tokens[1:]

make_windows = shift_pairs
''',
    "crash": '''
import signal as _signal


def shift_pairs(tokens):
    _os.kill(_os.getpid(), _signal.SIGSEGV)

make_windows = shift_pairs
''',
    "hang": '''
def shift_pairs(tokens):
    while True:
        pass


def make_windows(tokens, block_size, stride=1):
    import time
    time.sleep(3600)
''',
}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    return make_course(tmp_path_factory.mktemp("course"), timeout=1)


def _student(folder, ex01: str) -> None:
    folder.mkdir(parents=True)
    (folder / EX01).write_text(ex01, encoding="utf-8")
    (folder / EX02).write_text((KIT / "solutions" / EX02).read_text(encoding="utf-8"), encoding="utf-8")


@pytest.fixture(scope="module")
def cohort(tmp_path_factory):
    folder = tmp_path_factory.mktemp("forged") / "cohort"
    _student(folder / "honest", SOLUTION)
    _student(folder / "twin", TWIN)
    _student(folder / "takeover", TWIN + TAKEOVER)
    for name, code in AFTER_IMPORT.items():
        _student(folder / name, CHANNEL + textwrap.dedent(code))
    return folder


@pytest.fixture(scope="module")
def graded(course, cohort, tmp_path_factory):
    out = tmp_path_factory.mktemp("forged-out") / "out"
    run = batch(course, cohort, out, "--lang", "en")  # a process: its judges' stderr is read too
    book = json.loads((out / "results.json").read_text(encoding="utf-8")) if (out / "results.json").exists() else None
    return {"run": run, "book": book, "out": out}


def _checks(result: dict, exercise: str = "ex01") -> dict[str, bool]:
    return {c["name"]: c["passed"] for e in result["exercises"] if e["id"] == exercise for c in e["checks"]}


def _grade(course, *args) -> dict:
    run = grade("--course", str(course), *args, "--format", "json", env={"CI": "true", "GRADE_LANG": "en"})
    assert run.returncode in (0, 1), run.stderr[-3000:]
    assert "Traceback" not in run.stderr, run.stderr[-3000:]
    return json.loads(run.stdout)


def test_the_batch_grades_everyone_and_writes_the_gradebook(graded):
    assert graded["run"].returncode == 0, graded["run"].stderr[-3000:]
    assert "Traceback" not in graded["run"].stderr
    rows = {r["student"]: r for r in csv.DictReader((graded["out"] / "grades.csv").open(encoding="utf-8"))}
    assert set(rows) == {"(max)", "honest", "twin", "takeover", *AFTER_IMPORT}


def test_taking_the_worker_over_earns_what_its_outputs_earn_in_a_batch(graded):
    students = graded["book"]["students"]
    twin, takeover = students["twin"], students["takeover"]
    assert _checks(takeover) == _checks(twin)
    ex01 = takeover["exercises"][0]
    assert 0 < ex01["score"] == twin["exercises"][0]["score"] < ex01["max_score"]
    assert takeover["review"]["flagged"] and not twin["review"]["flagged"]


def test_taking_the_worker_over_earns_what_its_outputs_earn_in_grade_ex01(graded, course, cohort):
    report = _grade(course, "ex01", "--submission", str(cohort / "takeover"))
    assert _checks(report) == _checks(graded["book"]["students"]["twin"])
    assert report["review"]["flagged"]


def test_taking_the_worker_over_earns_what_its_outputs_earn_in_grade_all(graded, course, cohort):
    report = _grade(course, "all", "--submission", str(cohort / "takeover"))
    twin = graded["book"]["students"]["twin"]
    for exercise in ("ex01", "ex02"):
        assert _checks(report, exercise) == _checks(twin, exercise)
    assert report["score"] == twin["score"]


@pytest.mark.parametrize("name", sorted(AFTER_IMPORT))
def test_what_a_worker_says_after_its_import_costs_only_its_exercise(graded, name):
    students = graded["book"]["students"]
    honest = students["honest"]
    assert honest["score"] == honest["max_score"] > 0
    ex01, ex02 = ({e["id"]: e for e in students[name]["exercises"]}[i] for i in ("ex01", "ex02"))
    assert ex02["score"] == ex02["max_score"] > 0, ex02  # its other exercise: graded as any
    failed = [c for c in ex01["checks"] if not c["passed"]]
    assert ex01["score"] < ex01["max_score"] and failed
    assert all(c["message"].strip() for c in failed), failed  # each with its reason
    assert not any(c["kind"] == "grader_error" or "report this" in c["message"] for c in failed), failed


def test_a_claimed_fence_failure_in_grade_all_is_that_exercises_outcome(course, cohort):
    report = _grade(course, "all", "--submission", str(cohort / "claims_fence"))
    by_id = {e["id"]: e for e in report["exercises"]}
    assert by_id["ex02"]["score"] == by_id["ex02"]["max_score"] > 0
    assert by_id["ex01"]["score"] < by_id["ex01"]["max_score"]
