"""`graphmind.adapter.ProcessPatch`: the one process-wide patch of an adapter (litellm's functions,
the OpenAI Agents SDK's run loop): once per process, the latest session reported to, nothing when
disabled, a moved hook patches nothing and warns once, and undo puts back the very originals."""

from __future__ import annotations

import types
from typing import Any

import pytest

import graphmind
from graphmind.adapter import Hook, Patches, ProcessPatch, hook_moved


def _module() -> types.ModuleType:
    mod = types.ModuleType("acme")

    def call() -> str:
        return "real"

    def other() -> str:
        return "other"

    mod.call = call  # type: ignore[attr-defined]
    mod.other = other  # type: ignore[attr-defined]
    return mod


def wrap(original: Any, state: Patches) -> Any:
    def call() -> str:
        return f"wrapped {original()} for {state.session.app if state.session else 'default'}"

    return call


ROW = Hook("", "call", wrap, "pytest>=1", "tests: acme.call")
OTHER = Hook("", "other", wrap, "pytest>=1", "tests: acme.other")


def test_instrument_once_per_process_the_latest_session_reported_to_and_undo_restores() -> None:
    mod = _module()
    original = mod.call
    undone: list[str] = []
    patch = ProcessPatch([(mod, ROW), (mod, OTHER)], also_undo=lambda: undone.append("models"))
    a = graphmind.Client(app="a", url="ws://127.0.0.1:9")
    b = graphmind.Client(app="b", url="ws://127.0.0.1:9")
    try:
        assert patch.instrument(a) is True and patch.active
        wrapper = mod.call
        assert mod.call() == "wrapped real for a"
        assert patch.instrument(b) is True
        assert mod.call is wrapper, "a second instrument patches nothing more"
        assert mod.call() == "wrapped real for b", "its session is the one reported to"
        patch.uninstrument()
        assert mod.call is original and not patch.active and undone == ["models"]
        assert patch.state.session is None
    finally:
        a.dispose()
        b.dispose()


def test_a_disabled_session_patches_nothing_and_silences_an_active_patch() -> None:
    mod = _module()
    original = mod.call
    patch = ProcessPatch([(mod, ROW)])
    off = graphmind.Client(app="off", enabled=False)
    live = graphmind.Client(app="live", url="ws://127.0.0.1:9")
    try:
        assert patch.instrument(off) is False and mod.call is original
        assert patch.instrument(live) is True
        assert patch.instrument(off) is False
        assert patch.state.session is off, "the calls now report to the disabled session: straight through"
    finally:
        patch.uninstrument()
        off.dispose()
        live.dispose()


def test_a_moved_hook_undoes_every_row_and_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    mod = _module()
    original = mod.call
    gone = Hook("", "gone", wrap, "pytest>=1", "tests: acme.gone")
    moved = hook_moved("pytest", "graphmind-acme", "0.1.0", "pytest>=1")
    live = graphmind.Client(app="live", url="ws://127.0.0.1:9")
    caplog.set_level("WARNING", logger="graphmind")
    try:
        assert ProcessPatch([(mod, ROW), (mod, gone)], moved=moved).instrument(live) is False
        assert mod.call is original, "the rows applied before the missing one are undone"
        assert "no longer has a hook graphmind-acme 0.1.0 uses" in caplog.text
        with pytest.raises(AttributeError):  # without `moved` the error is the adapter's to see
            ProcessPatch([(mod, gone)]).instrument(live)
    finally:
        live.dispose()
