"""A spawned worker's whole process tree, ended at once, on every OS.

A worker started as a fresh interpreter (`grader.sandbox.pool`) may start processes of its
own (a student's `subprocess`, `multiprocessing`, `os.fork` where there is one). When its
time is up the judge ends all of them, not just the worker:

| OS           | how the tree is held                              | how it is ended                      |
| ------------ | ------------------------------------------------- | ------------------------------------ |
| Linux, macOS | a new session (`start_new_session`): the worker leads its own process group | SIGKILL to the group |
| Windows      | a Job Object (the worker and every process it starts; no breakaway), with the job's memory, CPU-time and process-count limits | `TerminateJobObject`; `taskkill /T /F` if no job could be made |

    tree = for_this_os()
    proc = subprocess.Popen(cmd, **tree.popen_options())
    tree.adopt(proc)                       # Windows: into the job, before it runs student code
    tree.limit(memory=6 << 30, cpu=900, processes=64)   # Windows: the job's limits
    tree.kill()                            # the worker and everything it started

Only the Windows class touches `ctypes.WinDLL`, and only when it is used (on Windows).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess


class PosixTree:
    """Linux and macOS: the worker leads a new session; its group is killed as one."""

    def __init__(self):
        self.proc: subprocess.Popen | None = None

    def popen_options(self) -> dict:
        return {"start_new_session": True}  # setsid() in the child, done by subprocess

    def adopt(self, proc: subprocess.Popen) -> None:
        self.proc = proc

    def limit(self, *, memory=None, cpu=None, processes=None) -> None:
        """Nothing from outside: the worker sets its own rlimits once it has its setup."""

    def kill(self) -> None:
        if self.proc is None:
            return
        sig = getattr(signal, "SIGKILL", signal.SIGTERM)
        killpg = getattr(os, "killpg", None)
        try:  # the group: the worker and whatever it started that stayed in it
            killpg(self.proc.pid, sig) if killpg else os.kill(-self.proc.pid, sig)
        except OSError:  # ProcessLookupError: all gone already; PermissionError: not ours
            pass
        try:
            self.proc.send_signal(sig)  # the leader, unless it has been reaped (no stray pid reused)
        except OSError:
            pass
        self.proc = None


# ------------------------------------------------------------------ Windows: a Job Object

JOB_OBJECT_LIMIT_ACTIVE_PROCESS = 0x00000008
JOB_OBJECT_LIMIT_JOB_TIME = 0x00000004
JOB_OBJECT_LIMIT_JOB_MEMORY = 0x00000200
JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION = 0x00000400
JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE = 0x00002000
JobObjectExtendedLimitInformation = 9
CREATE_NEW_PROCESS_GROUP = 0x00000200


class JobBasicLimits(ctypes.Structure):
    """JOBOBJECT_BASIC_LIMIT_INFORMATION (fixed-width fields: the same layout read from any OS)."""

    _fields_ = [("PerProcessUserTimeLimit", ctypes.c_int64), ("PerJobUserTimeLimit", ctypes.c_int64),
                ("LimitFlags", ctypes.c_uint32), ("MinimumWorkingSetSize", ctypes.c_size_t),
                ("MaximumWorkingSetSize", ctypes.c_size_t), ("ActiveProcessLimit", ctypes.c_uint32),
                ("Affinity", ctypes.c_size_t), ("PriorityClass", ctypes.c_uint32),
                ("SchedulingClass", ctypes.c_uint32)]


class IoCounters(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in ("ReadOperationCount", "WriteOperationCount",
                                                      "OtherOperationCount", "ReadTransferCount",
                                                      "WriteTransferCount", "OtherTransferCount")]


class JobExtendedLimits(ctypes.Structure):
    """JOBOBJECT_EXTENDED_LIMIT_INFORMATION: 144 bytes on 64-bit Windows."""

    _fields_ = [("BasicLimitInformation", JobBasicLimits), ("IoInfo", IoCounters),
                ("ProcessMemoryLimit", ctypes.c_size_t), ("JobMemoryLimit", ctypes.c_size_t),
                ("PeakProcessMemoryUsed", ctypes.c_size_t), ("PeakJobMemoryUsed", ctypes.c_size_t)]


def job_limits(*, memory=None, cpu=None, processes=None) -> JobExtendedLimits:
    """The limits a worker's job holds: always killed with the job; memory (bytes, the whole
    tree), CPU time (seconds, the whole tree) and the number of processes when given.

    >>> info = job_limits(memory=1 << 30, processes=8)
    >>> hex(info.BasicLimitInformation.LimitFlags), info.JobMemoryLimit
    ('0x2608', 1073741824)
    """
    info = JobExtendedLimits()
    flags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION
    if memory:
        flags |= JOB_OBJECT_LIMIT_JOB_MEMORY
        info.JobMemoryLimit = int(memory)
    if cpu:
        flags |= JOB_OBJECT_LIMIT_JOB_TIME
        info.BasicLimitInformation.PerJobUserTimeLimit = int(cpu * 10_000_000)  # in 100 ns ticks
    if processes:
        flags |= JOB_OBJECT_LIMIT_ACTIVE_PROCESS
        info.BasicLimitInformation.ActiveProcessLimit = int(processes)
    info.BasicLimitInformation.LimitFlags = flags
    return info


class WindowsTree:
    """Windows: the worker in a Job Object of its own; `taskkill /T` when no job can be made."""

    def __init__(self):
        self.pid: int | None = None
        self.job = None
        self._kernel32 = None

    def popen_options(self) -> dict:
        # Ctrl-C in the terminal is the judge's to handle (the POSIX worker is in a session of its own)
        return {"creationflags": CREATE_NEW_PROCESS_GROUP}

    def adopt(self, proc: subprocess.Popen) -> None:
        self.pid = proc.pid
        try:
            kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
            kernel32.CreateJobObjectW.restype = ctypes.c_void_p
            kernel32.CreateJobObjectW.argtypes = [ctypes.c_void_p, ctypes.c_wchar_p]
            kernel32.AssignProcessToJobObject.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
            kernel32.SetInformationJobObject.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
                                                         ctypes.c_uint32]
            kernel32.TerminateJobObject.argtypes = [ctypes.c_void_p, ctypes.c_uint]
            kernel32.CloseHandle.argtypes = [ctypes.c_void_p]
            job = kernel32.CreateJobObjectW(None, None)
            if not job:
                return
            self._kernel32, self.job = kernel32, job
            self.limit()
            if not kernel32.AssignProcessToJobObject(job, int(proc._handle)):
                kernel32.CloseHandle(job)
                self.job = None
        except (AttributeError, OSError):  # no job: taskkill /T ends the tree instead
            self.job = None

    def limit(self, *, memory=None, cpu=None, processes=None) -> None:
        if self.job is not None:
            info = job_limits(memory=memory, cpu=cpu, processes=processes)
            self._kernel32.SetInformationJobObject(self.job, JobObjectExtendedLimitInformation,
                                                   ctypes.byref(info), ctypes.sizeof(info))

    def kill(self) -> None:
        if self.job is not None:
            self._kernel32.TerminateJobObject(self.job, 1)
            self._kernel32.CloseHandle(self.job)  # KILL_ON_JOB_CLOSE: anything left dies with it
            self.job = None
        elif self.pid is not None:
            subprocess.run(["taskkill", "/T", "/F", "/PID", str(self.pid)], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False)
        self.pid = None


def for_this_os():
    """A fresh tree holder for one worker: WindowsTree on Windows, PosixTree elsewhere."""
    return WindowsTree() if os.name == "nt" else PosixTree()
