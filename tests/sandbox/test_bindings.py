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


def test_after_a_verified_check_the_tags_still_see_every_kind_of_change():
    """Once a comparison found nothing moved, the next checks read the dicts' version tags
    instead (no value touched); every change must still be seen, each time, in a module's
    namespace, a class's, a container of the grader's and sys.modules."""
    from grader.sandbox.bindings import _tags_readable

    class Holder:
        method = staticmethod(len)

    fake = types.ModuleType("grader_test_tagged_module")
    sys.modules[fake.__name__] = fake
    try:
        space = _namespace()
        snapshot = {"demo": {k: fingerprint(v) for k, v in vars(space).items()},
                    "class": {k: fingerprint(v) for k, v in vars(Holder).items() if k == "method"},
                    "sys.modules": dict(sys.modules)}
        layout = Layout(snapshot, {"demo": space, "class": Holder})
        if sys.implementation.name == "cpython" and sys.version_info[:2] == (3, 11):
            assert _tags_readable() and layout._space_tags is not None  # the fast path is what is tested
        for _ in range(2):  # the first pass verifies in full and keeps the tags; the second reads them
            assert layout.bindings_same() and layout.contents_same() and layout.modules_same()
        original = vars(Holder)["method"]
        changes = [
            (lambda: setattr(space, "limit", 6), lambda: setattr(space, "limit", 5), layout.bindings_same),
            (lambda: setattr(Holder, "method", staticmethod(abs)), lambda: setattr(Holder, "method", original),
             layout.bindings_same),
            (lambda: space.table.__setitem__("a", 9), lambda: space.table.__setitem__("a", 1), layout.contents_same),
            (lambda: space.names.append("z"), space.names.pop, layout.contents_same),
            (lambda: sys.modules.__setitem__(fake.__name__, types.ModuleType("x")),
             lambda: sys.modules.__setitem__(fake.__name__, fake), layout.modules_same),
        ]
        for change, undo, same in changes:
            change()
            assert not same() and not same(), change  # seen, and seen again (never "verified")
            undo()
            assert same()
        saved = sys.modules
        try:
            sys.modules = dict(saved)  # rebound to a copy: never taken on the original's tags
            assert layout.modules_same()
            del sys.modules[fake.__name__]
            assert not layout.modules_same()
        finally:
            sys.modules = saved
    finally:
        sys.modules.pop(fake.__name__, None)


def test_version_tags_change_with_every_change_to_a_dict():
    from grader.sandbox.bindings import Versions

    table = {"a": 1}
    tags = Versions.of([table])
    if tags is None:  # another interpreter: the checks compare in full, nothing to test here
        return
    seen = [tags.now()]
    for change in (lambda: table.update(b=2), lambda: table.__setitem__("a", 3), lambda: table.pop("b"), table.clear):
        change()
        assert tags.now() not in seen
        seen.append(tags.now())
    assert tags.now() == seen[-1]  # reading changes nothing


def test_modules_untouched_only_while_sys_modules_has_not_changed_since_verified():
    """`Guard.resync` skips its look for grader modules imported since the zygote's check on
    this answer alone: any import, removal or rebinding since must make it say no."""
    from grader.sandbox.bindings import _tags_readable

    layout = _layout(_namespace())
    assert not layout.modules_untouched()  # nothing verified yet
    assert layout.modules_same()
    if not _tags_readable():
        assert not layout.modules_untouched()  # no tags: never vouched for
        return
    assert layout.modules_untouched()
    fake = types.ModuleType("grader_test_untouched_module")
    sys.modules[fake.__name__] = fake
    try:
        assert not layout.modules_untouched() and not layout.modules_untouched()
    finally:
        del sys.modules[fake.__name__]
    assert not layout.modules_untouched()  # back to the same contents, but not verified again
    assert layout.modules_same() and layout.modules_untouched()
    saved = sys.modules
    try:
        sys.modules = dict(saved)
        assert not layout.modules_untouched()
    finally:
        sys.modules = saved


def test_once_verified_only_the_namespaces_whose_tags_moved_are_compared_and_every_change_is_seen():
    """After a verified check, a namespace whose tag moved is compared on its own; the others
    are vouched for by their tags. A change in any of them is still seen, also one made in a
    second namespace while the first one's tag has moved (patched and restored, as ex02's net
    does to torch's around every call)."""
    first, second = _namespace(), _namespace()
    snapshot = {name: {k: fingerprint(v) for k, v in vars(space).items()} for name, space in
                (("first", first), ("second", second))}
    snapshot["sys.modules"] = dict(sys.modules)
    layout = Layout(snapshot, {"first": first, "second": second})
    assert layout.bindings_same() and layout.bindings_same()
    original = first.helper
    first.helper = len  # patched ...
    assert not layout.bindings_same()
    first.helper = original  # ... and restored: the tag moved, the binding did not
    assert layout.bindings_same() and layout.bindings_same()
    first.limit = 7
    second.limit = 8  # two namespaces moved at once
    assert not layout.bindings_same()
    first.limit = 5
    assert not layout.bindings_same()  # the second one is still changed
    second.limit = 5
    assert layout.bindings_same()
    del second.names  # a watched name gone, in the namespace compared on its own
    assert not layout.bindings_same() and not layout.bindings_same()
    second.names = snapshot["second"]["names"][0]
    assert layout.bindings_same()


def test_admit_vouches_only_once_after_resync_and_only_for_a_plain_new_name():
    """`Guard.admit` keeps sys.modules verified for the submission's own module, put in before
    any of its code ran; any later call, or a name that is not a plain str, only sets it."""
    from grader.sandbox.bindings import _tags_readable
    from grader.sandbox.guard import Guard

    if not _tags_readable():
        return
    guard = Guard()
    guard._layout = layout = _layout(_namespace())
    guard._snapshot = {"sys.modules": dict(sys.modules)}

    class Sly(str):
        __hash__ = str.__hash__

        def __eq__(self, other):
            return str.__eq__(self, other)

    names = ["grader_test_admitted", "grader_test_admitted_later", Sly("grader_test_admitted_sly")]
    try:
        assert layout.modules_same() and layout.modules_untouched()
        guard._admit_vouches = True  # as `resync` leaves it
        guard.admit(names[0], types.ModuleType(names[0]))
        assert layout.modules_untouched()  # vouched: the new name changes no watched module
        guard.admit(names[1], types.ModuleType(names[1]))  # a second call: set, not vouched
        assert not layout.modules_untouched()
        assert layout.modules_same()
        guard._admit_vouches = True
        guard.admit(names[2], types.ModuleType(names[2]))  # not a plain str: set, not vouched
        assert not layout.modules_untouched()
    finally:
        for name in names:
            sys.modules.pop(name, None)
