"""Benchmark: the least any `grade batch` with a process per exercise could cost on chapter 5.

    python bench/bench_floor.py [-n 40] [-r 5] [--batch] [--starts]

Issue 11 asks for a whole run of 40 chapter-5 submissions in at most 0.08 x a bare
`python -c "import torch"` per submission. This script measures, side by side in one run,
what the checks themselves cost with every piece of the sandbox taken away, and so the
lowest whole-run ratio that any design grading each exercise in a process of its own could
reach on this machine:

1. `bare`: `python -c "import torch"`, the median of R runs.
2. `workers`: the calls the checks make of a submission (the reference's answers, recorded
   once), replayed for each exercise in a child forked from a process that holds torch and
   every probe, its heap mapped as huge pages, as the batch's zygote does. The child imports
   the exercise file and makes the calls; there is no fence, no guard, no socket, no codec,
   no time limit. The CPU of the fork, the child and its exit, summed over the exercises:
   the median of R rounds.
3. `sandboxed`: the same calls through the real sandbox (`grade batch`'s zygote and fence, a
   worker per exercise, signed answers), without pytest: what the isolation itself adds;
   then again with the fence off (what the fence's part is), and the cost of one more call
   of a worker already started (what the per-call exchange is).
4. `empty`: layer 2 with no calls (fork, import the exercise file, exit): `workers` less this
   is the checks' own work, the part that checks doing less would save.
   With `--starts`, layers 2 and 3 again with each exercise's first call only: what a worker's
   start and end cost in the sandbox against a plain child, apart from its calls.
5. `judge`: the judge's own part with the submission's calls made in-process: pytest's
   protocol per check and the comparisons with cached reference answers (the checks run
   warm in one process, minus the same calls replayed there alone). No report is written.

floor = (bare + N x (workers + judge) / cores) / (N x bare): one torch import for the whole
run (any batch starts an interpreter and imports torch), every core always busy, nothing
else. With `--batch` the real `grade batch` on 1 and on N copies is timed in the same run:
its whole-run ratio, and the CPU of every process it started per further submission, beside
the floor; and what 0.08 leaves for a further submission, (0.08 x N x bare - T(1)) x cores /
(N - 1) of CPU, beside the real figure with and without the checks' own work.
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
ASSIGNMENT = "ch05"  # ex01-ex05, the files bench_batch copies


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def record_calls(course, ids: list[str], rounds: int) -> tuple[dict[str, list[tuple[dict, bool]]], float]:
    """In a child (this process stays cold): run each exercise's checks with the reference as the
    submission, in-process. Returns, per exercise, the requests the checks sent to the submission
    (each with whether its answer was a value rather than an exception), and the judge's own CPU
    per submission (the warm checks minus the same calls alone)."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        try:
            payload = pickle.dumps(_record_in_child(course, ids, rounds))
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
        except BaseException as err:  # noqa: BLE001  said here; the parent sees no payload
            print(f"recording the checks' calls failed: {err}", file=sys.stderr)
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as source:
        payload = source.read()
    os.waitpid(pid, 0)
    if not payload:
        raise SystemExit("no calls were recorded")
    return pickle.loads(payload)


def _record_in_child(course, ids: list[str], rounds: int):
    import pytest

    from grader.judge.references import LiveReferences, load_module_from
    from grader.run.markers import exercise_of
    from grader.run.plugin import GradingPlugin
    from grader.run.session import GradingSession, pytest_args
    from grader.run.startup import corpus_provider
    from grader.sandbox.worker import run_request

    modules = {e: load_module_from(course.solutions_dir, course.exercise(e).module, as_name=f"bench_{e}") for e in ids}
    calls: dict[str, list[tuple[dict, bool]]] = {e: [] for e in ids}
    references = LiveReferences(course, use_disk=False)
    corpus = corpus_provider(course)

    def new_session() -> GradingSession:
        return GradingSession(course, ids, references=references, in_process=modules, corpus=corpus)

    plugin = GradingPlugin(new_session())
    judge: list[float] = []

    class Rounds:
        """Like the batch's judge (grader.cohort.judges): the collected checks, once per student."""

        recording = True

        @pytest.hookimpl(wrapper=True)
        def pytest_runtest_call(self, item):
            """What the check asked the student, as its `student` fixture kept it (StudentView.seen)."""
            try:
                return (yield)
            finally:
                view = plugin._views.get(item.nodeid)
                if self.recording and view is not None:
                    calls[exercise_of(item)] += [(seen.call.request(), seen.got.ok) for seen in view.seen]

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtestloop(self, session):
            items = list(session.items)

            def checks_once() -> None:
                plugin.session, plugin.results, plugin._views = new_session(), {}, {}
                for i, item in enumerate(items):
                    item.ihook.pytest_runtest_protocol(item=item, nextitem=items[i + 1] if i + 1 < len(items) else None)
                failed = [c.name for found in plugin.results.values() for c in found if not c.passed]
                if failed:
                    raise SystemExit(f"the reference fails: {failed}")

            checks_once()  # records the calls (below) and fills the reference's answers
            self.recording = False
            checks_once()  # warm
            for _ in range(rounds):
                start = own_cpu()
                checks_once()
                middle = own_cpu()
                for e in ids:
                    for request, _ in calls[e]:
                        run_request(request, lambda e=e: modules[e])
                judge.append((middle - start) - (own_cpu() - middle))
            return True

    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    pytest.main(pytest_args(course, ids), plugins=[plugin, Rounds()])
    if not judge:
        raise SystemExit("the checks did not run")
    return calls, statistics.median(judge)


