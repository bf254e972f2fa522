"""A node leaves no reference cycle: its execution, spec and the call's objects are freed by
refcounting when the call returns, not by the next garbage collection.

An adapter's edit hook (`NodeSpec.edit`) usually closes over the execution (it rebuilds the call
from it), and the execution holds the spec: a circle, per call, until core drops the hook when the
node ends. Each circle is work for every collection (the openai `plain` cell paid ~20k
instructions a call for it, bench/cell_counts.py) and keeps the call's request and reply alive."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from typing import Any

import pytest

import graphmind
from graphmind.adapter import NodeSpec, Settled, engine_for


@pytest.fixture
def no_gc() -> Iterator[None]:
    """Cyclic garbage stays alive while the test looks: only refcounting frees anything."""
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _detached() -> graphmind.Client:
    """A detached client past its first node (which starts the transport: a frame of that first
    call may stay referenced from what the start left behind, which is not a per-call cycle)."""
    client = graphmind.Client(app="cycles", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    engine_for(client).execute(NodeSpec("warm"), lambda: None)
    return client


class _AdapterNode:
    """What an adapter keeps per call (stainless' `_SyncNode`): the execution, and an edit hook."""

    def __init__(self, ex: Any) -> None:
        self.ex = ex

    def edit(self, value: Any) -> Any:
        return lambda: (self.ex, value)


@pytest.mark.parametrize("settled", [False, True])
def test_an_edit_hook_that_holds_its_execution_leaves_no_cycle(no_gc: None, settled: bool) -> None:
    client = _detached()
    try:
        ex = engine_for(client).start_node(NodeSpec("search", "tool", {"q": "cats"}))
        ex.spec.edit = _AdapterNode(ex).edit
        gone = weakref.ref(ex)
        settle = (lambda r: Settled(r, {"text": r})) if settled else None
        assert ex.run_sync(lambda: "found", settle=settle) == "found"
        del ex
        assert gone() is None, "the node's execution outlived its call (a cycle)"
    finally:
        client.dispose()


async def test_an_async_node_whose_edit_hook_holds_its_execution_leaves_no_cycle(no_gc: None) -> None:
    client = _detached()
    try:
        ex = await engine_for(client).astart_node(NodeSpec("asearch", "tool", {"q": "cats"}))
        ex.spec.edit = _AdapterNode(ex).edit

        async def body() -> str:
            return "found"

        async def settle(result: Any) -> Settled:
            return Settled(result, {"text": result})

        gone = weakref.ref(ex)
        assert await ex.run_async(body, settle=settle) == "found"
        del ex
        assert gone() is None
    finally:
        client.dispose()


def test_the_hook_is_dropped_when_the_node_ends_and_not_before(no_gc: None) -> None:
    client = _detached()
    try:
        engine = engine_for(client)
        ex = engine.start_node(NodeSpec("held", "tool", {"q": 1}))
        hook = _AdapterNode(ex).edit
        ex.spec.edit = hook
        assert ex.spec.edit == hook  # a gate of this node may still offer the edit
        ex.finish("done")
        assert ex.spec.edit is None

        failing = engine.start_node(NodeSpec("failing", "tool", {"q": 2}))
        failing.spec.edit = _AdapterNode(failing).edit

        def down() -> str:
            raise ValueError("down")

        with pytest.raises(ValueError):
            failing.run_sync(down)
        assert failing.ended and failing.spec.edit is None
    finally:
        client.dispose()
