"""The JSON a node shows for what the CLI and an in-process tool hand over.

The CLI sends hook inputs as JSON already (tool inputs, `tool_response`), so a CLI tool's input and
output are shown as they came. An in-process tool's call answers with an MCP `tools/call` result
(`{"content": [{"type": "text", "text": ...}], "isError": ...}`): a single text block is shown as
its text, which is also what an injected string becomes (`_inject.tool_result`).
"""

from __future__ import annotations

from typing import Any


def tool_output(value: Any) -> Any:
    """A CLI tool's `tool_response` (already JSON) as the node's output."""
    return value


def mcp_result_output(result: Any) -> Any:
    """A JSON-RPC `tools/call` result (`{"content": [...], "isError": ...}`) as the node's output."""
    if isinstance(result, dict):
        content = result.get("content")
        if (
            isinstance(content, list)
            and len(content) == 1
            and isinstance(content[0], dict)
            and content[0].get("type") == "text"
            and not result.get("isError")
        ):
            return content[0].get("text")
    return result