def children_faults() -> int:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt


def replay_cold(course, calls: dict[str, list[tuple[dict, bool]]], faults: list | None = None) -> float:
    """The CPU of one submission's exercises, each in a fresh child of this process: fork, import
    the exercise file, make its calls, exit. `faults` gets each child's minor page faults (the
    pages it copied from this process)."""
    from grader.judge.references import load_module_from
    from grader.sandbox.worker import run_request

    total = 0.0
    for e, requests in calls.items():
        before_children, before_own, before_faults = children_cpu(), own_cpu(), children_faults()
        pid = os.fork()
        if pid == 0:
            same = False
            try:
                module = load_module_from(course.solutions_dir, course.exercise(e).module)
                same = all(run_request(request, lambda: module)["ok"] == ok for request, ok in requests)
            finally:
                os._exit(0 if same else 1)  # 1: an answer that is not what the checks saw
        _, status = os.waitpid(pid, 0)
        if status != 0:
            raise SystemExit(f"replaying {e} failed in the child")
        total += (children_cpu() - before_children) + (own_cpu() - before_own)
        if faults is not None:
            faults.append(children_faults() - before_faults)
    return total


def sandboxed(course, calls: dict[str, list[tuple[dict, bool]]], rounds: int, fence: bool = True) -> dict:
    """The same calls through the real sandbox, as `grade batch` makes them but without pytest: a
    zygote with huge pages and the batch's fence (or none, `fence=False`), a worker per exercise
    (guard, sockets, signed answers). Returns the CPU per submission of the zygote and its workers
    ("workers") and of this process's side of the exchange ("exchange"), and the CPU of one more
    call of a worker already started, both sides ("per_call", the first exercise's first call
    made again and again)."""
    from grader.run.startup import start_zygote
    from grader.sandbox import Worker

    tick = os.sysconf("SC_CLK_TCK")
    zygote = start_zygote(course, huge_pages=True)
    if not fence:
        zygote.fence["enabled"] = False

    def zygote_stat() -> tuple[float, int]:
        """CPU (utime, stime, cutime, cstime) and minor page faults (minflt, cminflt) of the
        zygote and its reaped workers: the faults are pages a worker copied from the zygote."""
        with open(f"/proc/{zygote.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / tick, int(fields[7]) + int(fields[8])

    def worker_of(e: str):
        return Worker(zygote, str(course.solutions_dir), course.exercise(e).module)

    def one_submission() -> None:
        for e, requests in calls.items():
            worker = worker_of(e)
            for request, ok in requests:
                if worker.run(request, 60.0)["ok"] != ok:
                    raise SystemExit(f"{e}: the worker did not answer as the reference did in-process")
            worker.kill()

    def measured(work) -> tuple[float, float, int]:
        """CPU of the zygote and its workers, of this process, and the zygote's and its workers'
        page faults, while `work()` runs."""
        time.sleep(0.5)
        (before_zygote, before_faults), before_own = zygote_stat(), own_cpu()
        work()
        own = own_cpu() - before_own
        time.sleep(1.0)  # the last workers reaped: their CPU is counted in the zygote's
        after_zygote, after_faults = zygote_stat()
        return after_zygote - before_zygote, own, after_faults - before_faults

    try:
        one_submission()  # the zygote's first workers pay for its start (and it collapses its heap)
        time.sleep(2.0)
        workers, exchange, faults = measured(lambda: [one_submission() for _ in range(rounds)])
        first = next(iter(calls))
        request, repeats = calls[first][0][0], 200 * rounds
        worker = worker_of(first)
        worker.run(request, 60.0)
        in_worker, in_judge, _ = measured(lambda: [worker.run(request, 60.0) for _ in range(repeats)])
        worker.kill()
        return {"workers": workers / rounds, "exchange": exchange / rounds,
                "per_call": (in_worker + in_judge) / repeats, "faults": faults / rounds / len(calls)}
    finally:
        zygote.close()


def starts_apart(course, calls: dict[str, list[tuple[dict, bool]]], plain: float, sandboxed_all: float,
                 rounds: int) -> str:
    """The sandbox's extra CPU over plain children, split into a worker's start and end and its
    calls: both replayed again with each exercise's first call only (`plain` and `sandboxed_all`
    are the full replays' CPU per submission)."""
    first = {e: requests[:1] for e, requests in calls.items()}
    plain_first = statistics.median(replay_cold(course, first) for _ in range(rounds))
    sandboxed_first = sandboxed(course, first, 4 * rounds)["workers"]
    per_worker = (sandboxed_first - plain_first) / len(calls)
    others = sum(map(len, calls.values())) - len(calls)
    per_call = ((sandboxed_all - plain) - (sandboxed_first - plain_first)) / others
    return (f"each exercise's first call only: plain children {plain_first * 1000:.0f} ms, the sandbox's workers "
            f"{sandboxed_first * 1000:.0f} ms CPU per submission: {per_worker * 1000:.0f} ms more a worker to start "
            f"and end; the other {others} calls {per_call * 1000:.2f} ms more each, cold")


def bare_imports(rounds: int) -> list[float]:
    from bench_batch import timed

    return [timed([PY, "-c", "import torch"]) for _ in range(rounds)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=40, help="submissions the ratio is for (default 40)")
    parser.add_argument("-r", type=int, default=5, help="rounds of each measurement (default 5)")
    parser.add_argument("--batch", action="store_true", help="also time the real grade batch on N copies")
    parser.add_argument("--starts", action="store_true",
                        help="also the plain and the sandboxed children with each exercise's first call only")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    sys.dont_write_bytecode = True

    import torch

    torch.set_num_threads(1)
    from grader.model.course import load_course
    from grader.probes import import_all
    from grader.sandbox.hugepages import collapse_heap

    course = load_course()
    ids = [ex.id for ex in course.of_assignment(ASSIGNMENT)]
    import_all()
    calls, judge = record_calls(course, ids, args.r)
    gc.freeze()
    collapse_heap()  # as the batch's zygote: cheaper forks (a no-op where the kernel cannot)
    replay_cold(course, calls)  # the first round pays for loading the solutions' pages
    floor_faults: list[int] = []
    workers = statistics.median(replay_cold(course, calls, floor_faults) for _ in range(args.r))
    empty = statistics.median(replay_cold(course, {e: [] for e in calls}) for _ in range(args.r))
    fenced = sandboxed(course, calls, 4 * args.r)
    unfenced = sandboxed(course, calls, 4 * args.r, fence=False)
    bare = statistics.median(bare_imports(args.r))
    cores = os.cpu_count() or 1
    n = args.n
    floor = (bare + n * (workers + judge) / cores) / (n * bare)
    print(f"machine: {cores} CPUs, load average {os.getloadavg()[0]:.2f}; torch threads 1")
    print(f"{ASSIGNMENT}: {len(ids)} exercises, {sum(map(len, calls.values()))} calls to the submission")
    print(f"bare `python -c 'import torch'`: {bare:.3f} s (median of {args.r})")
    print(f"workers, no sandbox (fork, import, calls, exit; cold): {workers * 1000:.0f} ms CPU per submission; "
          f"{statistics.median(floor_faults):.0f} page faults per child")
    print(f"the same children with no calls (fork, import, exit): {empty * 1000:.0f} ms CPU per submission; "
          f"the checks' own work: {(workers - empty) * 1000:.0f} ms")
    print(f"judge, no worker (pytest protocol, comparisons): {judge * 1000:.0f} ms CPU per submission")
    for name, found in (("the same calls in the real sandbox", fenced), ("the same, the fence off", unfenced)):
        print(f"{name} (zygote, guard, sockets; no pytest): workers {found['workers'] * 1000:.0f} ms, the "
              f"judge's side of the exchange {found['exchange'] * 1000:.0f} ms CPU per submission; one more "
              f"call of a started worker {found['per_call'] * 1e6:.0f} µs, both sides; "
              f"{found['faults']:.0f} page faults per worker, the zygote's side of each fork included")
    if args.starts:
        print(starts_apart(course, calls, workers, fenced["workers"], args.r))
    print(f"floor, whole run of {n}: ({bare:.2f} + {n} x {(workers + judge) * 1000:.0f} ms / {cores}) / "
          f"({n} x {bare:.2f}) = {floor:.3f}  (issue 11's target <= 0.08)")
    if args.batch:
        from bench_batch import bench_batch

        runs = {}
        for count in (1, n):
            before = children_cpu()
            runs[count] = (bench_batch(count, cores, ASSIGNMENT, "ex0[1-5]_*.py", None), children_cpu() - before)
        (one, one_cpu), (seconds, cpu) = runs[1], runs[n]
        further = (cpu - one_cpu) / (n - 1)
        allowed = (0.08 * n * bare - one) * cores / (n - 1)
        print(f"grade batch, 1 submission: {one:.2f} s; {n} submissions: {seconds:.2f} s, "
              f"{further * 1000:.0f} ms CPU per further submission; "
              f"ratio, whole run: {seconds / (n * bare):.3f}")
        print(f"0.08 leaves a further submission {allowed * 1000:.0f} ms of CPU ((0.08 x {n} x {bare:.2f} - "
              f"{one:.2f}) x {cores} / {n - 1}); the real batch takes {further * 1000:.0f} ms, "
              f"{(further - (workers - empty)) * 1000:.0f} ms of it besides the checks' own work")


if __name__ == "__main__":
    main()
