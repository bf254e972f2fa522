"""Overhead of graphmind-claude-agent-sdk on a whole Claude Agent SDK session, beside OpenInference's.

    uv run python bench/claude_agent_sdk_overhead.py [--rounds 5]

One call is one offline session of the bundled CLI against the loopback fake (`FakeAnthropic`): three
model turns (through GraphMind's model gate when instrumented), one in-process tool and one Bash
call. Variants: bare; `openinference` (openinference-instrumentation-claude-agent-sdk, spans to
memory), `detached` (instrument_claude_agent_sdk(), a client whose hub never answers) and `attached`
(the same, attached to a real hub process). The CLI (a Node.js process) dominates a session, so the
ratios say what GraphMind adds to a session the user waits for, beside what the peer adds.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import claude_agent_sdk
from _harness import (
    AttachedHub,
    interleaved_rounds,
    noop,
    openinference_toggle,
    print_paired_ratios,
    print_ratio_table,
    summarise,
)
from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, tool

import graphmind
from graphmind_anthropic.testing import FakeAnthropic
from graphmind_claude_agent_sdk import instrument_claude_agent_sdk, uninstrument_claude_agent_sdk


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args: dict[str, Any]) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}


def _session(fake: FakeAnthropic, home: str) -> None:
    fake.script(
        [
            FakeAnthropic.tool_use("mcp__calc__add", {"a": 1, "b": 2}),
            FakeAnthropic.tool_use("Bash", {"command": "echo hi", "description": "hi"}),
            "done",
        ]
    )
    options = ClaudeAgentOptions(
        cwd=home,
        model="claude-opus-4-8",
        mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])},
        allowed_tools=["mcp__calc__add", "Bash"],
        env={
            "ANTHROPIC_BASE_URL": fake.base_url,
            "ANTHROPIC_API_KEY": "bench",
            "CLAUDE_CONFIG_DIR": home,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        },
    )

    async def run() -> None:
        # looked up per call: an instrumentor that replaces the module's `query` is seen
        async for _ in claude_agent_sdk.query(prompt="add 1 and 2, then say hi", options=options):
            pass

    asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="gm-bench-claude-")
    with FakeAnthropic() as fake:

        def call() -> None:
            _session(fake, home)

        detached = graphmind.Client(app="bench", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
        attached = AttachedHub()
        variants: dict[str, Any] = {"bare": (noop, noop, {"session": call})}
        peer = openinference_toggle(
            "openinference-instrumentation-claude-agent-sdk",
            "openinference.instrumentation.claude_agent_sdk",
            "ClaudeAgentSDKInstrumentor",
            call,
            1,
            "claude-agent-sdk",
        )
        if peer is not None:
            variants["openinference"] = (*peer, {"session": call})
        for name, client in (("detached", detached), ("attached", attached.client)):

            def on(client: graphmind.Client = client) -> None:
                instrument_claude_agent_sdk(session=client)

            variants[name] = (on, uninstrument_claude_agent_sdk, {"session": call})
        try:
            started = time.perf_counter()
            samples = interleaved_rounds(variants, args.rounds, 1, time.perf_counter_ns)
            best, medians = summarise(samples)
            print_ratio_table("claude-agent-sdk session", best, medians=medians)
            print_paired_ratios(samples)
            print(f"({args.rounds} rounds in {time.perf_counter() - started:.0f} s)")
        finally:
            detached.dispose()
            attached.close()


if __name__ == "__main__":
    main()
