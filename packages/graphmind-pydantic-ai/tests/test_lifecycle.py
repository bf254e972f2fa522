"""instrument / uninstrument: in place, idempotent, an exact undo, the run's own capabilities kept,
and with no hub (detached) the agent gives what the bare agent gives."""

from __future__ import annotations

from typing import Any

import pytest
from pa_helpers import ScriptedModel, Search, search_then_answer, tool_agent
from pydantic_ai import Agent
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.exceptions import UserError
from pydantic_ai.messages import ModelResponse, TextPart
from pydantic_ai.models import Model

import graphmind
from graphmind.testing import FakeHub
from graphmind_pydantic_ai import GraphmindCapability, instrument_pydantic_ai, uninstrument_pydantic_ai
from graphmind_pydantic_ai._model import GatedModel


async def test_undo_puts_back_exactly_the_agents_own_namespace(
    gm: graphmind.Client, fakehub: FakeHub
) -> None:
    agent = tool_agent(Search(), ScriptedModel([search_then_answer]))
    before = dict(vars(agent))
    assert instrument_pydantic_ai(agent, session=gm) is agent
    assert instrument_pydantic_ai(agent, session=gm) is agent  # twice is once
    assert "iter" in vars(agent)
    assert uninstrument_pydantic_ai(agent) is agent
    assert vars(agent).keys() == before.keys() and all(vars(agent)[k] is v for k, v in before.items())
    assert uninstrument_pydantic_ai(agent) is agent  # undoing an agent that is not instrumented: nothing
    assert (await agent.run("find cats")).output == "saw: results for cats"
    assert fakehub.of_type("node.started") == []


async def test_a_runs_own_capabilities_are_kept(gm: graphmind.Client, fakehub: FakeHub) -> None:
    seen: list[str] = []

    class Marker(AbstractCapability[Any]):
        def get_wrapper_model(self, model: Model) -> Model | None:
            seen.append(type(model).__name__)
            return None

    agent = instrument_pydantic_ai(Agent(ScriptedModel(["hi there"]).model, name="kept"), session=gm)
    assert (await agent.run("hi", capabilities=[Marker()])).output == "hi there"
    assert seen, "the run's own capability ran"
    fakehub.wait_for(lambda: bool(fakehub.of_type("run.finished")), what="the run's end")
    assert len([e for e in fakehub.of_type("node.started") if e["nodeId"] == "llm:step"]) == 1


async def test_detached_the_agent_gives_what_the_bare_agent_gives(tmp_path: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("GRAPHMIND_HOME", str(tmp_path))
    client = graphmind.Client(app="detached", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    try:
        results = []
        for instrumented in (False, True):
            search, model = Search(), ScriptedModel([search_then_answer])
            agent = tool_agent(search, model)
            if instrumented:
                instrument_pydantic_ai(agent, session=client)
            result = await agent.run("find cats")
            results.append((result.output, search.calls, model.calls, len(result.all_messages())))
        assert results[0] == results[1] == ("saw: results for cats", 1, 2, 4)
        assert client.stats()["events"] > 0
    finally:
        client.dispose()


def test_the_capability_built_into_an_agent_reports_to_its_session(
    gm: graphmind.Client, fakehub: FakeHub
) -> None:
    agent: Agent[None, str] = Agent(
        ScriptedModel(["built in"]).model, name="built", capabilities=[GraphmindCapability(session=gm)]
    )
    assert agent.run_sync("hi").output == "built in"
    fakehub.wait_for(lambda: bool(fakehub.of_type("run.finished")), what="the run's end")
    assert [r["name"] for r in fakehub.of_type("run.started")] == ["built"]


async def test_one_gated_model_serves_every_attempt_and_run_of_an_agents_model(
    gm: graphmind.Client, fakehub: FakeHub
) -> None:
    # `get_wrapper_model` is asked for every attempt: the agent's model keeps one wrapper
    # (docs/pydantic-ai.md, "Cost"); another model gets its own.
    served: list[Model] = []

    class Served(AbstractCapability[Any]):
        async def after_model_request(self, ctx: Any, *, request_context: Any, response: Any) -> Any:
            served.append(request_context.model)
            return response

    model = ScriptedModel([search_then_answer] * 2)
    agent = instrument_pydantic_ai(tool_agent(Search(), model), session=gm)
    for prompt in ("cats", "more cats"):
        assert (await agent.run(prompt, capabilities=[Served()])).output == "saw: results for cats"
    assert len(served) == 4 and all(type(m) is GatedModel and m is served[0] for m in served)
    assert served[0].wrapped is model.model  # type: ignore[attr-defined]
    other = ScriptedModel(["other"])
    assert (await agent.run("x", model=other.model, capabilities=[Served()])).output == "other"
    assert served[-1] is not served[0] and served[-1].wrapped is other.model  # type: ignore[attr-defined]


class RequestOnly(Model):
    """A model that implements `request` only, as a custom model may."""

    async def request(
        self, messages: Any, model_settings: Any, model_request_parameters: Any
    ) -> ModelResponse:
        return ModelResponse(parts=[TextPart("answered")])

    @property
    def model_name(self) -> str:
        return "request-only"

    @property
    def system(self) -> str:
        return "test"


async def test_a_model_that_cannot_stream_fails_a_streamed_run_as_the_bare_agent_does(
    gm: graphmind.Client, fakehub: FakeHub
) -> None:
    # The framework names such a model in a clear UserError (pydantic_ai/_agent_graph.py:1073); a
    # wrapper that can stream would hide it behind the model's NotImplementedError.
    errors: list[str] = []
    for instrumented in (False, True):
        agent: Agent[None, str] = Agent(RequestOnly())
        if instrumented:
            instrument_pydantic_ai(agent, session=gm)
        with pytest.raises(UserError) as caught:
            async with agent.run_stream("hi") as result:
                await result.get_output()
        errors.append(str(caught.value))
        assert (await agent.run("hi")).output == "answered"  # a request it can serve is served
    assert errors[0] == errors[1] and errors[0].startswith("RequestOnly does not support streamed requests")
    fakehub.wait_for(lambda: len(fakehub.of_type("run.finished")) == 2, what="both runs' ends")
    assert [e["nodeId"] for e in fakehub.of_type("node.finished")] == ["llm:step"]
