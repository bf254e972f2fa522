"""Safe to iterate, on a real hub (a subprocess): a refund agent on the OpenAI SDK and the loopback
fake provider, whose tools count their real executions (`lookup_order` a read and `issue_refund` a
write, both by the name rule). Its effects ledger through the API and `graphmind effects` (a real
subprocess, its exit status being the proof: 0 when no write ran)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from openai import OpenAI

import graphmind
from graphmind_openai import instrument_openai
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import HubProcess, in_thread, wait_for

MODEL = "gpt-test"
TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": name,
            "parameters": {"type": "object", "properties": props},
        },
    }
    for name, props in (
        ("lookup_order", {"order_id": {"type": "string"}}),
        ("issue_refund", {"order_id": {"type": "string"}, "amount": {"type": "number"}}),
    )
]
REFUND = {"order_id": "A1", "amount": 20}


class RefundAgent:
    """The agent loop: model step, the tools it asks for, again until it answers."""

    def __init__(self, gm: graphmind.Client, client: OpenAI) -> None:
        self.gm, self.client = gm, client
        self.bodies = {"lookup_order": 0, "issue_refund": 0}  # real executions of each body

        @gm.tool
        def lookup_order(order_id: str) -> dict[str, Any]:
            self.bodies["lookup_order"] += 1
            return {"order_id": order_id, "status": "delivered", "paid": 20}

        @gm.tool
        def issue_refund(order_id: str, amount: float) -> dict[str, Any]:
            self.bodies["issue_refund"] += 1
            return {"refunded": amount, "order_id": order_id}

        self.tools = {"lookup_order": lookup_order, "issue_refund": issue_refund}

    def __call__(self, runs: list[str]) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Refund order A1, it arrived broken"}]
        with self.gm.run("refund") as run:
            runs.append(run.run_id)
            for _ in range(5):
                reply = self.client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)  # type: ignore[arg-type]
                message = reply.choices[0].message
                if not message.tool_calls:
                    return str(message.content)
                messages.append(message.model_dump(exclude_none=True))
                for call in message.tool_calls:
                    fn = self.tools[call.function.name]  # type: ignore[union-attr]
                    with self.gm.tool_call(call.id):
                        result = fn(**json.loads(call.function.arguments))  # type: ignore[union-attr]
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)})
        raise AssertionError("the agent did not answer within 5 steps")


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as provider:
        provider.script(
            [
                FakeOpenAI.tool_call("lookup_order", {"order_id": "A1"}),
                FakeOpenAI.tool_call("issue_refund", REFUND),
                "Refunded 20 for order A1.",
            ]
        )
        yield provider


@pytest.fixture
def make_agent(hub: HubProcess, fake: FakeOpenAI) -> Iterator[Any]:
    """`make_agent(safe)`: the agent in an app started with GRAPHMIND_SAFE=safe; disposed after."""
    made: list[tuple[graphmind.Client, OpenAI]] = []

    def make(safe: str) -> RefundAgent:
        gm = graphmind.Client(
            app="refunds", url=hub.ingest_url, environ={**os.environ, "GRAPHMIND_SAFE": safe}
        )
        assert gm.ready(5)
        client = instrument_openai(
            OpenAI(base_url=fake.base_url, api_key="test-key", max_retries=0), session=gm
        )
        made.append((gm, client))
        return RefundAgent(gm, client)

    yield make
    for gm, client in made:
        client.close()
        gm.dispose()


def _effects_cli(hub: HubProcess, run_id: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graphmind_server", "effects", run_id, "--db", str(hub.db), *flags],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _finished(hub: HubProcess, run_id: str) -> None:
    wait_for(
        lambda: hub.api("GET", f"/api/runs/{run_id}")[1].get("status") == "finished", 10, "the run to finish"
    )


def test_under_simulate_the_refund_never_runs_and_the_ledger_proves_it(
    hub: HubProcess, make_agent: Any
) -> None:
    agent = make_agent("simulate")
    runs: list[str] = []
    answer = agent(runs)
    assert answer == "Refunded 20 for order A1."
    assert agent.bodies == {"lookup_order": 1, "issue_refund": 0}
    _finished(hub, runs[0])
    status, ledger = hub.api("GET", f"/api/runs/{runs[0]}/effects")
    assert status == 200
    [entry] = ledger["effects"]  # lookup_order is a read: never in the ledger
    assert (entry["name"], entry["class"], entry["source"], entry["outcome"], entry["by"]) == (
        "issue_refund",
        "write",
        "name rule",
        "simulated",
        "safe mode",
    )
    assert entry["input"] == REFUND and entry["runs"] == 0
    assert ledger["summary"]["writesRan"] == 0
    cli = _effects_cli(hub, runs[0])
    assert cli.returncode == 0, cli.stderr
    assert cli.stdout.splitlines()[0].endswith("0 writes ran")
    assert "issue_refund" in cli.stdout and "simulated" in cli.stdout and '"amount": 20' in cli.stdout
    # --json and an unknown run (one line, exit 2): packages/graphmind-server/tests/test_effects_ledger.py


def test_under_hold_answered_run_for_real_the_ledger_says_held_then_ran(
    hub: HubProcess, make_agent: Any
) -> None:
    agent = make_agent("hold")
    runs: list[str] = []
    thread, out = in_thread(lambda: agent(runs))
    [gate] = hub.held_gates()
    assert (gate["nodeId"], gate["gate"], gate["reason"]) == ("tool:issue_refund", "before", "effect")
    assert gate["effect"]["class"] == "write" and gate["effect"]["source"] == "name rule"
    assert "simulate" in gate["actions"]
    assert agent.bodies["issue_refund"] == 0  # held before its body
    held = hub.api("GET", f"/api/runs/{runs[0]}/effects")[1]
    assert [e["outcome"] for e in held["effects"]] == ["held"] and held["summary"]["writesRan"] == 0
    status, _ = hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})
    assert status == 200
    thread.join(10)
    assert out["value"] == "Refunded 20 for order A1."
    assert agent.bodies == {"lookup_order": 1, "issue_refund": 1}
    _finished(hub, runs[0])
    [entry] = hub.api("GET", f"/api/runs/{runs[0]}/effects")[1]["effects"]
    assert (entry["outcome"], entry["by"], entry["heldReason"], entry["runs"]) == (
        "held then ran",
        "api",
        "effect",
        1,
    )
    cli = _effects_cli(hub, runs[0])
    assert cli.returncode == 1, cli.stderr
    assert "1 write ran" in cli.stdout and "held then ran" in cli.stdout and "an API client" in cli.stdout
