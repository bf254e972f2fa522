"""Wheel smoke for graphmind-mcp: instrument a real MCP ClientSession connected in process to an
MCPServer, one tool call detached (no network), and the proxy's command line."""

import subprocess
import sys

import anyio
from mcp.client import Client
from mcp.server.mcpserver import MCPServer

import graphmind
from graphmind_mcp import __version__, instrument_mcp, uninstrument_mcp

server = MCPServer("smoke")


@server.tool()
def echo(text: str) -> str:
    return text


async def main() -> None:
    session = graphmind.Client(app="smoke", url="ws://127.0.0.1:9/ingest", retry_interval=3600)
    async with Client(server, mode="legacy") as mcp_client:
        instrumented = instrument_mcp(mcp_client.session, session=session)
        assert instrument_mcp(instrumented, client=session) is instrumented  # twice is harmless
        result = await mcp_client.session.call_tool("echo", {"text": "hello"})
        assert result.content[0].text == "hello", result
        uninstrument_mcp(mcp_client.session)
    assert session.stats()["events"] >= 2
    session.dispose()


anyio.run(main)
usage = subprocess.run(
    [sys.executable, "-m", "graphmind_mcp", "--help"], capture_output=True, text=True, check=True
)
assert "graphmind mcp-proxy" in usage.stdout, usage.stdout
print(f"graphmind-mcp {__version__} smoke ok")
