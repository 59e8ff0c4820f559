"""Calls and observations: what a check asks of a subject, and what came back, as plain data.

A `Call` names a probe and its plain arguments and has a machine-independent `key()`; an
`Observation` is a worker's answer (value or error, printed output) with the student-made
text cleaned for a terminal.
"""

from __future__ import annotations

import hashlib
import pickle
from dataclasses import dataclass, field

@dataclass(frozen=True)
class Call:
    """One observation to make: run `probe` (grader.probes.<module>.<function>) with args."""

    probe: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict, hash=False)
    label: str = ""

    def request(self) -> dict:
        return {"probe": self.probe, "args": self.args, "kwargs": self.kwargs}

    def key(self) -> str:
        """A machine-independent key: the same call gives the same key anywhere."""
        digest = hashlib.sha256()
        _canonical(digest, (self.probe, self.args, sorted(self.kwargs.items())))
        return digest.hexdigest()


@dataclass(frozen=True)
class DataFile:
    """A data file given to probes (open it like a path); keyed by content, not location."""

    name: str
    path: str
    sha256: str

    def __fspath__(self) -> str:
        return self.path

    def __repr__(self) -> str:
        return f"<{self.name}>"  # in labels: train_bigram(<tinyshakespeare>), not a long path

    def __str__(self) -> str:
        return self.path


def _canonical(digest, value) -> None:
    """Feed a canonical encoding of plain call arguments into `digest`."""
    import torch

    if isinstance(value, DataFile):
        digest.update(f"D{value.name}:{value.sha256};".encode())
    elif isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        digest.update(f"T{t.dtype}{tuple(t.shape)}:".encode())
        digest.update(t.view(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    elif isinstance(value, (list, tuple)):
        digest.update(f"{'L' if isinstance(value, list) else 'U'}{len(value)}[".encode())
        for item in value:
            _canonical(digest, item)
        digest.update(b"]")
    elif isinstance(value, dict):
        digest.update(f"M{len(value)}{{".encode())
        for k in sorted(value, key=repr):
            _canonical(digest, k)
            _canonical(digest, value[k])
        digest.update(b"}")
    elif isinstance(value, float):
        digest.update(f"F{value!r};".encode())
    elif value is None or isinstance(value, (bool, int, str, bytes)):
        digest.update(f"{type(value).__name__}:{value!r};".encode())
    elif isinstance(value, torch.dtype):
        digest.update(f"dtype:{value};".encode())
    else:
        digest.update(pickle.dumps(value))


@dataclass
class Observation:
    """What came back: a value or an error, and what the code printed. `seconds`: what the call
    cost the student (CPU and idle time, measured by the judge; None for in-process subjects)."""

    ok: bool
    value: object = None
    error: dict | None = None
    output: str = ""
    seconds: float | None = None

    @classmethod
    def from_answer(cls, answer: dict) -> "Observation":
        """An answer from a worker; its text fields checked and cleaned, as the student controls them."""
        error = answer.get("error")
        if not answer.get("ok") and error is not None:
            if not isinstance(error, dict):
                error = {"type": "MalformedAnswer", "mro": ["MalformedAnswer"], "message": "", "traceback": ""}
            error = {
                "type": _clean(error.get("type")) or "Exception",
                "mro": [_clean(n) for n in error.get("mro", []) if isinstance(n, str)][:64] or [_clean(error.get("type"))],
                "message": _clean(error.get("message")), "traceback": _clean(error.get("traceback")),
                "not_implemented": error.get("not_implemented") is True,
                **_extra(error),
            }
        return cls(ok=answer.get("ok") is True, value=answer.get("value"), error=error,
                   output=Printed.of(_clean(answer.get("output")), answer.get("output_total")))

    @property
    def error_type(self) -> str | None:
        return self.error.get("type") if self.error else None

    def raised(self, name: str) -> bool:
        return bool(self.error) and name in self.error.get("mro", [self.error.get("type")])


def _extra(error: dict) -> dict:
    """The optional fields of a worker's error, type-checked: raised while importing the file
    (and, for an import of a file the worker did not read, why: `not_read`), how many of the
    student's frames a traceback had (a runaway recursion), a missing name."""
    kept = {}
    if error.get("import_error") is True:
        kept["import_error"] = True
        if isinstance(error.get("not_read"), str):
            kept["not_read"] = _clean(error["not_read"])[:1000]
    frames = error.get("own_frames")
    if isinstance(frames, int) and not isinstance(frames, bool) and frames > 0:
        kept["own_frames"] = frames
    if isinstance(error.get("name"), str):
        kept["name"] = _clean(error["name"])[:200]
    return kept


class Printed(str):
    """What the student's code printed, as far as the worker kept it (the first 4,000 characters).

    `total` is `(characters, lines)` printed in all when more was printed than kept, else
    None: `Printed.of("0\n1\n", (6888890, 1000000)).total` -> `(6888890, 1000000)`. A plain
    str everywhere else (json, comparisons); the text report says how much was left out.
    """

    total: tuple[int, int] | None = None

    @classmethod
    def of(cls, text: str, total=None) -> str:
        if not (isinstance(total, (list, tuple)) and len(total) == 2 and
                all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in total)):
            return text
        printed = cls(text)
        printed.total = (total[0], total[1])
        return printed

    def __reduce__(self):  # copies and pickles keep the count
        return (Printed.of, (str(self), self.total))


_CONTROL = {c: None for c in range(32) if c not in (9, 10)} | {127: None}


def _clean(text) -> str:
    """Student-made text for a terminal: no escape sequences or other control characters."""
    if not isinstance(text, str):
        return ""
    return text.translate(_CONTROL)
