"""The zygote's heap as huge pages (grader.sandbox.hugepages): which regions, and that it happens.

`grade batch` asks its zygote for it: each fork then copies a page-table entry per 2 MiB of
torch's heap instead of 512. The zygote collapses a few MiB at a time while no request waits
(`Collapser`), so its first workers do not wait; workers forked before, during and after it
grade as before.
"""

from __future__ import annotations

import doctest
import os
import sys
import time
from pathlib import Path

import pytest

import grader.sandbox.hugepages as hugepages
from grader.sandbox import ForkZygote, Worker

MIB = 1 << 20


def test_the_docstring_example_holds():
    outcome = doctest.testmod(hugepages)
    assert outcome.attempted > 0 and outcome.failed == 0, outcome


def test_only_private_writable_anonymous_memory_is_chosen_and_aligned_inward():
    maps = "\n".join([
        "7f0000000000-7f0000a00000 rw-p 00000000 00:00 0 ",                          # 10 MiB, anonymous
        "7f0000a00000-7f0000b00000 rw-p 00000000 00:00 0 ",                          # 1 MiB: no whole huge page
        "7f1000100000-7f1000500000 rw-p 00000000 00:00 0 ",                          # unaligned: 2 MiB inside
        "7f2000000000-7f2000400000 rw-s 00000000 00:05 77 /dev/zero (deleted)",      # shared
        "7f3000000000-7f3000400000 rw-p 00001000 08:01 42 /usr/lib/libtorch_cpu.so",  # file-backed
        "7f4000000000-7f4000400000 r--p 00000000 00:00 0 ",                          # read-only
        "7ffd00000000-7ffd00400000 rw-p 00000000 00:00 0    [stack]",
        "01000000-01400000 rw-p 00000000 00:00 0    [heap]",
        "garbage",
    ])
    assert hugepages.collapsible(maps) == [
        (0x7F0000000000, 0x7F0000A00000),
        (0x7F1000200000, 0x7F1000400000),
        (0x01000000, 0x01400000),
    ]


def _anon_huge_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        if line.startswith("AnonHugePages:"):
            return int(line.split()[1])
    return 0


def _collapse_available() -> bool:
    if not sys.platform.startswith("linux") or not Path("/proc/self/smaps_rollup").exists():
        return False
    enabled = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if not enabled.exists() or "[never]" in enabled.read_text():
        return False
    major, minor = (int(x) for x in os.uname().release.split(".")[:2])
    return (major, minor) >= (6, 1)  # MADV_COLLAPSE


@pytest.mark.skipif(not _collapse_available(), reason="needs Linux 6.1+ (MADV_COLLAPSE) with transparent huge pages")
def test_a_batchs_zygote_maps_its_heap_as_huge_pages_and_its_workers_still_grade(tmp_path):
    (tmp_path / "ex99_demo.py").write_text("def add(a, b):\n    return a + b\n", encoding="utf-8")
    measured = {}
    for huge in (False, True):
        zygote = ForkZygote(huge_pages=huge).start()
        try:
            worker = Worker(zygote, str(tmp_path), "ex99_demo")
            # the first worker does not wait for the collapse (it goes on between requests)
            answer = worker.run({"probe": "common.call_function", "args": ("add", (2, 3), {})}, 60)
            assert answer["ok"] and answer["value"] == 5, answer
            worker.kill()
            deadline = time.monotonic() + (20 if huge else 0.5)  # the idle zygote collapses on
            while True:  # (khugepaged may collapse a little on its own: the difference is ours)
                time.sleep(0.1)
                measured[huge] = _anon_huge_kib(zygote.pid)
                if measured[huge] >= 80 * 1024 or time.monotonic() > deadline:
                    break
            if huge:  # and a worker forked from the collapsed heap grades as well
                again = Worker(zygote, str(tmp_path), "ex99_demo").run(
                    {"probe": "common.call_function", "args": ("add", (20, 22), {})}, 60)
                assert again["ok"] and again["value"] == 42, again
        finally:
            zygote.close()
    # torch's heap is about 145 MB; the collapse maps most of it (80 MB or more measured).
    assert measured[True] >= 32 * 1024, measured
    assert measured[True] >= measured[False] + 16 * 1024, measured


def test_the_collapse_goes_in_steps_that_cover_each_span_once():
    collapser = hugepages.Collapser(chunk=3 * MIB)  # rounded down to whole huge pages: 2 MiB
    if not collapser.pending():
        pytest.skip("nothing to collapse here (not Linux, or no anonymous memory found)")
    chunks = list(reversed(collapser._chunks))
    assert all((end - start) % hugepages.HUGE_PAGE == 0 and 0 < end - start <= 2 * MIB for start, end in chunks)
    assert all(a[1] <= b[0] for a, b in zip(chunks, chunks[1:]))  # in address order, none twice
    steps = 0
    while collapser.pending():
        assert collapser.step() in (0, 2 * MIB)
        steps += 1
    assert steps == len(chunks) and collapser.step() == 0  # nothing left: a no-op
