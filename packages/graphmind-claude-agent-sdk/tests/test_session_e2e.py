"""A Claude agent session against the real hub and the loopback fake: CLI tools and in-process tools
held, edited and injected; a model turn injected; a recorded session replayed."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ResultMessage, create_sdk_mcp_server, query, tool
from claude_helpers import options

import graphmind
from graphmind_anthropic.testing import FakeAnthropic
from graphmind_claude_agent_sdk import (
    instrument_claude_agent,
    instrument_claude_agent_sdk,
    uninstrument_claude_agent_sdk,
)
from graphmind_server.testing import HubProcess, in_thread, wait_for


def _tool_results(request_body: dict[str, Any]) -> list[Any]:
    out = []
    for message in request_body["messages"]:
        if isinstance(message.get("content"), list):
            out += [b for b in message["content"] if b.get("type") == "tool_result"]
    return out


async def _session(gm: graphmind.Client, opts: Any, prompt: str = "go") -> list[Any]:
    messages = []
    async with gm.run("claude-session"):
        async for message in query(prompt=prompt, options=instrument_claude_agent(opts, session=gm)):
            messages.append(message)
    return messages


def _final(messages: list[Any]) -> str:
    results = [m for m in messages if isinstance(m, ResultMessage)]
    assert results, messages
    return str(results[-1].result)


def _breakpoint(hub: HubProcess, node_id: str, gate: str = "before") -> None:
    assert hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": node_id, "gate": gate}]})[0] == 200


def _answer_when_held(hub: HubProcess, node_id: str, body: dict[str, Any]) -> Any:
    def answer() -> None:
        held = hub.held_gates(timeout=30)[0]
        assert held["nodeId"] == node_id, held
        assert hub.api("POST", f"/api/gates/{held['gateId']}", body)[0] == 200

    return _Waiter(*in_thread(answer))


class _Waiter:
    def __init__(self, thread: Any, out: dict[str, Any]) -> None:
        self.thread, self.out = thread, out

    def join(self) -> None:
        self.thread.join(30)
        if "error" in self.out:
            raise self.out["error"]


def test_editing_a_bash_call_runs_the_edited_command(
    hub: HubProcess, gm: graphmind.Client, fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.script([FakeAnthropic.tool_use("Bash", {"command": "echo hi", "description": "say hi"}), "done"])
    _breakpoint(hub, "tool:Bash")
    waiter = _answer_when_held(hub, "tool:Bash", {"action": "continue", "input": {"command": "echo edited"}})
    messages = asyncio.run(_session(gm, options(fake, tmp_path, allowed_tools=["Bash"])))
    waiter.join()
    assert _final(messages) == "done"
    results = _tool_results(fake.requests[-1].body)
    assert len(results) == 1 and "edited" in str(results[0]["content"]), results


def test_injecting_at_an_in_process_tool_skips_its_handler(
    hub: HubProcess, gm: graphmind.Client, fake: FakeAnthropic, tmp_path: Path
) -> None:
    calls: list[dict[str, Any]] = []

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    server = create_sdk_mcp_server("calc", tools=[add])
    fake.script([FakeAnthropic.tool_use("mcp__calc__add", {"a": 1, "b": 2}), "the sum is 42"])
    _breakpoint(hub, "tool:mcp__calc__add")
    waiter = _answer_when_held(hub, "tool:mcp__calc__add", {"action": "inject", "value": "42 (injected)"})
    opts = options(fake, tmp_path, mcp_servers={"calc": server}, allowed_tools=["mcp__calc__add"])
    messages = asyncio.run(_session(gm, opts))
    waiter.join()
    assert calls == []
    results = _tool_results(fake.requests[-1].body)
    assert "42 (injected)" in str(results[0]["content"]), results
    assert _final(messages) == "the sum is 42"


def test_injecting_a_model_turn_sends_no_request(
    hub: HubProcess, gm: graphmind.Client, fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.script(["never sent"])
    _breakpoint(hub, "llm:step")
    waiter = _answer_when_held(hub, "llm:step", {"action": "inject", "value": "an injected answer"})
    messages = asyncio.run(_session(gm, options(fake, tmp_path)))
    waiter.join()
    assert fake.request_count == 0
    assert _final(messages) == "an injected answer"


def _recorded_session(
    hub: HubProcess, gm: graphmind.Client, fake: FakeAnthropic, opts: Any, tmp_path: Path
) -> tuple[Path, str]:
    from graphmind.testing import write_cassette

    messages = asyncio.run(_session(gm, opts))
    runs = hub.api("GET", "/api/runs")[1]["runs"]
    run_id = runs[0]["id"]
    wait_for(
        lambda: hub.api("GET", f"/api/runs/{run_id}")[1].get("status") not in (None, "running"),
        10,
        "run ended",
    )
    events = hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"]
    cassette = tmp_path / "session.jsonl"
    write_cassette(cassette, gm.client_id, events)
    return cassette, _final(messages)


def test_a_recorded_session_replays_with_no_request(
    hub: HubProcess, gm: graphmind.Client, fake: FakeAnthropic, tmp_path: Path
) -> None:
    calls: list[dict[str, Any]] = []

    @tool("add", "Add two numbers", {"a": float, "b": float})
    async def add(args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}

    fake.script(
        [
            FakeAnthropic.tool_use("mcp__calc__add", {"a": 1, "b": 2}),
            FakeAnthropic.tool_use("Bash", {"command": "echo hi | tee -a ran.txt", "description": "say hi"}),
            "the sum is 3",
        ]
    )
    opts = options(
        fake,
        tmp_path,
        mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])},
        allowed_tools=["mcp__calc__add", "Bash"],
    )
    cassette, answer = _recorded_session(hub, gm, fake, opts, tmp_path)
    requests, ran = fake.request_count, len(calls)
    replaying = graphmind.Client(
        app="claude-agent-replay", url=hub.ingest_url, replay={"source": cassette, "on_divergence": "fail"}
    )
    try:
        assert replaying.ready(5)
        messages = asyncio.run(_session(replaying, opts))
    finally:
        replaying.dispose()
    assert fake.request_count == requests, "a replay must not reach the provider"
    assert len(calls) == ran == 1, "a replay must not run an in-process tool's handler"
    ran_file = tmp_path / "work" / "ran.txt"
    assert ran_file.read_text().splitlines() == ["hi"], "a replay must not run Bash again"
    assert _final(messages) == answer


@pytest.mark.skipif(
    os.environ.get("GRAPHMIND_KIT_FULL") != "1",
    reason="a 62 s hold: runs in the nox matrix cell (GRAPHMIND_KIT_FULL=1), not the default suite",
)
def test_a_bash_call_held_past_the_cli_hook_timeout_goes_on_when_answered(
    hub: HubProcess, gm: graphmind.Client, fake: FakeAnthropic, tmp_path: Path
) -> None:
    """The CLI gives up on a hook after 60 s unless its matcher says otherwise: GraphMind's does."""
    import time

    fake.script([FakeAnthropic.tool_use("Bash", {"command": "echo late", "description": "late"}), "done"])
    _breakpoint(hub, "tool:Bash")

    def answer() -> None:
        held = hub.held_gates(timeout=30)[0]
        time.sleep(62)
        # An edit, so a CLI that had given up on the hook at 60 s (and run the call as it was) shows.
        body = {"action": "continue", "input": {"command": "echo edited-late"}}
        assert hub.api("POST", f"/api/gates/{held['gateId']}", body)[0] == 200

    waiter = _Waiter(*in_thread(answer))
    started = time.monotonic()
    messages = asyncio.run(_session(gm, options(fake, tmp_path, allowed_tools=["Bash"])))
    waiter.join()
    assert time.monotonic() - started > 60
    assert _final(messages) == "done"
    results = _tool_results(fake.requests[-1].body)
    assert results and "edited-late" in str(results[0]["content"]), results


