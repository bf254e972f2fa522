"""The shared gate matrix (graphmind.testing.gate_matrix) on ADK's own runner: a model call
(`llm:step`, a scripted `BaseLlm`) and a tool call (`tool:add`, a FunctionTool that counts its
calls), each with `Runner.run` (sync) and `Runner.run_async`, the model streamed too (SSE).

Every case runs twice (the `kit_hub` fixture): on core's in-process FakeHub and on the real hub
process driven as the viewer drives it (`graphmind_server.testing.KitHub`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from adk_helpers import (
    Counter,
    ModelDown,
    ScriptedLlm,
    ToolDown,
    agent,
    apaced,
    collect,
    final_text,
    function_calls,
    paced,
    reply_script,
    run_async,
    run_sync,
    runner,
    tool_results,
    tool_script,
)
from google.adk.events.event import Event
from google.adk.runners import Runner

import graphmind
from graphmind.testing.gate_matrix import CASES, GateSubject, run_case
from graphmind_google_adk import instrument_runner, uninstrument_runner

REPLY = "the real reply"


class ModelSubject(GateSubject):
    """One invocation of an LlmAgent whose model is scripted: the app gets ADK's `Event`s."""

    node_id = "llm:step"
    error_type = ModelDown
    streams = True
    injected = "from the debugger"

    def __init__(self) -> None:
        self.model = ScriptedLlm(script=reply_script(REPLY))
        self.calls_at_stream = -1

    @property
    def real_calls(self) -> int:
        return self.model.calls

    @property
    def raised(self) -> BaseException | None:  # type: ignore[override]
        return self.model.raised[-1] if self.model.raised else None

    def make(self) -> Runner:
        return runner(agent(self.model))

    def instrument(self, thing: Runner, session: graphmind.Client) -> Runner:
        return instrument_runner(thing, session=session)

    def undo(self, thing: Runner) -> Runner:
        return uninstrument_runner(thing)

    def call(self, thing: Runner) -> list[Event]:
        return list(run_sync(thing))

    async def acall(self, thing: Runner) -> list[Event]:
        return await collect(thing)

    def stream(self, thing: Runner) -> Iterator[Event]:
        self.calls_at_stream = self.model.calls
        return paced(self.model, run_sync(thing, stream=True))

    def astream(self, thing: Runner) -> AsyncIterator[Event]:
        self.calls_at_stream = self.model.calls
        return apaced(self.model, run_async(thing, stream=True))

    def fail_next(self) -> None:
        self.model.fail = 1

    def check_real(self, result: list[Event]) -> None:
        assert all(isinstance(e, Event) for e in result)
        assert final_text(result) == REPLY

    def check_injected(self, result: list[Event], value: Any) -> None:
        assert all(isinstance(e, Event) for e in result)
        assert final_text(result) == value

    def edit(self, original: Any) -> Any:
        edited = json.loads(json.dumps(original))
        edited["messages"][-1]["content"] = "an edited question"
        return edited

    def check_edited(self, result: list[Event], edited: Any) -> None:
        self.check_real(result)
        last = self.model.requests[-1].contents[-1]
        assert last.role == "user" and [p.text for p in last.parts or []] == ["an edited question"]

    def check_stream(self, items: list[Event]) -> None:
        assert all(isinstance(e, Event) for e in items)
        if self.model.calls == self.calls_at_stream:
            # Replayed: a before_model_callback answers with one whole LlmResponse (ADK yields it as
            # the step's one event, _model_call.py `yield response`), so a replayed stream has no partials.
            assert [e.partial for e in items] == [None] and final_text(items) == REPLY
            return
        assert len(items) > 1 and [e.partial for e in items][:2] == [True, True]
        assert final_text(items) == REPLY


class ToolSubject(GateSubject):
    """A tool call the scripted model asks for; the app gets the invocation's `Event`s, whose
    function response is the tool's (or the injected) dict."""

    node_id = "tool:add"
    error_type = ToolDown

    def __init__(self) -> None:
        self.injected = {"sum": 42}
        self.tools = Counter()
        self.model = ScriptedLlm(script=tool_script("add", {"a": 1, "b": 2}))

    @property
    def real_calls(self) -> int:
        return self.tools.calls.get("add", 0)

    @property
    def raised(self) -> BaseException | None:  # type: ignore[override]
        return self.tools.raised[-1] if self.tools.raised else None

    def make(self) -> Runner:
        return runner(agent(self.model, [self.tools.add]))

    def instrument(self, thing: Runner, session: graphmind.Client) -> Runner:
        return instrument_runner(thing, session=session)

    def undo(self, thing: Runner) -> Runner:
        return uninstrument_runner(thing)

    def call(self, thing: Runner) -> list[Event]:
        return list(run_sync(thing))

    async def acall(self, thing: Runner) -> list[Event]:
        return await collect(thing)

    def fail_next(self) -> None:
        self.tools.fail = 1

    def check_real(self, result: list[Event]) -> None:
        assert [c.name for c in function_calls(result)] == ["add"]
        assert tool_results(result) == [{"sum": 3}]
        assert final_text(result) == "result: {'sum': 3}"

    def edit(self, original: Any) -> Any:
        assert original == {"a": 1, "b": 2}
        return {"a": 10, "b": 20}

    def check_edited(self, result: list[Event], edited: Any) -> None:
        assert self.tools.args[-1] == edited == {"a": 10, "b": 20}
        assert tool_results(result) == [{"sum": 30}]
        assert final_text(result) == "result: {'sum': 30}"

    def check_injected(self, result: list[Event], value: Any) -> None:
        assert tool_results(result) == [value]
        assert final_text(result) == f"result: {value}"


def _hub_takes(case: str, kit_hub: Any) -> None:
    if case == "edit_hidden" and kit_hub is not None:
        # The real hub answers an edit of a gate that says `editable: false` with 422 (docs/protocol.md),
        # so the app never sees the answer and never re-holds with `refused`, which the case waits for:
        # a difference between the kit's case and the hub, for the edit kit (issue 30), not this adapter.
        pytest.skip(
            "edit_hidden: the real hub refuses the edit itself (422); the case expects the app's re-hold"
        )


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix_model(case: str, kit_hub: Any) -> None:
    _hub_takes(case, kit_hub)
    await run_case(case, ModelSubject(), hub=kit_hub)


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix_tool(case: str, kit_hub: Any) -> None:
    _hub_takes(case, kit_hub)
    await run_case(case, ToolSubject(), hub=kit_hub)
