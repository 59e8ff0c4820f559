"""Whose code is running, and the one way to a frame that no audit event covers.

The guard (grader.sandbox.guard) refuses frames, the object graph and the like when the
submission asks for them. Two things it needs are here:

- **whose code a frame runs**: code from the interpreter's, the libraries' or the grader's
  folders (`trusted_code_dirs`) is theirs; anything else is the submission's: its files, a
  module it wrote to its working folder, code it compiled from a string;
- **signal handlers without frames** (`frameless_signals`): a Python signal handler is
  called with the frame that was running, which no audit event covers.
"""

from __future__ import annotations

import os
import sys


def trusted_code_dirs() -> tuple[str, ...]:
    """Where the interpreter's, the libraries' and the grader's code lives (a fenced worker
    cannot write there): the folders of the standard library, site-packages and the grader."""
    import sysconfig

    found = set()
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            found.add(paths[key])
    for name in ("torch", "grader"):
        module = sys.modules.get(name)
        origin = getattr(module, "__file__", None)
        if origin:
            found.add(os.path.dirname(origin))
    for entry in list(sys.path):
        if entry and ("site-packages" in entry or "dist-packages" in entry):
            found.add(entry)
    dirs = set()
    for folder in found:
        for form in (folder, os.path.realpath(folder)):
            dirs.add(form.rstrip(os.sep) + os.sep)
    return tuple(sorted(dirs))


def _installer(install):
    """A generator that installs signal handlers with `install`: its frame (where `install`
    lives) is reachable only through `gi_frame`, which the audit hook refuses."""
    installed = None
    while True:
        signalnum, handler = yield installed
        installed = install(signalnum, handler)


def frameless_signals() -> None:
    """Signal handlers get no frame.

    A Python signal handler's second argument is the frame that was running when the signal
    came: with a timer a submission could catch the worker's own frames (the probe's locals,
    the answer key) without any audited call. `_signal.signal` and `signal.signal` are
    replaced by one that wraps the handler so that it is called with `None` instead.
    """
    import signal as signal_module
    import types

    real = sys.modules.get("_signal")
    if real is None or getattr(real, "frameless", False):
        return
    send = _installer(real.signal)
    next(send)

    def frameless(signalnum, handler, _send=send.send):
        if callable(handler):
            inner = handler

            def handler(signum, frame):  # noqa: ARG001 - the frame is what is withheld
                return inner(signum, None)
        return _send((signalnum, handler))

    proxy = types.ModuleType("_signal", getattr(real, "__doc__", None))
    proxy.__dict__.update({k: v for k, v in vars(real).items() if k not in ("__name__", "__doc__", "__spec__",
                                                                           "__loader__")})
    proxy.signal = frameless
    proxy.frameless = True
    sys.modules["_signal"] = proxy
    signal_module._signal = proxy
    python_level = signal_module.__dict__.get("signal")
    if getattr(python_level, "__wrapped__", None) is real.signal:
        python_level.__wrapped__ = frameless  # functools.wraps kept the real one there


def raw_memory_path(path: str) -> bool:
    """A path whose last part reads a process's memory (`/proc/self/mem`, `../1/mem`, `mem`
    from inside /proc/self, `pagemap`), however it is spelled."""
    last = os.path.basename(os.path.normpath(path)) if path else ""
    return last in ("mem", "pagemap", "kcore", "kmem")


__all__ = ["frameless_signals", "raw_memory_path", "trusted_code_dirs"]
