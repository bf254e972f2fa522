"""The usual app layout against a real hub process: tools decorated, and an OpenAI client
instrumented with no `session=`, in a module of their own, imported before `main` calls
`gm.configure(app=..., url=...)`. Every call is a node of the configured client, a breakpoint on
the tool and on the model step holds, an error holds at the error gate (graphmind/_api/default.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import HubProcess, wait_for

TOOLS = """
import os

import graphmind as gm
from openai import OpenAI

from graphmind_openai import instrument_openai

# at import, before main() configures GraphMind: no session=, no client yet
llm = instrument_openai(OpenAI(base_url=os.environ["FAKE_OPENAI_URL"], api_key="k", max_retries=0))


@gm.tool
def search_orders(email: str) -> str:
    return f"A42 for {email}"


@gm.tool
def book(flight: str) -> str:
    return f"booked {flight}"


@gm.tool
def refund(order: str, amount: float) -> str:
    raise RuntimeError(f"payments are down, {order} not refunded")
"""

MAIN = """
import sys

import graphmind as gm

import tools


def main() -> None:
    gm.configure(app="two-modules", url=sys.argv[1])
    with gm.run("handle-ticket"):
        print(tools.search_orders(email="alex@example.com"), flush=True)
        print(tools.book(flight="TP-544"), flush=True)
        reply = tools.llm.chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "Where is my order?"}]
        )
        print(reply.choices[0].message.content, flush=True)
        print(tools.refund(order="A42", amount=30), flush=True)
    input()  # the test says when to exit


if __name__ == "__main__":
    main()
"""


def _next_gate(hub: HubProcess, proc: subprocess.Popen[str], seen: set[str]) -> dict[str, Any]:
    deadline = time.monotonic() + 30
    while True:
        gates = [g for g in hub.api("GET", "/api/gates")[1]["gates"] if g["gateId"] not in seen]
        if gates:
            seen.add(gates[0]["gateId"])
            return gates[0]
        assert proc.poll() is None, f"the app ended without holding: {proc.communicate()}"
        assert time.monotonic() < deadline, "no gate held: the calls did not reach the configured client"
        time.sleep(0.05)


def test_tools_and_a_client_instrumented_at_import_follow_configure_in_main(
    tmp_path: Path, hub: HubProcess
) -> None:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "main.py").write_text(MAIN)
    breakpoints = [{"nodeId": "tool:book", "gate": "before"}, {"nodeId": "llm:step", "gate": "before"}]
    assert hub.api("PUT", "/api/debug", {"breakpoints": breakpoints, "pauseOnError": "on"})[0] == 200
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMIND")}
    env["GRAPHMIND_HOME"] = str(tmp_path / "home")
    with FakeOpenAI(default_reply="from the provider") as fake:
        env["FAKE_OPENAI_URL"] = fake.base_url
        proc = subprocess.Popen(
            [sys.executable, "main.py", hub.ingest_url],
            cwd=tmp_path,
            env=env,
            text=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            seen: set[str] = set()
            held = []
            for answer in ("booked by a person", "hello from the debugger", "refund queued by a person"):
                gate = _next_gate(hub, proc, seen)
                held.append((gate["nodeId"], gate["gate"], gate["reason"]))
                body = {"action": "inject", "value": answer}
                assert hub.api("POST", f"/api/gates/{gate['gateId']}", body)[0] == 200
            out, err = proc.communicate("\n", timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert fake.request_count == 0  # the model step was answered at its before gate
    assert proc.returncode == 0, err
    assert held == [
        ("tool:book", "before", "breakpoint"),
        ("llm:step", "before", "breakpoint"),
        ("tool:refund", "error", "error"),
    ]
    assert out.split("\n")[:4] == [
        "A42 for alex@example.com",
        "booked by a person",
        "hello from the debugger",
        "refund queued by a person",
    ]
    runs = hub.api("GET", "/api/runs")[1]["runs"]
    assert [(r["name"], r["app"]) for r in runs] == [("handle-ticket", "two-modules")]
    run_id = runs[0]["id"]
    wait_for(lambda: hub.api("GET", f"/api/runs/{run_id}")[1].get("status") == "finished", 10, "run end")
    events = hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"]
    assert [e["nodeId"] for e in events if e["type"] == "node.started"] == [
        "tool:search_orders",
        "tool:book",
        "llm:step",
        "tool:refund",
    ]
