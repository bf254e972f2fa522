"""The adapter scaffold (`graphmind.adapter.Hook`, `Patches`, `instrument_once`) and the hook-table
checks of `graphmind.testing`: what every adapter's patching rests on."""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any

import pytest

import graphmind
from graphmind.adapter import Hook, Patches, hook_moved, instrument_once, items_of, uninstrument_once
from graphmind.testing import assert_hooks_stand, assert_in_source, assert_supported, split_requirement


class Framework:
    def call(self) -> str:
        return "real"


class Strict(Framework):
    """Refuses unknown attributes, as a pydantic model does."""

    def __setattr__(self, name: str, value: Any) -> None:
        raise ValueError(f"no attribute {name}")


def wrap(original: Any, state: Patches) -> Any:
    def call() -> str:
        return f"wrapped {original()}"

    return call


ROW = Hook("", "call", wrap, "pytest>=1", "tests: Framework.call")


def test_apply_twice_is_once_and_undo_lets_the_class_method_show_through_again() -> None:
    obj = Framework()
    state = Patches()
    state.apply(obj, (ROW,), state)
    first = vars(obj)["call"]
    state.apply(obj, (ROW,), state)
    other = Patches()
    other.apply(obj, (ROW,), other)  # another Patches never wraps our own wrapper
    assert vars(obj)["call"] is first and obj.call() == "wrapped real" and not other.active
    state.undo()
    assert "call" not in vars(obj) and obj.call() == "real" and not state.active
    state.undo()  # a second undo does nothing


def test_undo_restores_the_very_value_the_instance_held_and_a_strict_object_is_patched_too() -> None:
    obj = Strict()
    own = lambda: "own"  # noqa: E731
    object.__setattr__(obj, "call", own)
    state = Patches()
    state.apply(obj, (ROW,), state)
    assert obj.call() == "wrapped own"
    state.undo()
    assert vars(obj)["call"] is own


def test_a_module_and_a_class_are_patched_and_undone_the_same_way() -> None:
    module = types.ModuleType("acme")
    module.call = lambda: "module"  # type: ignore[attr-defined]
    original = module.call  # type: ignore[attr-defined]
    state = Patches()
    state.apply(module, (ROW,), state)
    assert module.call() == "wrapped module"  # type: ignore[attr-defined]
    state.undo()
    assert module.call is original  # type: ignore[attr-defined]

    class Sub(Framework):
        pass

    state.apply(Sub, (Hook("", "call", lambda orig, s: lambda self: "class-wide", "pytest>=1", "t"),), state)
    assert Sub().call() == "class-wide" and Framework().call() == "real"
    state.undo()
    assert "call" not in vars(Sub) and Sub().call() == "real"


def test_a_failing_row_undoes_what_the_call_patched_and_optional_and_applies_skip_rows() -> None:
    obj = Framework()
    state = Patches()
    with pytest.raises(AttributeError):
        state.apply(obj, (ROW, Hook("", "gone", wrap, "pytest>=1", "t")), state)
    assert "call" not in vars(obj) and not state.active
    state.apply(
        obj,
        (
            Hook("", "gone", wrap, "pytest>=1", "t", optional=True),
            Hook("", "call", wrap, "pytest>=1", "t", applies=lambda o: False),
        ),
        state,
    )
    assert vars(obj) == {} and not state.active


def test_undo_leaves_a_patch_someone_made_after_us() -> None:
    obj = Framework()
    state = Patches()
    state.apply(obj, (ROW,), state)
    theirs = lambda: "theirs"  # noqa: E731
    obj.call = theirs  # type: ignore[method-assign]
    state.undo()
    assert obj.call is theirs


def test_applying_again_after_a_reload_patches_again_and_a_wrapper_over_ours_is_left() -> None:
    module = types.ModuleType("acme")
    module.call = lambda: "module"  # type: ignore[attr-defined]
    state = Patches()
    state.apply(module, (ROW,), state)
    module.call = lambda: "reloaded"  # type: ignore[attr-defined]  # what importlib.reload does
    state.apply(module, (ROW,), state)
    assert module.call() == "wrapped reloaded"  # type: ignore[attr-defined]
    ours = module.call  # type: ignore[attr-defined]

    def over() -> str:  # another library's wrapper on top of ours (functools.wraps sets __wrapped__)
        return f"over {ours()}"

    over.__wrapped__ = ours  # type: ignore[attr-defined]
    module.call = over  # type: ignore[attr-defined]
    state.apply(module, (ROW,), state)
    assert module.call is over  # type: ignore[attr-defined]
    state.undo()
    assert module.call is over  # type: ignore[attr-defined]  # theirs stays, as before


