"""Context X-ray across adapters on one real hub: each framework's model node breaks down into parts
that sum to the input tokens its provider reported (estimated and scaled where there is no
tokenizer of that model), and a tool result of 60 % of the window raises the part warning."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmind
from graphmind_server.testing import HubProcess, wait_for

PACKAGES = Path(__file__).parents[1] / "packages"


@pytest.fixture(scope="module")
def hub_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with HubProcess(tmp_path_factory.mktemp("hub") / "hub.db") as process:
        yield process
    assert "Traceback" not in process.stderr, process.stderr


@pytest.fixture(scope="module")
def client(hub_process: HubProcess) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="xray-adapters", url=hub_process.ingest_url, retry_interval=0.2)
    assert c.ready(10)
    yield c
    c.dispose()


def _model_contexts(hub: HubProcess, run_id: str) -> list[dict[str, Any]]:
    """The breakdown of every model step of a run that reported its input tokens."""

    def ended() -> list[dict[str, Any]] | None:
        status, run = hub.api("GET", f"/api/runs/{run_id}")
        if status != 200 or run.get("status") == "running":
            return None
        events = hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"]
        return [e for e in events if e["type"] == "node.finished" and e["nodeId"].startswith("llm:step")]

    out = []
    for e in wait_for(ended, 10, f"run {run_id} finished"):
        status, body = hub.api("GET", f"/api/runs/{run_id}/nodes/{e['nodeId']}/context?instance={e['instanceId']}")
        assert status == 200, body
        out.append({**body, "_usage": e.get("usage")})
    return out


def _sums_to_reported(body: dict[str, Any]) -> None:
    reported = (body["_usage"] or {}).get("inputTokens")
    assert reported, f"the step reported no input tokens: {body['_usage']}"
    assert body["reportedInputTokens"] == reported
    assert sum(p["tokens"] for p in body["parts"]) == body["total"]
    if body["estimated"]:
        assert body["scaledTo"] == reported and body["total"] == reported, body
    else:
        assert abs(body["total"] - reported) <= 0.02 * reported, (body["total"], reported)
    assert body["tokenizer"] and body["parts"]


def test_anthropic(hub_process: HubProcess, client: graphmind.Client) -> None:
    from anthropic import Anthropic

    from graphmind_anthropic import instrument_anthropic
    from graphmind_anthropic.testing import FakeAnthropic

    with FakeAnthropic() as fake:
        api = instrument_anthropic(Anthropic(base_url=fake.base_url, api_key="k", max_retries=0), session=client)
        with client.run("anthropic") as run:
            api.messages.create(
                model="claude-sonnet-4-20250514",
                max_tokens=100,
                system="You plan trips and answer briefly.",
                messages=[
                    {"role": "user", "content": "Plan a day in Cairo"},
                    {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "cairo"}}]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny, 31 C, museums open"}]},
                ],
            )
    (body,) = _model_contexts(hub_process, run.run_id)
    _sums_to_reported(body)
    assert body["estimated"] is True and body["contextLimit"] == 200000
    kinds = [p["kind"] for p in body["parts"]]
    assert kinds == ["system", "message", "message", "tool_result"], kinds
    assert body["parts"][3]["path"] == "/messages/2/content/0"


def test_langchain(hub_process: HubProcess, client: graphmind.Client) -> None:
    from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

    from graphmind_langchain import GraphmindCallbackHandler

    reply = AIMessage("Visit the pyramids.", usage_metadata={"input_tokens": 57, "output_tokens": 4, "total_tokens": 61})
    model = FakeMessagesListChatModel(responses=[reply])
    with client.run("langchain") as run:
        model.invoke(
            [SystemMessage("You plan trips."), HumanMessage("Plan a day in Cairo, with a museum and a river walk.")],
            config={"callbacks": [GraphmindCallbackHandler(client)]},
        )
    (body,) = _model_contexts(hub_process, run.run_id)
    _sums_to_reported(body)
    assert [p["role"] for p in body["parts"]] == ["system", "user"]


def test_pydantic_ai(hub_process: HubProcess, client: graphmind.Client) -> None:
    from pydantic_ai import Agent

    from graphmind_pydantic_ai import instrument_pydantic_ai
    from graphmind_pydantic_ai.testing import ScriptedModel, call

    model = ScriptedModel([call("lookup", city="Cairo"), "Visit the pyramids."])
    agent = instrument_pydantic_ai(Agent(model.model, instructions="You plan trips."), session=client)

    @agent.tool_plain
    def lookup(city: str) -> str:
        return f"{city}: sunny, 31 C, museums open until 17:00"

    with client.run("pydantic-ai") as run:
        agent.run_sync("Plan a day in Cairo")
    bodies = _model_contexts(hub_process, run.run_id)
    assert len(bodies) == 2
    for body in bodies:
        _sums_to_reported(body)
    assert "tool_result" in [p["kind"] for p in bodies[1]["parts"]]
    added = [p["kind"] for p in bodies[1]["parts"] if p["id"] in bodies[1]["diff"]["added"]]
    assert "tool_result" in added


def test_openai_agents(hub_process: HubProcess, client: graphmind.Client) -> None:
    from agents import Agent, Runner

    from graphmind_openai.testing import FakeOpenAI
    from graphmind_openai_agents import instrument_openai_agents

    sys.path.insert(0, str(PACKAGES / "graphmind-openai-agents" / "tests"))
    from agents_helpers import Tool, model_for, tool_then_text

    assert instrument_openai_agents(session=client)
    # A model name with no offline tokenizer, so the fake's word counts are what the parts scale to.
    with FakeOpenAI(default_reply=tool_then_text) as fake:
        model = model_for(fake)
        model.model = "fake-agents-model"
        agent = Agent(name="planner", instructions="Plan.", tools=[Tool().tool], model=model)
        with client.run("agents") as run:
            Runner.run_sync(agent, "Plan a day in Cairo")
    bodies = _model_contexts(hub_process, run.run_id)
    assert len(bodies) == 2
    for body in bodies:
        _sums_to_reported(body)
        assert body["estimated"] is True
    assert bodies[0]["parts"][0]["kind"] == "system"


def test_google_adk(hub_process: HubProcess, client: graphmind.Client) -> None:
    from google.adk.models.llm_response import LlmResponse
    from google.genai import types

    from graphmind_google_adk import instrument_runner

    sys.path.insert(0, str(PACKAGES / "graphmind-google-adk" / "tests"))
    from adk_helpers import ScriptedLlm, agent, run_sync, runner

    def script(_request: Any) -> list[LlmResponse]:
        usage = types.GenerateContentResponseUsageMetadata(prompt_token_count=42, candidates_token_count=3, total_token_count=45)
        content = types.Content(role="model", parts=[types.Part(text="Visit the pyramids.")])
        return [LlmResponse(content=content, usage_metadata=usage)]

    r = instrument_runner(runner(agent(ScriptedLlm(script=script))), session=client)
    with client.run("adk") as run:
        list(run_sync(r, "Plan a day in Cairo"))
    (body,) = _model_contexts(hub_process, run.run_id)
    _sums_to_reported(body)
    assert body["reportedInputTokens"] == 42 and body["estimated"] is True


def test_a_tool_result_of_sixty_percent_of_the_window_raises_the_part_warning(
    hub_process: HubProcess, client: graphmind.Client
) -> None:
    from openai import OpenAI

    from graphmind_openai import instrument_openai
    from graphmind_openai.testing import FakeOpenAI

    # gpt-4 has an 8,192-token window (store/context_sizes.json): a ~4,900-token tool result is 60 % of it.
    big = "The museum's opening hours and ticket prices vary by season. " * 410
    with FakeOpenAI() as fake:
        api = instrument_openai(OpenAI(base_url=fake.base_url, api_key="k"), session=client)
        with client.run("big") as run:
            api.chat.completions.create(
                model="gpt-4",
                messages=[
                    {"role": "user", "content": "Plan a day in Cairo"},
                    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "hours", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": "c1", "content": big},
                ],
            )
    (body,) = _model_contexts(hub_process, run.run_id)
    assert body["contextLimit"] == 8192
    result = next(p for p in body["parts"] if p["kind"] == "tool_result")
    assert 0.55 < result["tokens"] / 8192 < 0.7, result["tokens"]
    warnings = [w for w in body["warnings"] if w["code"] == "part"]
    assert [w["parts"] for w in warnings] == [[result["id"]]]
    assert "of the window" in warnings[0]["message"]
    assert [w["code"] for w in body["warnings"]] == ["window", "part"] or body["windowShare"] <= 0.8
