"""Apps with no GraphMind adapter, instrumented with OpenTelemetry, exporting OTLP/HTTP to the
real hub (`OTEL_EXPORTER_OTLP_ENDPOINT` = the hub): OpenInference's OpenAI instrumentor, a
smolagents agent under its OpenInference instrumentor, and a span set built by hand with the
GenAI semantic conventions. All offline: the model is graphmind_openai.testing's loopback fake."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from openai import OpenAI
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai import instrument_openai
from graphmind_openai.testing import TRIP_MESSAGES, TRIP_TOOLS, FakeOpenAI
from graphmind_server.testing import HubProcess, wait_for

MODEL = "gpt-4o-mini"
CALL = FakeOpenAI.tool_call("search_flights", {"to": "CAI"})


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as f:
        yield f


@pytest.fixture
def provider(hub: HubProcess, monkeypatch: pytest.MonkeyPatch) -> Iterator[TracerProvider]:
    """A tracer provider exporting to the hub exactly as an app configured by environment does."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", hub.url)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "otel-app")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip")  # the browser test posts uncompressed
    p = TracerProvider()
    p.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    yield p
    p.shutdown()


def _run(hub: HubProcess, status: str = "finished") -> dict[str, Any]:
    def done() -> dict[str, Any] | None:
        runs = hub.api("GET", "/api/runs")[1]["runs"]
        return runs[0] if runs and runs[0]["status"] == status else None

    return dict(wait_for(done, 15, f"a {status} run"))


