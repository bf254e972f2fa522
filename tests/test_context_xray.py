"""Context X-ray on one real hub (docs/context.md). OpenAI: a 6-step tool loop whose fake provider
counts the prompt with the same offline tokenizer and OpenAI's cookbook overhead, and surgery at a
held model call. Every other adapter: its model node breaks down into parts that sum to the input
tokens its provider reported (estimated and scaled where there is no tokenizer of that model). A
tool result of 60 % of the window raises the part warning."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai import OpenAI

import graphmind
from graphmind_openai import instrument_openai
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.context.tokenizer import for_model
from graphmind_server.testing import HubProcess, in_thread, wait_for

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
        status, body = hub.api(
            "GET", f"/api/runs/{run_id}/nodes/{e['nodeId']}/context?instance={e['instanceId']}"
        )
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
        api = instrument_anthropic(
            Anthropic(base_url=fake.base_url, api_key="k", max_retries=0), session=client
        )
        with client.run("anthropic") as run:
            api.messages.create(
                model="claude-sonnet-4-20250514",
                max_tokens=100,
                system="You plan trips and answer briefly.",
                messages=[
                    {"role": "user", "content": "Plan a day in Cairo"},
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "tool_use", "id": "t1", "name": "search", "input": {"q": "cairo"}}
                        ],
                    },
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": "t1",
                                "content": "sunny, 31 C, museums open",
                            }
                        ],
                    },
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

    reply = AIMessage(
        "Visit the pyramids.", usage_metadata={"input_tokens": 57, "output_tokens": 4, "total_tokens": 61}
    )
    model = FakeMessagesListChatModel(responses=[reply])
    with client.run("langchain") as run:
        model.invoke(
            [
                SystemMessage("You plan trips."),
                HumanMessage("Plan a day in Cairo, with a museum and a river walk."),
            ],
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
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=42, candidates_token_count=3, total_token_count=45
        )
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
    # gpt-4 has an 8,192-token window (store/context_sizes.json): a ~4,900-token tool result is 60 % of it.
    big = "The museum's opening hours and ticket prices vary by season. " * 410
    with FakeOpenAI() as fake:
        api = instrument_openai(OpenAI(base_url=fake.base_url, api_key="k"), session=client)
        with client.run("big") as run:
            api.chat.completions.create(
                model="gpt-4",
                messages=[
                    {"role": "user", "content": "Plan a day in Cairo"},
                    {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {"id": "c1", "type": "function", "function": {"name": "hours", "arguments": "{}"}}
                        ],
                    },
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


# ---- OpenAI: the tokenizer's own counts, the step diff, surgery -------------------------------------

MODEL = "gpt-4o-mini"
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
SYSTEM = "You are a careful travel planner. Look things up before you answer, one city at a time. " * 12


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    found = for_model(MODEL)
    if not found.exact:
        pytest.skip("no offline o200k_base encoding here (tiktoken and LiteLLM's copy are optional)")
    return found


def _context(hub: HubProcess, run_id: str, node: str, instance: str | None = None) -> dict[str, Any]:
    query = f"?instance={instance}" if instance else ""
    status, body = hub.api("GET", f"/api/runs/{run_id}/nodes/{node}/context{query}")
    assert status == 200 and isinstance(body, dict), body
    return body


def _steps(hub: HubProcess, run_id: str, count: int) -> list[dict[str, Any]]:
    def ended() -> list[dict[str, Any]] | None:
        events = hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"]
        done = [e for e in events if e["type"] == "node.finished" and e["nodeId"] == "llm:step"]
        return done if len(done) >= count else None

    return list(wait_for(ended, 10, f"{count} model steps"))


def _loop(client: graphmind.Client, fake: FakeOpenAI, steps: int) -> str:
    openai = instrument_openai(OpenAI(base_url=fake.base_url, api_key="test"), session=client)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Plan three days: Cairo, Luxor, Aswan."},
    ]
    with client.run("loop") as run:
        for i in range(steps):
            reply = openai.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)  # type: ignore[arg-type]
            msg = reply.choices[0].message
            if not msg.tool_calls:
                break
            call: Any = msg.tool_calls[0]
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.function.name, "arguments": call.function.arguments},
                        }
                    ],
                }
            )
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "content": f"result {i}: " + "sunny and warm, " * (10 * (i + 1)),
                }
            )
    return run.run_id


def test_a_six_step_tool_loop_sums_to_the_reported_prompt_tokens(
    hub_process: HubProcess, client: graphmind.Client, tokenizer: Any
) -> None:
    script = [
        FakeOpenAI.tool_call("lookup", {"city": c}) for c in ("Cairo", "Luxor", "Aswan", "Giza", "Siwa")
    ]
    with FakeOpenAI(count_tokens=tokenizer.count) as fake:
        fake.script([*script, "Here is the plan."])
        run_id = _loop(client, fake, 6)
    ended = _steps(hub_process, run_id, 6)
    assert len(ended) == 6
    bodies = [_context(hub_process, run_id, "llm:step", e["instanceId"]) for e in ended]
    for step, body in zip(ended, bodies, strict=True):
        reported = step["usage"]["inputTokens"]
        assert body["reportedInputTokens"] == reported and body["tokenizer"] == "o200k_base"
        assert body["estimated"] is False and body["scaledTo"] is None
        assert sum(p["tokens"] for p in body["parts"]) == body["total"]
        assert abs(body["total"] - reported) <= 0.02 * reported, (body["total"], reported)
    # Step 4 against step 3: exactly the assistant's call and the tool's result were added.
    diff = bodies[3]["diff"]
    assert diff["previous"] == {"nodeId": "llm:step", "instanceId": ended[2]["instanceId"]}
    added = [p for p in bodies[3]["parts"] if p["id"] in diff["added"]]
    assert [(p["kind"], p["role"]) for p in added] == [("message", "assistant"), ("tool_result", "tool")]
    assert diff["removed"] == [] and diff["changed"] == []
    assert diff["delta"] == bodies[3]["total"] - bodies[2]["total"]
    # The per-step chart reads the reported tokens.
    status, chart = hub_process.api("GET", f"/api/runs/{run_id}/context")
    assert status == 200
    assert [s["inputTokens"] for s in chart["steps"]] == [e["usage"]["inputTokens"] for e in ended]
    assert all(s["contextLimit"] == 128000 for s in chart["steps"])


def test_dropping_the_largest_tool_result_at_a_held_call_reaches_the_provider(
    hub_process: HubProcess, client: graphmind.Client, tokenizer: Any
) -> None:
    with FakeOpenAI(count_tokens=tokenizer.count) as fake:
        fake.script([FakeOpenAI.tool_call("lookup", {"city": c}) for c in ("Cairo", "Luxor")])
        _loop(client, fake, 2)  # two steps: the conversation now has two tool results
        status, state = hub_process.api(
            "PUT", "/api/debug", {"breakpoints": [{"nodeId": "llm:step", "gate": "before"}]}
        )
        assert status == 200 and "pending" not in state
        openai = instrument_openai(OpenAI(base_url=fake.base_url, api_key="test"), session=client)
        last = json.loads(json.dumps(fake.requests[-1].body["messages"]))
        last.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c9", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
                ],
            }
        )
        last.append({"role": "tool", "tool_call_id": "c9", "content": "big " * 400})

        def held_call() -> str:
            with client.run("surgery") as run:
                openai.chat.completions.create(model=MODEL, messages=last, tools=TOOLS)  # type: ignore[arg-type]
            return run.run_id

        thread, out = in_thread(held_call)
        try:
            gate = hub_process.held_gates()[0]
            before = _context(hub_process, gate["runId"], "llm:step", gate["instanceId"])
            assert before["held"] is True
            largest = max(
                (p for p in before["parts"] if p["kind"] == "tool_result"), key=lambda p: p["tokens"]
            )
            assert "big big" in largest["preview"]
            status, edit = hub_process.api(
                "POST",
                f"/api/runs/{gate['runId']}/nodes/llm:step/context/edit?instance={gate['instanceId']}",
                {"input": gate["input"], "ops": [{"path": largest["path"], "op": "drop"}]},
            )
            assert status == 200, edit
            assert edit["breakdown"]["total"] < before["total"] - 400
            assert [r["label"] for r in edit["breakdown"]["diff"]["removed"]] == [
                "assistant #4 → lookup",
                "tool result c9",
            ]
            status, body = hub_process.api(
                "POST", f"/api/gates/{gate['gateId']}", {"action": "continue", "input": edit["input"]}
            )
            assert status == 200, body
        finally:
            hub_process.api("PUT", "/api/debug", {"breakpoints": []})
            thread.join(10)
        assert "value" in out, out
    sent = fake.requests[-1].body["messages"]
    assert all(m.get("tool_call_id") != "c9" for m in sent)
    assert all("c9" not in json.dumps(m.get("tool_calls")) for m in sent)
    surgery_run = out["value"]
    finished = _steps(hub_process, surgery_run, 1)[0]
    assert finished["edited"] is True and finished["input"] == edit["input"]
    after = _context(hub_process, surgery_run, "llm:step")
    assert after["total"] == edit["breakdown"]["total"]
    assert after["total"] == pytest.approx(finished["usage"]["inputTokens"], rel=0.02)
