"""A newcomer's first script against a real hub process: a breakpoint set over the API before the
script starts holds its first tool call with no option set; holds from code show why on the card."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from graphmind_server.testing import HubProcess

SCRIPT = """
import graphmind as gm
search = gm.wrap(lambda q: f"the tool ran for {q}", name="search")
with gm.run("first-script"):
    print(search(q="lisbon"), flush=True)
input()  # the test says when to exit: the answer's confirmation must not race the process exit
"""

CODE_HOLDS = """
import graphmind as gm

@gm.tool(breakpoint="before")
def book(flight: str) -> str:
    return f"booked {flight}"

@gm.tool(hold_if=lambda amount, **_: amount > 100 and f"refund of {amount} is over 100")
def refund(order: str, amount: float) -> str:
    return f"refunded {amount}"

with gm.run("code-holds"):
    print(book(flight="TP-544"), refund(order="A1", amount=30), refund(order="A2", amount=250), flush=True)
input()  # the test says when to exit: the answer's confirmation must not race the process exit
"""


def start_script(tmp_path: Path, hub: HubProcess, code: str) -> subprocess.Popen[str]:
    script = tmp_path / "script.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMIND")}
    env["GRAPHMIND_URL"] = hub.ingest_url
    return subprocess.Popen(
        [sys.executable, str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        stdin=subprocess.PIPE,
    )


def next_gate(
    hub: HubProcess, proc: subprocess.Popen[str], seen: set[str], timeout: float = 30.0
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while True:
        gates = [g for g in hub.api("GET", "/api/gates")[1]["gates"] if g["gateId"] not in seen]
        if gates:
            seen.add(gates[0]["gateId"])
            return gates[0]
        assert proc.poll() is None, f"the script ended without holding: {proc.communicate()}"
        assert time.monotonic() < deadline, "no gate held"
        time.sleep(0.05)


def test_a_breakpoint_set_over_the_api_before_the_script_starts_holds_its_first_call(tmp_path: Path) -> None:
    with HubProcess(tmp_path / "hub.db") as hub:
        assert (
            hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "tool:search", "gate": "before"}]})[0]
            == 200
        )
        proc = start_script(tmp_path, hub, SCRIPT)
        try:
            gate = next_gate(hub, proc, set())
            assert (gate["nodeId"], gate["gate"], gate["reason"]) == ("tool:search", "before", "breakpoint")
            assert gate["source"] is None  # the hub's breakpoint, not the app's code
            answer = {"action": "inject", "value": "from the debugger"}
            assert hub.api("POST", f"/api/gates/{gate['gateId']}", answer)[0] == 200
            out, err = proc.communicate("\n", timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 0, err
        assert out.strip() == "from the debugger"  # the tool never ran
        assert "Traceback" not in hub.stderr


def test_holds_from_code_reach_the_hub_with_why_they_held(tmp_path: Path) -> None:
    with HubProcess(tmp_path / "hub.db") as hub:
        before = hub.api("GET", "/api/debug")[1]
        proc = start_script(tmp_path, hub, CODE_HOLDS)
        seen: set[str] = set()
        held = []
        try:
            for _ in range(2):
                gate = next_gate(hub, proc, seen)
                held.append((gate["nodeId"], gate["reason"], gate["source"], gate["why"]))
                answer = hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})
                assert answer[0] == 200, (answer, held, hub.api("GET", "/api/gates"))
            out, err = proc.communicate("\n", timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        assert proc.returncode == 0, err
        assert out.strip() == "booked TP-544 refunded 30 refunded 250"
        assert held == [
            ("tool:book", "breakpoint", "code", None),
            ("tool:refund", "condition", None, "refund of 250 is over 100"),
        ]
        assert hub.api("GET", "/api/debug")[1] == before
