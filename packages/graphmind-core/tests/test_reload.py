"""Reload a gated callable's code at a held gate and retry it (docs/protocol.md, "Editing a held
call"), against graphmind.testing.FakeHub: the tool module is a real file this test rewrites."""

from __future__ import annotations

import importlib
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmind
from graphmind.adapter import NodeSpec, engine_for
from graphmind.testing import FakeHub

BROKEN = """
def parse(text):
    return int(text) + 1 if text.isdigit() else undefined_name

class Counter:
    def __init__(self):
        self.base = 10

    def add(self, n):
        raise ValueError("not yet")
"""
FIXED = """
def parse(text):
    return f"fixed {text}"

class Counter:
    def __init__(self):
        self.base = 0

    def add(self, n):
        return self.base + n + 1000
"""


@pytest.fixture
def tool_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Any]]:
    name = f"gm_reload_tools_{id(tmp_path)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(BROKEN))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    yield path, module
    sys.modules.pop(name, None)


def _run(fn: Any) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def call() -> None:
        try:
            out.append(fn())
        except Exception as exc:
            out.append(exc)

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    return worker, out


def test_retry_with_reload_runs_the_new_code_and_later_calls_do_too(
    hub: FakeHub, client: graphmind.Client, tool_module: tuple[Path, Any]
) -> None:
    path, module = tool_module
    parse = client.tool(module.parse)
    hub.set_debug(pause_on_error="on")
    worker, out = _run(lambda: parse("abc"))
    paused = hub.next_paused()
    assert paused["gate"] == "error" and paused["reloadable"] is True
    assert paused["error"]["name"] == "NameError"
    path.write_text(textwrap.dedent(FIXED))
    hub.resolve(paused["gateId"], "retry", reload=True)
    worker.join(5)
    assert out == ["fixed abc"]
    assert parse("x") == "fixed x"  # the same wrapper runs the new definition from now on
    attempt = hub.wait_event(lambda e: e["type"] == "node.attempt")
    assert attempt["error"]["name"] == "NameError"


def test_a_syntax_error_re_holds_with_the_error(
    hub: FakeHub, client: graphmind.Client, tool_module: tuple[Path, Any]
) -> None:
    path, module = tool_module
    parse = client.tool(module.parse)
    hub.set_debug(pause_on_error="on")
    worker, out = _run(lambda: parse("abc"))
    paused = hub.next_paused()
    path.write_text("def parse(text:\n    return 1\n")
    hub.resolve(paused["gateId"], "retry", reload=True)
    again = hub.next_paused(after=1)
    assert again["refused"].startswith("reload failed: SyntaxError")
    assert module.parse("7") == 8  # the module is as it was
    path.write_text(textwrap.dedent(FIXED))
    hub.resolve(again["gateId"], "retry", reload=True)
    worker.join(5)
    assert out == ["fixed abc"]


def test_a_module_that_no_longer_defines_it_re_holds(
    hub: FakeHub, client: graphmind.Client, tool_module: tuple[Path, Any]
) -> None:
    path, module = tool_module
    parse = client.tool(module.parse)
    hub.set_debug(pause_on_error="on")
    worker, out = _run(lambda: parse("abc"))
    paused = hub.next_paused()
    path.write_text("def other():\n    return 1\n")
    hub.resolve(paused["gateId"], "retry", reload=True)
    again = hub.next_paused(after=1)
    assert "no longer defines parse" in again["refused"]
    hub.resolve(again["gateId"], "continue")
    worker.join(5)
    assert isinstance(out[0], NameError)


def test_a_wrapped_method_reloads_on_the_same_object(
    hub: FakeHub, client: graphmind.Client, tool_module: tuple[Path, Any]
) -> None:
    path, module = tool_module
    counter = module.Counter()
    client.wrap_method(counter, "add")
    hub.set_debug(pause_on_error="on")
    worker, out = _run(lambda: counter.add(1))
    paused = hub.next_paused()
    path.write_text(textwrap.dedent(FIXED))
    hub.resolve(paused["gateId"], "retry", reload=True, input={"n": 5})
    worker.join(5)
    # the new method on the object built from the old class: its state stays (base 10)
    assert out == [1015]


def test_reload_and_edit_together_at_a_before_gate(
    hub: FakeHub, client: graphmind.Client, tool_module: tuple[Path, Any]
) -> None:
    path, module = tool_module
    parse = client.tool(module.parse)
    hub.set_debug(breakpoints=[("tool:parse", "before")])
    worker, out = _run(lambda: parse("abc"))
    paused = hub.next_paused()
    path.write_text(textwrap.dedent(FIXED))
    hub.resolve(paused["gateId"], "continue", reload=True, input={"text": "edited"})
    worker.join(5)
    assert out == ["fixed edited"]