def test_injecting_after_a_bash_call_replaces_what_the_model_reads(
    hub: HubProcess, gm: graphmind.Client, fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.script([FakeAnthropic.tool_use("Bash", {"command": "echo real", "description": "real"}), "done"])
    _breakpoint(hub, "tool:Bash", "after")
    injected = {"stdout": "replaced", "stderr": "", "interrupted": False, "isImage": False}
    waiter = _answer_when_held(hub, "tool:Bash", {"action": "inject", "value": injected})
    messages = asyncio.run(_session(gm, options(fake, tmp_path, allowed_tools=["Bash"])))
    waiter.join()
    assert _final(messages) == "done"
    results = _tool_results(fake.requests[-1].body)
    assert "replaced" in str(results[0]["content"]) and "real" not in str(results[0]["content"]), results


def test_injecting_before_a_bash_call_never_runs_it(
    hub: HubProcess, gm: graphmind.Client, fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.script(
        [FakeAnthropic.tool_use("Bash", {"command": "echo ran > ran.txt", "description": "x"}), "done"]
    )
    _breakpoint(hub, "tool:Bash")
    waiter = _answer_when_held(hub, "tool:Bash", {"action": "inject", "value": "pretend output"})
    messages = asyncio.run(_session(gm, options(fake, tmp_path, allowed_tools=["Bash"])))
    waiter.join()
    assert _final(messages) == "done"
    assert not (tmp_path / "work" / "ran.txt").exists()
    result = _tool_results(fake.requests[-1].body)[0]
    assert result["content"] == "pretend output" and result.get("is_error") is False, result


def test_abort_at_a_tool_ends_the_session_and_the_run(
    hub: HubProcess, gm: graphmind.Client, fake: FakeAnthropic, tmp_path: Path
) -> None:
    fake.script(
        [FakeAnthropic.tool_use("Bash", {"command": "echo ran > ran.txt", "description": "x"}), "never"]
    )
    _breakpoint(hub, "tool:Bash")
    waiter = _answer_when_held(hub, "tool:Bash", {"action": "abort"})

    async def session() -> None:  # the process-wide form: the session is the run, an abort raises
        async for _ in query(prompt="go", options=options(fake, tmp_path, allowed_tools=["Bash"])):
            pass

    instrument_claude_agent_sdk(session=gm)
    try:
        with pytest.raises(graphmind.RunAborted):
            asyncio.run(session())
    finally:
        uninstrument_claude_agent_sdk()
    waiter.join()
    run = hub.api("GET", "/api/runs")[1]["runs"][0]
    assert run["name"] == "claude-agent" and run["meta"].get("framework") == "claude-agent-sdk", run
    assert not (tmp_path / "work" / "ran.txt").exists()
    assert fake.request_count == 1


def test_safe_mode_simulate_never_runs_a_bash_call(fake: FakeAnthropic, tmp_path: Path) -> None:
    """`Bash` is a write (a Claude Code tool's effect class): under safe mode "simulate" it does not
    run, detached too, and the model reads a simulated result."""
    fake.script(
        [FakeAnthropic.tool_use("Bash", {"command": "echo ran > ran.txt", "description": "x"}), "done"]
    )
    client = graphmind.Client(
        app="claude-safe", url="ws://127.0.0.1:9/ingest", retry_interval=3600, safe="simulate"
    )
    try:
        messages = asyncio.run(_session(client, options(fake, tmp_path, allowed_tools=["Bash"])))
    finally:
        client.dispose()
    assert _final(messages) == "done"
    assert not (tmp_path / "work" / "ran.txt").exists(), "a simulated write must not run"
    result = _tool_results(fake.requests[-1].body)[0]
    assert result.get("is_error") is False, result
