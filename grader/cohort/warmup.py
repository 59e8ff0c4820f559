"""Before the first student: the slow reference answers, computed once for every judge.

Some reference answers take seconds (ex12's trainings), and so does each known mistake's
answer to the same call (the training with one thing changed). Left to the judges, every
judge computed the reference's at its first student, all at the same time, and a mistake's
at the first student who made it: the grader's own time, spent inside a run whose printed
bound counts the students' time (`grader.cohort.batch.time_bound`): a full-course submission
that sleeps under every limit would run past the bound printed.

So before it prints that bound and forks its judges, `grade batch` runs each graded
exercise's checks once in its own process with the reference as the student (each call is
computed once, and the judges forked afterwards inherit every answer, the fast ones too,
instead of each computing them at its first student), then every known mistake's answer to
each call that was slow, split over `jobs` child processes. The slow answers go to OUT/cache's
answer store (`grader.judge.references.AnswerStore`), where the judges read them, and a marker
per exercise says it is done, so a resumed run, or the next one on OUT, skips it. Nothing of a
student's is read here, and nothing here decides a point: an answer that is missing is
computed by the judge that needs it, as before.

    >>> references = LiveReferences(course, cache_dir=out / "cache", fingerprint=answers_fp)
    >>> warm_references(course, ["ex11", "ex12"], references, corpus, jobs=2)
    ['ex11', 'ex12']                 # cold before; on the same OUT the next run's call returns []
"""

from __future__ import annotations

import os
import signal
import sys

from grader.model.course import Course


def warm_references(course: Course, ids: list[str], references, corpus, jobs: int = 1) -> list[str]:
    """Compute, in `references` (a `LiveReferences` with a disk store), what the judges would
    compute slowly; the exercises it did (none if all were done before on this store).

    `corpus` is `resolve_corpus(course)`'s value, given to the checks as the judges get it.
    """
    store = references.store()
    if store is None or not course.solutions_dir.is_dir():
        return []  # nothing kept on disk, or a release (its answers are recorded)
    cold = [e for e in ids if not store.is_warm(e)]
    if not cold:
        return []
    try:
        slow = _reference_pass(course, cold, references, corpus)
    except Exception as err:  # noqa: BLE001 - the judges compute the answers as they meet them
        print(f"grade batch: computing the reference answers ahead failed: {type(err).__name__}: {err}",
              file=sys.stderr)
        return []
    units = [(exercise_id, mistake, a_call) for exercise_id, a_call in slow
             for mistake in references(exercise_id).mistakes]
    shares = [units[n::jobs] for n in range(jobs) if units[n::jobs]]  # jobs >= 1 (grade batch -j)
    children = [_Child(lambda share=share: _mistakes_pass(references, share)) for share in shares]  # side by side
    if all(child.succeeded() for child in children):
        for exercise_id in cold:
            store.mark_warm(exercise_id)
    return cold


def _reference_pass(course: Course, ids: list[str], references, corpus) -> list:
    """Every check of `ids`, the reference as the student: [(exercise id, slow call)]."""
    from grader.run.session import GradingSession, run_checks
    from grader.run.startup import corpus_provider

    interrupted = []

    def on_interrupt(signum, frame):  # pytest takes Ctrl-C as "stop the session" and returns
        interrupted.append(signum)
        if callable(previous):  # `grade`'s own (grader.commands.main): it remembers Ctrl-C, for exit 130
            previous(signum, frame)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_interrupt)
    try:
        run_checks(GradingSession(course, ids, references=references, in_process={e: references(e) for e in ids},
                                  corpus=corpus_provider(course, resolved=corpus)))
    finally:
        signal.signal(signal.SIGINT, previous)
    if interrupted:
        raise KeyboardInterrupt  # the batch stops, as Ctrl-C anywhere else in it does
    return [(e, a_call) for e in ids for a_call in references(e).slow_calls]


def _mistakes_pass(references, units: list) -> None:
    """Each known mistake's answer to a slow call, into the store (`observe_mistake` keeps it)."""
    for exercise_id, mistake, a_call in units:
        references(exercise_id).observe_mistake(mistake, a_call)


class _Child:
    """A forked process doing `work()` (it dies with this one); `succeeded()` waits for it."""

    def __init__(self, work):
        from grader.cohort.children import die_with_parent, fork_holding_ctrl_c, release_ctrl_c

        sys.stdout.flush()
        sys.stderr.flush()
        parent = os.getpid()
        self.pid = fork_holding_ctrl_c()
        if self.pid == 0:
            code = 1
            try:
                # Ctrl-C is the batch's to act on (it stops, and this child dies with it): not a
                # failure of this child's to report
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                release_ctrl_c()
                die_with_parent(parent)
                work()
                code = 0
            except BaseException as err:  # noqa: BLE001 - the judges compute it instead
                try:
                    os.write(2, f"grade batch: computing the reference answers ahead failed: "
                                f"{type(err).__name__}: {err}\n".encode())
                except OSError:
                    pass
            finally:
                os._exit(code)

    def succeeded(self) -> bool:
        _, status = os.waitpid(self.pid, 0)
        return os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
