"""The bytes of an answer from a worker: plain data only, no pickle, bounded.

A tagged binary format for exactly what `wire.to_plain` produces: None, bool, int, float,
str, list, tuple, dict and dense CPU tensors. The judge's `decode` builds new objects of
exactly those types from the bytes and nothing else: there is no class to look up and no
code to run, every length is checked against the bytes that are left (a forged length
cannot make it allocate more than the frame holds), nesting is limited, and objects
cannot be shared (no "a list that holds itself a million times"). Much cheaper than
`torch.save` + `torch.load(weights_only=True)` for the small answers checks make.
"""

from __future__ import annotations

import struct
import sys
import time
from array import array

MAX_DEPTH = 100
MAX_DIMS = 16  # dimensions of a tensor (torch allows more; no answer of the course has over 4)
_DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
           "complex64", "complex128"]


class DecodeError(Exception):
    """The bytes are not an answer in this format."""


class DecodeTimeout(DecodeError):
    """The answer took longer to read than what was left of the call's time: a huge answer
    (millions of items) costs the judge as much as it cost the worker to build, and that time
    is the student's too (the limits bound a student's whole time, reading included)."""


# Items of lists and dicts in one answer. The largest real answer is ex06's encoding of the
# whole corpus, 1,115,399; each item becomes a Python object of 30-70 bytes in the judge, and
# the checks derive a few more from it: without a cap, a 60 MB answer of 12 million `{}` took
# a judge to 4.3 GB.
MAX_ITEMS = 3_000_000


class _Clock:
    """Counts the items of lists and dicts: more than MAX_ITEMS raise DecodeError; a deadline
    passed (looked at every 4,096 items) raises DecodeTimeout."""

    __slots__ = ("deadline", "items")

    def __init__(self, deadline: float | None):
        self.deadline, self.items = deadline, 0

    def tick(self) -> None:
        self.items += 1
        if self.items > MAX_ITEMS:
            raise DecodeError(f"more than {MAX_ITEMS:,} items in one answer")
        if self.deadline is not None and not self.items & 0xFFF and time.monotonic() > self.deadline:
            raise DecodeTimeout(f"still reading after {self.items:,} items")

    def count(self, n: int) -> None:
        """n items read at once (a packed list of ints): counted as n ticks."""
        self.items += n
        if self.items > MAX_ITEMS:
            raise DecodeError(f"more than {MAX_ITEMS:,} items in one answer")
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise DecodeTimeout(f"still reading after {self.items:,} items")


def _dtype_tables():
    import torch

    to_code = {getattr(torch, name): i for i, name in enumerate(_DTYPES)}
    return to_code, {i: getattr(torch, name) for i, name in enumerate(_DTYPES)}


_TABLES = None


def _tables():
    global _TABLES
    if _TABLES is None:
        _TABLES = _dtype_tables()
    return _TABLES


def encode(value) -> bytes:
    """Plain data -> bytes (worker side). Raises TypeError for anything else."""
    out: list[bytes] = []
    _encode(value, out, 0)
    return b"".join(out)