def _framework_tool(client: graphmind.Client, function: Any, kept: Any) -> Any:
    """What an adapter does for a framework's tool: the framework calls `kept` (its own reference to
    the function), and the adapter reports the function it found (`NodeSpec.function`)."""
    engine = engine_for(client)

    def call(text: str) -> Any:
        spec = NodeSpec("parse", "tool", {"text": text}, function=function)
        return engine.execute(spec, lambda: kept(text))

    return call


def test_a_framework_tools_function_reloads_in_place_so_the_frameworks_own_reference_runs_the_new_code(
    hub: FakeHub, client: graphmind.Client, tool_module: tuple[Path, Any]
) -> None:
    path, module = tool_module
    kept, counter = module.parse, module.Counter()
    parse = _framework_tool(client, module.parse, kept)
    add = _framework_tool(client, counter.add, counter.add)  # a bound method: its class's function
    hub.set_debug(pause_on_error="on")
    worker, out = _run(lambda: parse("abc"))
    paused = hub.next_paused()
    assert paused["gate"] == "error" and paused["reloadable"] is True and "notReloadable" not in paused
    path.write_text(textwrap.dedent(FIXED))
    hub.resolve(paused["gateId"], "retry", reload=True)
    worker.join(5)
    assert out == ["fixed abc"] and kept("x") == "fixed x"
    worker, out = _run(lambda: add(1))
    paused = hub.next_paused(after=1)
    hub.resolve(paused["gateId"], "retry", reload=True)
    worker.join(5)
    assert out == [1011]  # the new code, on the object built before (its base stays 10)


def test_a_model_step_or_a_tool_with_no_function_says_why_reload_is_not_offered(
    hub: FakeHub, client: graphmind.Client
) -> None:
    engine = engine_for(client)
    hub.set_debug(breakpoints=[("llm:step", "before"), ("tool:remote", "before")])
    for spec, says in (
        (
            NodeSpec("step", "llm", {}, node_id="llm:step", attrs={"model": "m"}),
            "a model call runs no code of yours",
        ),
        (
            NodeSpec("remote", "tool", {}),
            "reload applies to a tool that is a Python function in this process",
        ),
    ):
        seen = len(hub.of_type("exec.paused"))
        worker, out = _run(lambda spec=spec: engine.execute(spec, lambda: "real"))
        paused = hub.next_paused(after=seen)
        assert paused["reloadable"] is False and paused["notReloadable"].startswith(says)
        hub.resolve(paused["gateId"], "continue", reload=True)
        again = hub.next_paused(after=seen + 1)
        assert again["refused"] == f"reload does not apply here: {paused['notReloadable']}"
        hub.resolve(again["gateId"], "continue")
        worker.join(5)
        assert out == ["real"]


def test_a_closure_is_not_reloadable(hub: FakeHub, client: graphmind.Client) -> None:
    @client.tool
    def local(x: int) -> int:
        return x

    hub.set_debug(breakpoints=[("tool:local", "before")])
    worker, out = _run(lambda: local(1))
    paused = hub.next_paused()
    assert paused["reloadable"] is False
    assert paused["notReloadable"].endswith(
        "local is defined inside a function (a closure): only what a module defines at its top level reloads"
    )
    hub.resolve(paused["gateId"], "continue", reload=True)
    again = hub.next_paused(after=1)
    assert again["refused"].startswith("reload does not apply here: ")
    assert again["refused"].endswith("(a closure): only what a module defines at its top level reloads")
    hub.resolve(again["gateId"], "continue")
    worker.join(5)
    assert out == [1]


STREAM_BROKEN = """
def words(text):
    yield text
    raise ValueError("half way")
"""
STREAM_FIXED = """
def words(text):
    yield text
    yield "fixed"
"""


def test_a_streaming_tool_reloads_at_its_error_gate(
    hub: FakeHub, client: graphmind.Client, tool_module: tuple[Path, Any]
) -> None:
    path, _ = tool_module
    path.write_text(textwrap.dedent(STREAM_BROKEN))
    module = importlib.reload(sys.modules[path.stem])
    words = client.tool(module.words)
    hub.set_debug(pause_on_error="on", breakpoints=[("tool:words", "after")])
    answers = [("retry", None, {"reload": True}), ("continue", None)]

    def answer(frame: dict[str, Any]) -> Any:
        if frame["gate"] == "error":
            path.write_text(textwrap.dedent(STREAM_FIXED))
        return answers.pop(0)

    hub.auto_answer(answer)
    assert list(words("a")) == ["a", "fixed"]
