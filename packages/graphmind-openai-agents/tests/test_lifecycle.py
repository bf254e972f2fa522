"""Instrumenting is once, undo is exact, nothing is patched when disabled, graphmind-openai under it
makes no second node, and nothing leaves the machine."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any

import agents.run_internal.turn_resolution
import pytest
from agents import Agent, Runner, set_trace_processors, set_tracing_disabled
from agents.tracing import get_trace_provider
from agents_helpers import PROMPT, REPLY, Tool, model_for, tool_then_text

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai import instrument_openai
from graphmind_openai.testing import FakeOpenAI
from graphmind_openai_agents import instrument_openai_agents, uninstrument_openai_agents
from graphmind_openai_agents._hooks import HOOKS
from graphmind_openai_agents._model import MODEL_MARK


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(chunks=3, default_reply=tool_then_text) as provider:
        yield provider


def _originals() -> list[Any]:
    return [vars(owner).get(row.attr) for owner, row in HOOKS]


async def test_instrument_twice_is_once_and_undo_puts_back_the_very_originals(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    before = _originals()
    assert instrument_openai_agents(session=gm) and instrument_openai_agents(session=gm)
    assert all(now is not was for now, was in zip(_originals(), before, strict=True))
    model = model_for(fake)
    agent = Agent(name="planner", tools=[Tool().tool], model=model)
    await Runner.run(agent, PROMPT)
    assert {"get_response", "stream_response", MODEL_MARK} <= set(vars(model))  # the model used was gated
    fakehub.wait_for(lambda: any(e.get("name") == "planner" for e in fakehub.of_type("run.started")))
    run_id = next(e["runId"] for e in fakehub.of_type("run.started") if e.get("name") == "planner")
    fakehub.wait_for(lambda: any(e["runId"] == run_id for e in fakehub.of_type("run.finished")))
    uninstrument_openai_agents()
    assert all(now is was for now, was in zip(_originals(), before, strict=True))
    assert not {"get_response", "stream_response", MODEL_MARK} & set(vars(model)), "the model is bare again"
    count = len([e for e in fakehub.events if e.get("runId") == run_id or e["type"] == "run.started"])
    result = await Runner.run(agent, PROMPT)
    with gm.span("marker"):  # everything sent before it has reached the hub once it has
        pass
    fakehub.wait_for(lambda: any(e.get("name") == "marker" for e in fakehub.of_type("node.finished")))
    # nothing more from the agent: the marker's run is the implicit one, not a new named run
    after = [e for e in fakehub.events if e.get("runId") == run_id or e["type"] == "run.started"]
    assert result.final_output == REPLY and len(after) == count + 1 and after[-1].get("implicit") is True


def test_a_disabled_session_patches_nothing() -> None:
    before = _originals()
    client = graphmind.Client(app="disabled", enabled=False)
    try:
        assert instrument_openai_agents(session=client) is False
        assert _originals() == before
    finally:
        client.dispose()


async def test_with_graphmind_openai_on_the_same_client_each_model_call_is_one_node(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    """The Agents SDK's model owns the call (graphmind.adapter.owned_model_call): the openai
    client's own wrapper passes that request through, so one llm:step per model call, ours."""
    assert instrument_openai_agents(session=gm)
    model = model_for(fake)
    instrument_openai(model._client, session=gm)  # the AsyncOpenAI the model posts with
    result = await Runner.run(Agent(name="planner", tools=[Tool().tool], model=model), PROMPT)
    assert result.final_output == REPLY and fake.request_count == 2
    with gm.span("marker"):
        pass
    fakehub.wait_for(lambda: any(e.get("name") == "marker" for e in fakehub.of_type("node.finished")))
    steps = [e for e in fakehub.of_type("node.started") if e["nodeId"] == "llm:step"]
    assert len(steps) == 2 and all(s["attrs"]["framework"] == "openai-agents" for s in steps)
    # the same client used directly (not by an agent) is still graphmind-openai's
    await model._client.chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "hi"}]
    )
    fakehub.wait_for(
        lambda: len([e for e in fakehub.of_type("node.started") if e["nodeId"] == "llm:step"]) == 3
    )


class _OffHost:
    """Refuses and counts every connection to a host that is not this machine."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.refused: list[Any] = []
        connect = socket.socket.connect

        def guarded(sock: socket.socket, address: Any) -> Any:
            host = address[0] if isinstance(address, tuple) else address
            if sock.family in (socket.AF_INET, socket.AF_INET6) and host not in (
                "127.0.0.1",
                "::1",
                "localhost",
            ):
                self.refused.append(address)
                raise ConnectionRefusedError(f"test: no connection to {address} may leave this machine")
            return connect(sock, address)

        monkeypatch.setattr(socket.socket, "connect", guarded)


@pytest.mark.parametrize("keep_local", ["tracing-left-on", "set_trace_processors([])"])
async def test_no_request_leaves_for_another_host_with_the_sdks_tracing_at_the_users_setting(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, monkeypatch: pytest.MonkeyPatch, keep_local: str
) -> None:
    guard = _OffHost(monkeypatch)
    set_tracing_disabled(False)  # the SDK's default: tracing on (its exporter needs OPENAI_API_KEY)
    provider = get_trace_provider()
    processors = provider._multi_processor._processors
    if keep_local != "tracing-left-on":
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-would-export")
        set_trace_processors([])  # docs/openai-agents.md: how to keep the SDK's traces local
    try:
        assert instrument_openai_agents(session=gm)
        assert provider._multi_processor._processors == (
            processors if keep_local == "tracing-left-on" else ()
        ), "GraphMind leaves the SDK's trace processors as the app set them"
        result = await Runner.run(Agent(name="planner", tools=[Tool().tool], model=model_for(fake)), PROMPT)
        assert result.final_output == REPLY
        provider.force_flush()
        assert fake.request_count == 2 and guard.refused == []
    finally:
        provider._multi_processor.set_processors(list(processors))
        set_tracing_disabled(True)


def test_a_hook_the_installed_sdk_lacks_warns_once_and_patches_nothing(
    gm: graphmind.Client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    before = _originals()
    monkeypatch.delattr(agents.run_internal.turn_resolution, "execute_handoffs")
    with caplog.at_level("WARNING"):
        assert instrument_openai_agents(session=gm) is False
    after = _originals()  # row 3 is execute_handoffs, the one taken away; the others as they were
    assert HOOKS[3][1].attr == "execute_handoffs" and after[3] is None
    assert after[:3] + after[4:] == before[:3] + before[4:]
    assert any("no longer has a hook graphmind-openai-agents" in r.getMessage() for r in caplog.records)