def _events(hub: HubProcess, run_id: str) -> list[dict[str, Any]]:
    return list(hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"])


def _executions(evs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each node execution with its parent's node id, input, output and usage, in start order."""
    node_of = {e.get("instanceId"): e["nodeId"] for e in evs if e["type"] in ("run.started", "node.started")}
    out: dict[str, dict[str, Any]] = {}
    for e in evs:
        if e["type"] == "node.started":
            out[e["instanceId"]] = {
                "nodeId": e["nodeId"],
                "parent": node_of.get(e["parentInstanceId"]),
                "input": e.get("input"),
                "attrs": e.get("attrs"),
                "start": e["ts"],
            }
        elif e["type"] in ("node.finished", "node.error"):
            out[e["instanceId"]].update(output=e.get("output"), usage=e.get("usage"), error=e.get("error"))
    return sorted(out.values(), key=lambda x: x["start"])


def test_an_openinference_openai_app_shows_its_llm_step_as_graphmind_openai_records_it(
    hub: HubProcess, fake: FakeOpenAI, provider: TracerProvider
) -> None:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    fake.script([CALL])
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    try:
        client = OpenAI(base_url=fake.base_url, api_key="test")
        client.chat.completions.create(model=MODEL, messages=TRIP_MESSAGES, tools=TRIP_TOOLS)
    finally:
        OpenAIInstrumentor().uninstrument()
    provider.force_flush()
    run = _run(hub)
    assert run["clientId"] == "otlp" and run["app"] == "otel-app"
    assert run["meta"]["otlp"]["gatedBy"] == "graphmind-openai"
    [step] = _executions(_events(hub, run["id"]))
    assert step["nodeId"] == "llm:step" and step["parent"] == f"agent:{run['name']}"
    assert step["attrs"]["model"] == MODEL
    assert step["usage"]["inputTokens"] > 0 and step["usage"]["totalTokens"] > step["usage"]["inputTokens"]

    # The same call through graphmind-openai (the gated adapter): the same input, reply and usage.
    fake.script([CALL])
    with FakeHub() as fakehub:
        gm = graphmind.Client(app="gated", url=fakehub.url)
        try:
            assert gm.ready(5)
            gated = instrument_openai(OpenAI(base_url=fake.base_url, api_key="test"), session=gm)
            gated.chat.completions.create(model=MODEL, messages=TRIP_MESSAGES, tools=TRIP_TOOLS)
            fakehub.wait_for(lambda: bool(fakehub.of_type("node.finished")), what="the step")
        finally:
            gm.dispose()
        started, finished = fakehub.of_type("node.started")[0], fakehub.of_type("node.finished")[0]
    assert (
        step["input"]
        == started["input"]
        == {
            "model": MODEL,
            "messages": TRIP_MESSAGES,
            "tools": ["search_flights"],
        }
    )
    assert step["output"] == finished["output"]
    assert step["output"]["tool_calls"][0]["name"] == "search_flights"
    assert step["usage"] == finished["usage"]


def test_a_smolagents_run_has_its_tool_and_llm_nodes_nested_under_each_step(
    hub: HubProcess, fake: FakeOpenAI, provider: TracerProvider
) -> None:
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor
    from smolagents import OpenAIServerModel, ToolCallingAgent, tool

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city.

        Args:
            city: the city's name
        """
        return f"sunny in {city}"

    fake.script(
        [
            FakeOpenAI.tool_call("get_weather", {"city": "Cairo"}),
            FakeOpenAI.tool_call("final_answer", {"answer": "It is sunny in Cairo"}),
        ]
    )
    SmolagentsInstrumentor().instrument(tracer_provider=provider)
    try:
        model = OpenAIServerModel(model_id=MODEL, api_base=fake.base_url, api_key="test")
        agent = ToolCallingAgent(tools=[get_weather], model=model, max_steps=3, verbosity_level=0)
        assert agent.run("What is the weather in Cairo?") == "It is sunny in Cairo"
    finally:
        SmolagentsInstrumentor().uninstrument()
    provider.force_flush()
    run = _run(hub)
    assert run["name"] == "ToolCallingAgent.run"
    execs = _executions(_events(hub, run["id"]))
    tree = [(x["nodeId"], x["parent"]) for x in execs]
    assert tree == [
        ("chain:Step 1", "agent:ToolCallingAgent.run"),
        ("llm:step", "chain:Step 1"),
        ("tool:get_weather", "chain:Step 1"),
        ("chain:Step 2", "agent:ToolCallingAgent.run"),
        ("llm:step", "chain:Step 2"),
        ("tool:final_answer", "chain:Step 2"),
    ]
    first_llm, weather = execs[1], execs[2]
    assert first_llm["input"]["messages"][-1]["content"].endswith("What is the weather in Cairo?")
    assert first_llm["output"]["tool_calls"][0]["name"] == "get_weather"
    assert first_llm["usage"]["inputTokens"] > 0
    assert weather["input"]["kwargs"] == {"city": "Cairo"} and weather["output"] == "sunny in Cairo"
    nodes = {n["nodeId"]: n for n in hub.api("GET", f"/api/runs/{run['id']}")[1]["nodes"]}
    assert nodes["llm:step"]["executions"] == 2 and nodes["tool:get_weather"]["status"] == "ok"
    agent_run = next(e for e in _events(hub, run["id"]) if e["type"] == "run.finished")
    assert agent_run["output"] == "It is sunny in Cairo"


def test_a_genai_convention_span_set_maps_to_the_same_shapes(
    hub: HubProcess, provider: TracerProvider
) -> None:
    """invoke_agent → chat (asks for a tool) → execute_tool → chat (answers), hand-built with the
    OTel SDK and the GenAI semantic conventions (1.37 message attributes)."""
    from opentelemetry.trace import Status, StatusCode

    tracer = provider.get_tracer("my.genai.app")
    user = [{"role": "user", "parts": [{"type": "text", "content": "Fly me to Cairo"}]}]
    ask = [
        {
            "role": "assistant",
            "parts": [
                {"type": "tool_call", "id": "call_1", "name": "search_flights", "arguments": {"to": "CAI"}}
            ],
            "finish_reason": "tool_call",
        }
    ]
    chat = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": MODEL}
    with tracer.start_as_current_span(
        "invoke_agent planner",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "planner"},
    ):
        with tracer.start_as_current_span(
            f"chat {MODEL}",
            attributes={
                **chat,
                "gen_ai.response.model": MODEL,
                "gen_ai.usage.input_tokens": 12,
                "gen_ai.usage.output_tokens": 5,
                "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "You plan trips."}]),
                "gen_ai.input.messages": json.dumps(user),
                "gen_ai.output.messages": json.dumps(ask),
            },
        ):
            pass
        with tracer.start_as_current_span(
            "execute_tool search_flights",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "search_flights",
                "gen_ai.tool.call.id": "call_1",
                "gen_ai.tool.call.arguments": json.dumps({"to": "CAI"}),
                "gen_ai.tool.call.result": json.dumps({"flights": 2}),
            },
        ):
            pass
        with tracer.start_as_current_span(f"chat {MODEL}", attributes=chat) as failing:
            failing.set_attribute("error.type", "RateLimitError")
            failing.set_status(Status(StatusCode.ERROR, "slow down"))
    provider.force_flush()
    run = _run(hub)
    assert run["name"] == "planner" and run["meta"]["otlp"]["scope"] == "my.genai.app"
    asked, search, failed = _executions(_events(hub, run["id"]))
    assert asked["attrs"]["otel"]["gatedBy"] == "graphmind-openai"  # gen_ai.provider.name
    assert (asked["nodeId"], asked["parent"]) == ("llm:step", "agent:planner")
    assert asked["input"] == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "You plan trips."},
            {"role": "user", "content": "Fly me to Cairo"},
        ],
    }
    assert asked["output"] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "name": "search_flights", "arguments": {"to": "CAI"}}],
        "finish_reason": "tool_call",
        "model": MODEL,
    }
    assert asked["usage"] == {"inputTokens": 12, "outputTokens": 5, "totalTokens": 17}
    assert (search["nodeId"], search["parent"], search["input"], search["output"]) == (
        "tool:search_flights",
        "agent:planner",
        {"to": "CAI"},
        {"flights": 2},
    )
    assert search["attrs"]["toolCallId"] == "call_1"
    assert failed["error"] == {"name": "RateLimitError", "message": "slow down", "stack": ""}
    nodes = {n["nodeId"]: n["status"] for n in hub.api("GET", f"/api/runs/{run['id']}")[1]["nodes"]}
    assert nodes == {"agent:planner": "ok", "llm:step": "error", "tool:search_flights": "ok"}


def test_a_graphmind_openai_run_recorded_as_otlp_into_another_hub_is_the_same_graph(
    hub: HubProcess, fake: FakeOpenAI, tmp_path: Any
) -> None:
    """A real SDK run (graphmind-openai, a wrapped tool, a failing tool) → `graphmind record
    --otlp-endpoint` → a second hub: names, kinds, parentage, inputs, outputs and tokens agree."""
    from graphmind_server.cli import main

    fake.script([CALL, "Two flights to Cairo."])
    assert hub.api("PUT", "/api/debug", {"pauseOnError": "off"})[0] == 200  # `book` fails on purpose
    gm = graphmind.Client(app="trip", url=hub.ingest_url)
    try:
        assert gm.ready(5)
        client = instrument_openai(OpenAI(base_url=fake.base_url, api_key="test"), session=gm)
        search = gm.wrap(lambda to: [{"flight": "MS778", "to": to}], name="search_flights")
        book = gm.wrap(lambda: 1 / 0, name="book")
        with gm.run("plan"):
            messages: list[Any] = list(TRIP_MESSAGES)
            reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TRIP_TOOLS)
            call = reply.choices[0].message.tool_calls[0]
            result = search(**json.loads(call.function.arguments))
            messages += [reply.choices[0].message.model_dump(exclude_none=True)]
            messages += [{"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)}]
            client.chat.completions.create(model=MODEL, messages=messages, tools=TRIP_TOOLS)
            with pytest.raises(ZeroDivisionError):
                book()
    finally:
        gm.dispose()
    original = _run(hub)
    with HubProcess(tmp_path / "b.db") as other:
        assert main(["record", "--db", str(hub.db), "--keep-secrets", "--otlp-endpoint", other.url]) == 0
        copy = _run(other)
        assert (copy["name"], copy["app"], copy["status"]) == ("plan", "trip", "finished")

        def shape(h: HubProcess, run_id: str) -> list[tuple[Any, ...]]:
            return [
                (
                    x["nodeId"],
                    x["parent"],
                    x["input"],
                    x.get("output"),
                    x.get("usage"),
                    (x.get("error") or {}).get("name"),
                )
                for x in _executions(_events(h, run_id))
            ]

        assert shape(other, copy["id"]) == shape(hub, original["id"])
        assert [s[0] for s in shape(other, copy["id"])] == [
            "llm:step",
            "tool:search_flights",
            "llm:step",
            "tool:book",
        ]
    assert "Traceback" not in other.stderr
