"""The server the unit tests call: the real `mcp-server-time` (in process), where it installs.

mcp-server-time needs mcp>=2.3 (its 2.2-era release imports a name mcp 2.2 no longer has), so the
matrix cell for mcp 2.2 runs the same tests against an MCPServer with the same tool shape: an
`outputSchema` (timezone, datetime, day_of_week, is_dst), `isError` for an unknown timezone, and
JSON-RPC -32602 for an unknown tool.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel


def time_server() -> Any:
    try:
        from mcp_server_time.server import create_server
    except ImportError:
        return _same_shape()
    return create_server("UTC")


class TimeResult(BaseModel):
    timezone: str
    datetime: str
    day_of_week: str
    is_dst: bool


def _same_shape() -> MCPServer:
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.shared.exceptions import MCPError

    server = MCPServer("mcp-time")

    @server.tool()
    def get_current_time(timezone: str) -> TimeResult:
        try:
            now = datetime.now(ZoneInfo(timezone))
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ToolError(f"Invalid timezone: {exc}") from None
        return TimeResult(
            timezone=timezone,
            datetime=now.isoformat(timespec="seconds"),
            day_of_week=now.strftime("%A"),
            is_dst=bool(now.dst()),
        )

    async def reject_unknown_tools(ctx: Any, call_next: Any) -> Any:
        if (
            ctx.method == "tools/call"
            and ctx.params is not None
            and ctx.params.get("name") != "get_current_time"
        ):
            raise MCPError(code=-32602, message=f"Unknown tool: {ctx.params.get('name')}")
        return await call_next(ctx)

    server.middleware.append(reject_unknown_tools)
    return server
