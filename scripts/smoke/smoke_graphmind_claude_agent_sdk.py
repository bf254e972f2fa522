"""Wheel smoke for graphmind-claude-agent-sdk: one offline session of the bundled CLI through the model
gate and a gated in-process tool, detached (no hub)."""

import asyncio
import tempfile

from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, create_sdk_mcp_server, query, tool

import graphmind
from graphmind_anthropic.testing import FakeAnthropic
from graphmind_claude_agent_sdk import __version__, instrument_claude_agent, uninstrument_claude_agent_sdk

session = graphmind.Client(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
calls = []


@tool("add", "Add two numbers", {"a": float, "b": float})
async def add(args):
    calls.append(args)
    return {"content": [{"type": "text", "text": str(args["a"] + args["b"])}]}


async def main(fake: FakeAnthropic, home: str) -> str:
    options = ClaudeAgentOptions(
        cwd=home,
        model="claude-opus-4-8",
        mcp_servers={"calc": create_sdk_mcp_server("calc", tools=[add])},
        allowed_tools=["mcp__calc__add"],
        env={
            "ANTHROPIC_BASE_URL": fake.base_url,
            "ANTHROPIC_API_KEY": "smoke",
            "CLAUDE_CONFIG_DIR": home,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        },
    )
    instrumented = instrument_claude_agent(options, session=session)
    assert instrument_claude_agent(instrumented, session=session) is instrumented  # twice is harmless
    result = ""
    async with session.run("smoke"):
        async for message in query(prompt="add 1 and 2", options=instrumented):
            if isinstance(message, ResultMessage):
                result = str(message.result)
    return result


with FakeAnthropic() as fake, tempfile.TemporaryDirectory() as home:
    fake.script([FakeAnthropic.tool_use("mcp__calc__add", {"a": 1, "b": 2}), "the sum is 3"])
    assert asyncio.run(main(fake, home)) == "the sum is 3"
    assert fake.request_count == 2 and len(calls) == 1, (fake.request_count, calls)
uninstrument_claude_agent_sdk()
assert session.stats()["events"] >= 6, session.stats()
session.dispose()
print(f"graphmind-claude-agent-sdk {__version__} smoke ok")