def test_a_shared_row_is_one_wrapper_counted_and_removed_with_the_last() -> None:
    @dataclass
    class Client:
        http: Framework

    http = Framework()
    a, b = Client(http), Client(http)
    row = Hook("http", "call", wrap, "pytest>=1", "t", shared="_acme_shared")
    first, second = Patches(), Patches()
    first.apply(a, (row,), first)
    wrapper = vars(http)["call"]
    second.apply(b, (row,), second)
    assert vars(http)["call"] is wrapper and http.call() == "wrapped real"
    first.undo()
    assert vars(http)["call"] is wrapper  # b still counts on it
    second.undo()
    assert "call" not in vars(http) and "_acme_shared" not in vars(http)


def test_instrument_once_keeps_the_state_on_the_object_and_a_disabled_session_changes_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    gm = graphmind.Client(app="scaffold", enabled=False)
    obj = Framework()

    def apply(target: Framework) -> Patches:
        state = Patches(gm)
        state.apply(target, (ROW,), state)
        return state

    assert instrument_once(obj, "_mark", gm, apply) is obj and vars(obj) == {}
    live = graphmind.Client(app="scaffold", url="ws://127.0.0.1:9")
    try:
        instrument_once(obj, "_mark", live, apply)
        state = vars(obj)["_mark"]
        instrument_once(obj, "_mark", live, apply)
        assert vars(obj)["_mark"] is state and obj.call() == "wrapped real"
        assert uninstrument_once(obj, "_mark") is obj and vars(obj) == {}
        assert uninstrument_once(obj, "_mark") is obj

        def moved(target: Framework) -> Patches:
            raise AttributeError("'Framework' object has no attribute '_send'")

        caplog.set_level("WARNING", logger="graphmind")
        instrument_once(
            obj, "_mark", live, moved, hook_moved("pytest", "graphmind-acme", "0.1.0", "pytest>=1")
        )
        assert vars(obj) == {}
        assert "no longer has a hook graphmind-acme 0.1.0 uses" in caplog.text
        assert "install a supported pytest (pytest>=1) or upgrade graphmind-acme" in caplog.text
    finally:
        live.dispose()
        gm.dispose()


def test_uninstrumenting_a_shallow_copy_undoes_the_copy_and_leaves_the_original_instrumented() -> None:
    import copy

    live = graphmind.Client(app="scaffold", url="ws://127.0.0.1:9")
    try:
        obj = Framework()

        def apply(target: Framework) -> Patches:
            state = Patches(live)
            state.apply(target, (ROW,), state)
            return state

        instrument_once(obj, "_mark", live, apply)
        twin = copy.copy(obj)  # pydantic's model_copy() does the same: the dict, mark and wrappers with it
        uninstrument_once(twin, "_mark")
        assert vars(twin) == {} and twin.call() == "real"
        assert obj.call() == "wrapped real" and "_mark" in vars(obj)
        uninstrument_once(obj, "_mark")
        assert vars(obj) == {}
    finally:
        live.dispose()


def test_items_of_takes_one_a_list_a_tuple_or_a_dict_and_names_what_it_got() -> None:
    a, b = Framework(), Framework()
    assert items_of(a, Framework, "{type}", "{type}") == [a]
    assert items_of((a, b), Framework, "{type}", "{type}") == [a, b]
    assert items_of({"a": a}, Framework, "{type}", "{type}") == [a]
    with pytest.raises(TypeError, match="takes tools, got int"):
        items_of(3, Framework, "takes tools, got {type}", "{type}")
    with pytest.raises(TypeError, match="a str is not a tool"):
        items_of([a, "x"], Framework, "{type}", "a {type} is not a tool")


def test_the_hook_table_checks_fail_loudly_naming_the_rows_upstream_place() -> None:
    assert split_requirement("litellm>=1.108,!=1.107.0,<2") == ("litellm", ">=1.108,!=1.107.0,<2")
    assert split_requirement("langchain-core >=0.3.0, <2") == ("langchain-core", ">=0.3.0,<2")
    with pytest.raises(ValueError, match="names a distribution and its versions"):
        split_requirement("pytest")
    assert assert_supported("pytest>=1")
    with pytest.raises(AssertionError, match=r"pytest .* is outside pytest<1: read the adapter's hook table"):
        assert_supported("pytest<1")
    assert_hooks_stand((ROW,), Framework())
    with pytest.raises(AssertionError, match=r"Framework.gone is gone or not callable \(the hook at t"):
        assert_hooks_stand((Hook("", "gone", wrap, "pytest>=1", "t"),), Framework())
    assert "def call" in assert_in_source(Framework.call, "return", hook=ROW)
    with pytest.raises(
        AssertionError, match=r"Framework.call no longer contains \['self._send\('\] \(the hook at tests"
    ):
        assert_in_source(Framework.call, "self._send(", hook=ROW)
