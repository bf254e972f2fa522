"""Tools and event helpers shared by the LlamaIndex adapter's tests (and the repo's e2e tests)."""

from __future__ import annotations

from typing import Any

from llama_index.core.tools import FunctionTool

from graphmind.testing import FakeHub


def make_search(calls: list[str]) -> FunctionTool:
    def search(query: str) -> str:
        """Search the web."""
        calls.append(query)
        return f"results for {query}"

    return FunctionTool.from_defaults(search)


def make_asearch(calls: list[str]) -> FunctionTool:
    async def search(query: str) -> str:
        """Search the web."""
        calls.append(query)
        return f"results for {query}"

    return FunctionTool.from_defaults(async_fn=search)


def of(hub: FakeHub, event_type: str, node_id: str | None = None) -> list[dict[str, Any]]:
    return [e for e in hub.of_type(event_type) if node_id is None or e.get("nodeId") == node_id]
