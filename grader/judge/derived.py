"""Facts the judge derives from what a worker reported: a subject whose values pass through `fn`.

A probe reports what the submission returned, unconverted (THE TRUST PRINCIPLE); the fact a
check is about (are the start indices uniform, how many batches each split got) is computed
here, in the judge, from that plain data, the same way for the student, the reference and
every known mistake:

    same(derived(student, start_facts), derived(reference, start_facts), probe("ex08.start_batches", …))

`fn` gets the decoded plain value and must not trust it: anything it cannot read comes out
as `{"__unsupported__": "malformed (…)"}`, which compares unequal to the reference's facts.

>>> from grader.model.calls import Observation
>>> class S:
...     def observe(self, call, timeout=None):
...         return Observation(ok=True, value=[3, 1, 2])
>>> derived(S(), sorted).observe(None).value
[1, 2, 3]
"""

from __future__ import annotations

import dataclasses

from grader.model.calls import Observation


def _derive(obs: Observation, fn) -> Observation:
    if not obs.ok:
        return obs
    try:
        value = fn(obs.value)
    except Exception as err:  # the student's data, whatever shape it has
        value = {"__unsupported__": f"malformed ({type(err).__name__})"}
    return dataclasses.replace(obs, value=value)


# Which derivation belongs to which call object: a diagnosis replays every call a check made
# on the student against each known mistake, and each call must be derived as it was.
_BY_CALL: dict[int, tuple[object, object]] = {}


def _remember(a_call, fn) -> None:
    if len(_BY_CALL) > 10_000:
        _BY_CALL.clear()
    _BY_CALL[id(a_call)] = (a_call, fn)


def _fn_for(a_call, fallback):
    kept = _BY_CALL.get(id(a_call))
    return kept[1] if kept is not None and kept[0] is a_call else fallback


class derived:  # noqa: N801 - reads as a function at the call site
    """`subject`, with every observed value replaced by `fn(value)` (mistakes' variants too)."""

    def __init__(self, subject, fn):
        self._subject = subject
        self._fn = fn

    def observe(self, a_call, *args, **kwargs) -> Observation:
        _remember(a_call, self._fn)
        obs = _derive(self._subject.observe(a_call, *args, **kwargs), self._fn)
        seen = getattr(self._subject, "seen", None)  # a StudentView: what a diagnosis must explain
        if isinstance(seen, list) and seen and getattr(seen[-1], "call", None) is a_call:
            seen[-1] = dataclasses.replace(seen[-1], got=obs)
        return obs

    @property
    def view(self):
        """The StudentView underneath, if this wraps the student (verdicts pass it how to compare)."""
        return self._subject if hasattr(self._subject, "seen") else None

    def observe_mistake(self, mistake, a_call) -> Observation:
        return _derive(self._subject.observe_mistake(mistake, a_call), _fn_for(a_call, self._fn))

    def __getattr__(self, name):  # record, attach, shown, mistakes, …: the subject's own
        return getattr(self._subject, name)


__all__ = ["derived"]
