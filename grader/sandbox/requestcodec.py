"""The bytes of a request from the judge to a worker: plain data where that is exact, else pickle.

Requests are the judge's own (trusted: nothing the student sends is ever unpickled), so
pickle is safe on this side. But a pickled tensor is rebuilt through `torch.load`, slow for
each tensor each way, and most requests are a probe's name with a few small dense tensors
and numbers. Those travel in `plaincodec`'s format instead (cheaper both ways); anything it would not give back exactly as sent is pickled as before:

- every tensor a plain `torch.Tensor` (no subclass, no Parameter) on the CPU, contiguous, not
  requiring grad, no names, no Python attributes, of a dtype the codec knows, and owning the
  whole of its storage (a view of a larger tensor keeps its base under pickle);
- no list, dict or tensor reached twice (pickle keeps two references to one object as one
  object; the plain format would make two);
- nothing but None, bool, int, float, str, list, tuple, dict and such tensors.

The first byte says which: `p` plain, `k` pickle.

    >>> import torch
    >>> request = {"probe": "ex01.make_windows", "args": (torch.arange(6), 3), "kwargs": {}}
    >>> pack(request)[:1], unpack(pack(request))["args"][0].tolist()
    (b'p', [0, 1, 2, 3, 4, 5])
    >>> shared = torch.zeros(2)
    >>> pack({"args": (shared, shared)})[:1]  # one tensor twice: pickle keeps it one
    b'k'
"""

from __future__ import annotations

import pickle

import grader.sandbox.plaincodec as plaincodec

__all__ = ["pack", "unpack"]

PLAIN, PICKLED = b"p", b"k"
_SCALARS = (type(None), bool, int, float, str)


def pack(request) -> bytes:
    """A request -> bytes (judge side)."""
    if _exact(request, set(), 0):
        try:
            return PLAIN + plaincodec.encode(request)
        except TypeError:
            pass
    return PICKLED + pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL)


def unpack(data: bytes):
    """bytes -> the request (worker side); tensors are the worker's own, resizable like any."""
    if data[:1] == PLAIN:
        return _owned(plaincodec.decode(data[1:]))
    return pickle.loads(data[1:])  # from the judge: trusted


def _exact(value, seen: set, depth: int) -> bool:
    """Would the plain format give `value` back as it is (see the module's docstring)?"""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if depth > plaincodec.MAX_DEPTH:
        return False
    if kind is tuple:  # immutable: only what it holds can be shared (and is tracked below)
        return all(_exact(item, seen, depth + 1) for item in value)
    if id(value) in seen:
        return False
    seen.add(id(value))
    if kind is list:
        return all(_exact(item, seen, depth + 1) for item in value)
    if kind is dict:
        return all(type(key) in _SCALARS and _exact(item, seen, depth + 1) for key, item in value.items())
    return _plain_tensor(value, seen)


def _plain_tensor(value, seen: set) -> bool:
    import torch

    if type(value) is not torch.Tensor:
        return False
    storage = value.untyped_storage()
    memory = ("storage", storage.data_ptr())  # kept apart from the objects' ids in `seen`
    if memory in seen and value.numel():
        return False  # another tensor of this request shares its memory
    seen.add(memory)
    return (value.device.type == "cpu" and value.layout is torch.strided and not value.requires_grad
            and value.is_contiguous() and value.storage_offset() == 0
            and storage.nbytes() == value.numel() * value.element_size()
            and not any(getattr(value, "names", ())) and not value.is_conj() and not value.is_neg()
            and not getattr(value, "__dict__", None))


def _owned(value):
    """Tensors decoded over the frame's bytes, cloned into storage of their own."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list:
        return [_owned(item) for item in value]
    if kind is tuple:
        return tuple(_owned(item) for item in value)
    if kind is dict:
        return {key: _owned(item) for key, item in value.items()}
    return value.clone()
