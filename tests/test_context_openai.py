"""Context X-ray on the real hub, OpenAI: a 6-step tool loop whose fake provider counts the prompt
with the same offline tokenizer and OpenAI's cookbook overhead; surgery at a held model call."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from openai import OpenAI

import graphmind
from graphmind_openai import instrument_openai
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.context.tokenizer import for_model
from graphmind_server.testing import HubProcess, in_thread, wait_for

MODEL = "gpt-4o-mini"
TOOLS = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
SYSTEM = "You are a careful travel planner. Look things up before you answer, one city at a time. " * 12


@pytest.fixture(scope="module")
def hub_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with HubProcess(tmp_path_factory.mktemp("hub") / "hub.db") as process:
        yield process
    assert "Traceback" not in process.stderr, process.stderr


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    found = for_model(MODEL)
    if not found.exact:
        pytest.skip("no offline o200k_base encoding here (tiktoken and LiteLLM's copy are optional)")
    return found


@pytest.fixture
def client(hub_process: HubProcess) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="xray", url=hub_process.ingest_url, retry_interval=0.2)
    assert c.ready(10)
    yield c
    c.dispose()


def _context(hub: HubProcess, run_id: str, node: str, instance: str | None = None) -> dict[str, Any]:
    query = f"?instance={instance}" if instance else ""
    status, body = hub.api("GET", f"/api/runs/{run_id}/nodes/{node}/context{query}")
    assert status == 200, body
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
            call = msg.tool_calls[0]
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
