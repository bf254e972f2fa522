"""How a tool is registered: its docstring (dedented) is its description; its answer is one JSON text."""

from __future__ import annotations

import inspect
from collections.abc import Callable

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def tool(
    server: MCPServer, annotations: ToolAnnotations, extra: str = ""
) -> Callable[[Callable[..., str]], Callable[..., str]]:
    """`extra`: a sentence added to the description (what this server's flags make the tool do)."""

    def register(fn: Callable[..., str]) -> Callable[..., str]:
        server.add_tool(
            fn,
            description=(inspect.cleandoc(fn.__doc__ or "") + (" " + extra if extra else "")),
            annotations=annotations,
            structured_output=False,
        )
        return fn

    return register
