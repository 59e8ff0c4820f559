"""A value a student works out by hand, as a student release holds it: sealed.

A release ships no hand answer (ANSWER_PARAMS, HAND_NLL_LABEL_A, SHAPE_ANSWERS, …: which
ones, `grader.build.hand_answers`), yet it grades them against the answers it recorded. So
`grade release` records each of them, and every recorded output that equals one, sealed:
its kind, a salted sha256 of its canonical text, the length of a shape, and for a float
the grid of `FLOAT_DECIMALS` decimals it is sealed on. The judge compares a student's
value with a sealed one by sealing the student's the same way (for a float, every grid
point within the check's tolerance of it), so a sealed value is matched or not, never
read: it prints as `?`, and a wrong answer is only "not right".

In the recorded answers (plain data, `grader/answers.bin`) a sealed value is a dict
marked `MARK`; `from_plain` turns those back into `Sealed` when the answers are read.

    >>> s = seal(7, salt="x")
    >>> s == 7, s == 8, s == 7.0, str(s)
    (True, False, False, '?')
    >>> seal(2.4911, salt="x").matches(2.49, atol=0.005, rtol=0.0)
    True
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

MARK = "__sealed__"
FLOAT_DECIMALS = 6  # a sealed float's grid: finer than any tolerance a check uses on one
MAX_GRID_POINTS = 1_000_000  # candidates tried for one float comparison (a tolerance of ±0.5)


def _canonical(kind: str, value) -> str | None:
    """The text a value of `kind` is sealed as; None when `value` is not of that kind."""
    if kind == "int":
        return f"int:{value}" if type(value) is int else None
    if kind == "float":
        return f"float:{value:.{FLOAT_DECIMALS}f}" if type(value) in (int, float) and math.isfinite(value) else None
    if kind == "tuple":
        if type(value) is tuple and all(type(v) is int for v in value):
            return f"tuple:{value!r}"
        return None
    return None


def _digest(salt: str, text: str) -> str:
    return hashlib.sha256(f"{salt}\0{text}".encode()).hexdigest()


@dataclass(frozen=True, eq=False)
class Sealed:
    """One hand answer, known by its digest: `==` with a plain value says whether they agree."""

    kind: str  # "int", "float" or "tuple" (a shape)
    digest: str
    salt: str
    length: int | None = None  # a shape's number of dimensions (what the hand message says)

    def matches(self, value, *, atol: float = 0.0, rtol: float = 0.0) -> bool:
        """Whether `value` is this answer; a float within |value - x| <= atol + rtol * |x|."""
        if self.kind != "float":
            text = _canonical(self.kind, value)
            return text is not None and _digest(self.salt, text) == self.digest
        if type(value) not in (int, float) or not math.isfinite(value):
            return False
        scale = 10 ** FLOAT_DECIMALS
        reach = (atol + rtol * abs(value)) / max(1.0 - rtol, 1e-9)  # every x that could be within tolerance
        low, high = math.floor((value - reach) * scale), math.ceil((value + reach) * scale)
        if high - low > MAX_GRID_POINTS:
            return False
        for k in range(low, high + 1):
            x = k / scale
            if abs(value - x) <= atol + rtol * abs(x) + 0.5 / scale \
                    and _digest(self.salt, _canonical("float", x)) == self.digest:
                return True
        return False

    def __eq__(self, other) -> bool:
        if isinstance(other, Sealed):
            return (self.kind, self.digest) == (other.kind, other.digest)
        return self.matches(other)

    def __hash__(self) -> int:
        return hash(self.digest)

    def __len__(self) -> int:
        if self.length is None:
            raise TypeError(f"a sealed {self.kind} has no length")
        return self.length

    def __repr__(self) -> str:
        return "?"

    __str__ = __repr__


def seal(value, salt: str) -> Sealed:
    """`value` (an int, a float or a shape: a tuple of ints) sealed under `salt`."""
    kind = "int" if type(value) is int else "float" if type(value) is float else "tuple" if type(value) is tuple else None
    text = _canonical(kind, value) if kind else None
    if text is None:
        raise TypeError(f"only an int, a float or a shape can be sealed, not {type(value).__name__}")
    return Sealed(kind, _digest(salt, text), salt, length=len(value) if kind == "tuple" else None)


def to_plain(value):
    """`value` with every `Sealed` inside it as a marked dict (for the recorded answers)."""
    if isinstance(value, Sealed):
        return {MARK: value.kind, "digest": value.digest, "salt": value.salt, "length": value.length}
    if isinstance(value, dict):
        return {k: to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_plain(v) for v in value)
    return value


def from_plain(value):
    """The recorded answers' marked dicts back as `Sealed`."""
    if isinstance(value, dict):
        if MARK in value:
            return Sealed(value[MARK], value["digest"], value["salt"], length=value.get("length"))
        return {k: from_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(from_plain(v) for v in value)
    return value


def holds_sealed(value, depth: int = 0) -> bool:
    """Whether a sealed value is anywhere in `value`."""
    if isinstance(value, Sealed):
        return True
    if depth > 8:
        return False
    if isinstance(value, dict):
        return any(holds_sealed(v, depth + 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(holds_sealed(v, depth + 1) for v in value)
    return False
