"""The refund agent (tests/fixtures/refund_agent.py: the OpenAI SDK on the loopback fake provider,
`gm.tool` tools that count their real executions in a file) and its scripted model, shared by the
end-to-end tests that run it against the real hub (test_mcp_assistant_e2e.py, test_safe_mode_e2e.py).

Import it as `refund_app` (tests/conftest.py puts this folder on sys.path); importing `refund_fake`
into a test module gives that module one fake provider, the fixture `fake`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import HubProcess

FIXTURES = Path(__file__).parent / "fixtures"
AGENT = FIXTURES / "refund_agent.py"
ANSWER = "Refunded order A1."


def called(body: dict[str, Any]) -> list[str]:
    """The tools the model called so far in this request's conversation."""
    return [
        call["function"]["name"]
        for m in body["messages"]
        if m.get("role") == "assistant"
        for call in m.get("tool_calls") or ()
    ]


def model(body: dict[str, Any]) -> Any:
    """The scripted model: look the order up, refund it, answer."""
    done = called(body)
    if not done:
        return FakeOpenAI.tool_call("lookup_order", {"order_id": "A1"}, call_id="call_lookup")
    if "issue_refund" not in done:
        return FakeOpenAI.tool_call("issue_refund", {"order_id": "A1", "amount": 40}, call_id="call_refund")
    return ANSWER


@pytest.fixture(scope="module", name="fake")
def refund_fake() -> Iterator[FakeOpenAI]:
    """The fixture `fake`: the scripted provider, one per test module that imports this."""
    with FakeOpenAI(default_reply=model) as provider:
        yield provider


class RefundAgent:
    """The agent as its own process against `hub` and `fake`, with none of the caller's GRAPHMIND_*
    settings (safe mode, a replay) leaking in; `ran()` lists the tool bodies that really ran."""

    def __init__(self, hub: HubProcess, fake: FakeOpenAI, tmp: Path) -> None:
        self.hub, self.log = hub, tmp / "tools.log"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("GRAPHMIND_")},
            "GRAPHMIND_URL": hub.ingest_url,
            "GRAPHMIND_HOME": str(tmp / "home"),
            "GRAPHMIND_WAIT_FOR_ATTACH": "5",
            "FAKE_OPENAI_URL": fake.base_url,
            "TOOL_LOG": str(self.log),
        }

    def ran(self) -> list[str]:
        return self.log.read_text().split() if self.log.exists() else []

    def start(self, *replay: str, **env: str) -> subprocess.Popen[str]:
        """`python refund_agent.py`, or with `replay` words `graphmind replay WORDS -- python
        refund_agent.py`; `env` on top of the agent's environment."""
        command = [sys.executable, str(AGENT)]
        if replay:
            command = [sys.executable, "-m", "graphmind_server", "replay", *replay, "--", *command]
        return subprocess.Popen(
            command, env={**self.env, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )

    def run(self, *replay: str, **env: str) -> tuple[int, str, str]:
        proc = self.start(*replay, **env)
        out, err = proc.communicate(timeout=120)
        return proc.returncode, out, err

    def finish(self, proc: subprocess.Popen[str]) -> str:
        """The answer the agent printed, once it exited 0."""
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        return out.strip()
