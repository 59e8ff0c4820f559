"""The guard's comparisons (grader.sandbox.bindings.Layout): what the check after every call sees.

The guard itself is exercised end to end by the tamper cohort (tests/sandbox/test_tamper.py);
here the layout is built over small namespaces of our own, so every kind of change can be
made by hand and each one must be told apart from "nothing moved".
"""

from __future__ import annotations

import sys
import types

from grader.sandbox.bindings import Layout, fingerprint, still


def _namespace():
    def helper(x, scale=2):
        return x * scale

    space = types.SimpleNamespace(helper=helper, table={"a": 1, "b": 2}, names=["x", "y"], limit=5)
    return space


def _layout(space, modules=None):
    snapshot = {"demo": {k: fingerprint(v) for k, v in vars(space).items()},
                "sys.modules": dict(modules if modules is not None else sys.modules)}
    return Layout(snapshot, {"demo": space})


def test_nothing_moved_is_seen_as_such():
    space = _namespace()
    layout = _layout(space)
    assert layout.bindings_same() and layout.contents_same() and layout.modules_same()
    assert layout.functions_changed() == []


def test_a_rebinding_and_a_removal_are_seen():
    space = _namespace()
    layout = _layout(space)
    space.limit = 6
    assert not layout.bindings_same()
    space.limit = 5  # back to the very same object: the fast path agrees again
    assert layout.bindings_same()
    del space.names
    assert not layout.bindings_same()  # a watched name gone is a change, not an error


def test_a_container_emptied_in_place_is_seen():
    space = _namespace()
    layout = _layout(space)
    space.table.clear()
    assert layout.bindings_same()  # still the same dict object...
    assert not layout.contents_same()  # ...but not what it held
    space2 = _namespace()
    layout2 = _layout(space2)
    space2.names.append("z")
    assert not layout2.contents_same()


def test_a_functions_code_or_defaults_replaced_in_place_is_named():
    space = _namespace()
    layout = _layout(space)
    kept = fingerprint(space.helper)
    space.helper.__defaults__ = (3,)
    changed = layout.functions_changed()
    assert len(changed) == 1 and changed[0].endswith("helper"), changed
    assert not still(space.helper, kept)  # what the slow path names it by
    assert layout.bindings_same()  # the binding itself did not move


def test_accepting_the_bindings_moves_only_the_fast_path():
    space = _namespace()
    layout = _layout(space)
    space.limit = 7
    assert not layout.bindings_same()
    layout.accept_bindings()
    assert layout.bindings_same()


def test_a_module_that_was_there_must_still_be_there():
    fake = types.ModuleType("grader_test_fake_module")
    modules = {"grader_test_fake_module": fake, "sys": sys}
    sys.modules["grader_test_fake_module"] = fake
    try:
        layout = _layout(_namespace(), modules)
        assert layout.modules_same()
        sys.modules["grader_test_fake_module"] = types.ModuleType("grader_test_fake_module")  # swapped
        assert not layout.modules_same()
        del sys.modules["grader_test_fake_module"]
        assert not layout.modules_same()
    finally:
        sys.modules.pop("grader_test_fake_module", None)