def _encode(v, out: list, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise TypeError("nested too deeply")
    kind = type(v)
    if v is None:
        out.append(b"N")
    elif kind is bool:
        out.append(b"T" if v else b"F")
    elif kind is int:
        if -(1 << 63) <= v < (1 << 63):
            out.append(b"i" + struct.pack("<q", v))
        else:
            raw = v.to_bytes((v.bit_length() + 8) // 8, "little", signed=True)
            out.append(b"I" + struct.pack("<I", len(raw)) + raw)
    elif kind is float:
        out.append(b"f" + struct.pack("<d", v))
    elif kind is str:
        raw = v.encode("utf-8", "surrogatepass")
        out.append(b"s" + struct.pack("<I", len(raw)) + raw)
    elif kind is list and len(v) >= _PACKED_MIN and (packed := _packed_ints(v)) is not None:
        out.append(b"q" + struct.pack("<I", len(v)) + packed)
    elif kind in (list, tuple):
        out.append((b"l" if kind is list else b"t") + struct.pack("<I", len(v)))
        for item in v:
            _encode(item, out, depth + 1)
    elif kind is dict:
        out.append(b"d" + struct.pack("<I", len(v)))
        for key, item in v.items():
            _encode(key, out, depth + 1)
            _encode(item, out, depth + 1)
    else:
        import torch

        if not isinstance(v, torch.Tensor):
            raise TypeError(f"not plain data: {kind.__name__}")
        to_code, _ = _tables()
        if v.dtype not in to_code:
            raise TypeError(f"tensor dtype {v.dtype}")
        if v.dim() > MAX_DIMS:  # what decode takes: a longer shape would read as a forged frame
            raise TypeError(f"tensor with {v.dim()} dimensions (at most {MAX_DIMS})")
        t = v.detach().cpu().contiguous()
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        out.append(b"X" + struct.pack("<BB", to_code[t.dtype], t.dim())
                   + struct.pack(f"<{t.dim()}Q", *t.shape) + struct.pack("<Q", len(raw)) + raw)


# A list of this many ints or more, each of them an int64, travels packed (tag `q`: the count,
# then 8 bytes an item, little-endian), read and written by `array` in one pass rather than an
# item at a time in Python (ex06's encoding of the corpus is 1.1 million ids). It decodes to the
# same list, its items counted against MAX_ITEMS as any list's.
_PACKED_MIN = 64


def _packed_ints(items: list) -> bytes | None:
    """The list's little-endian int64 bytes, or None when an item is not an int64 (a bool, a
    subclass of int, an int too large) and the list goes item by item."""
    if not all(type(item) is int for item in items):
        return None
    try:
        packed = array("q", items)
    except OverflowError:
        return None
    if sys.byteorder != "little":
        packed.byteswap()
    return packed.tobytes()


def decode(data: bytes, deadline: float | None = None):
    """bytes -> plain data (judge side). Raises DecodeError on anything malformed, and
    DecodeTimeout when `deadline` (time.monotonic()) passes before the answer is read."""
    view = memoryview(data)
    try:
        value, pos = _decode(view, 0, 0, _Clock(deadline))
    except (struct.error, UnicodeDecodeError, ValueError, TypeError, OverflowError, RecursionError) as err:
        raise DecodeError(f"{type(err).__name__}: {err}") from None
    if pos != len(view):
        raise DecodeError("trailing bytes")
    return value


def _need(view, pos: int, n: int) -> None:
    if n < 0 or pos + n > len(view):
        raise DecodeError("truncated")


def _decode(view, pos: int, depth: int, clock: _Clock):
    if depth > MAX_DEPTH:
        raise DecodeError("nested too deeply")
    _need(view, pos, 1)
    tag = view[pos]
    pos += 1
    if tag == 78:  # N
        return None, pos
    if tag == 84:  # T
        return True, pos
    if tag == 70:  # F
        return False, pos
    if tag == 105:  # i
        _need(view, pos, 8)
        return struct.unpack_from("<q", view, pos)[0], pos + 8
    if tag == 73:  # I
        _need(view, pos, 4)
        (n,) = struct.unpack_from("<I", view, pos)
        pos += 4
        if n > 4096:
            raise DecodeError("integer too long")
        _need(view, pos, n)
        return int.from_bytes(view[pos:pos + n], "little", signed=True), pos + n
    if tag == 102:  # f
        _need(view, pos, 8)
        return struct.unpack_from("<d", view, pos)[0], pos + 8
    if tag == 115:  # s
        _need(view, pos, 4)
        (n,) = struct.unpack_from("<I", view, pos)
        pos += 4
        _need(view, pos, n)
        return str(view[pos:pos + n], "utf-8", "surrogatepass"), pos + n
    if tag == 113:  # q: a packed list of int64
        _need(view, pos, 4)
        (n,) = struct.unpack_from("<I", view, pos)
        pos += 4
        _need(view, pos, 8 * n)
        clock.count(n)
        packed = array("q")
        packed.frombytes(view[pos:pos + 8 * n])
        if sys.byteorder != "little":
            packed.byteswap()
        return packed.tolist(), pos + 8 * n
    if tag in (108, 116):  # l t
        _need(view, pos, 4)
        (n,) = struct.unpack_from("<I", view, pos)
        pos += 4
        _need(view, pos, n)  # every item takes at least one byte
        items = []
        for _ in range(n):
            clock.tick()
            item, pos = _decode(view, pos, depth + 1, clock)
            items.append(item)
        return (items if tag == 108 else tuple(items)), pos
    if tag == 100:  # d
        _need(view, pos, 4)
        (n,) = struct.unpack_from("<I", view, pos)
        pos += 4
        _need(view, pos, 2 * n)
        result = {}
        for _ in range(n):
            clock.tick()
            key, pos = _decode(view, pos, depth + 1, clock)
            item, pos = _decode(view, pos, depth + 1, clock)
            try:
                result[key] = item
            except TypeError:
                raise DecodeError("unhashable key") from None
        return result, pos
    if tag == 88:  # X
        import torch

        _need(view, pos, 2)
        code, ndim = struct.unpack_from("<BB", view, pos)
        pos += 2
        _, from_code = _tables()
        if code not in from_code or ndim > MAX_DIMS:
            raise DecodeError("tensor header")
        _need(view, pos, 8 * ndim + 8)
        shape = struct.unpack_from(f"<{ndim}Q", view, pos)
        pos += 8 * ndim
        (nbytes,) = struct.unpack_from("<Q", view, pos)
        pos += 8
        _need(view, pos, nbytes)
        dtype = from_code[code]
        numel = 1
        for size in shape:
            numel *= size
        itemsize = torch.empty((), dtype=dtype).element_size()
        if numel * itemsize != nbytes:
            raise DecodeError("tensor size")
        if nbytes == 0:
            return torch.empty(shape, dtype=dtype), pos
        raw = bytearray(view[pos:pos + nbytes])
        tensor = torch.frombuffer(raw, dtype=torch.uint8).view(dtype).reshape(shape)
        return tensor, pos + nbytes
    raise DecodeError(f"unknown tag {tag}")
