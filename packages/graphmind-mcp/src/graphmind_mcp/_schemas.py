"""The tools' output schemas as the proxy saw them pass by in tools/list answers, and the check of an
injected result against them (the same check, and the same messages, as the SDK's
`ClientSession.validate_tool_result`, mcp/client/session.py, so a host never gets a result it would
reject)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.types import CallToolResult


class OutputSchemas:
    def __init__(self, list_tools: Callable[[str | None], Awaitable[dict[str, Any]]]) -> None:
        self._list_tools = list_tools  # one tools/list page from the server (the proxy's own request)
        self._schemas: dict[str, dict[str, Any] | None] = {}
        self._annotations: dict[str, Any] = {}  # each tool's `annotations` (its effect class)
        self._validators: dict[str, Any] = {}

    def absorb(self, result: Any) -> None:
        """A tools/list result (the host's, passing through, or the proxy's own)."""
        tools = result.get("tools") if isinstance(result, dict) else None
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                schema = tool.get("outputSchema")
                if self._schemas.get(tool["name"]) != schema:
                    self._validators.pop(tool["name"], None)
                self._schemas[tool["name"]] = schema if isinstance(schema, dict) else None
                self._annotations[tool["name"]] = tool.get("annotations")

    def known(self, name: str) -> dict[str, Any] | None:
        """The tool's outputSchema as last seen in a tools/list answer (None: none, or not seen yet)."""
        return self._schemas.get(name)

    async def annotations(self, name: str) -> Any:
        """The tool's annotations; a tool not seen in a tools/list answer yet is listed first, so a
        destructive tool is known as one before its first call (docs/effects.md)."""
        if name not in self._schemas:
            try:
                await self._refresh()
            except Exception:  # a server that cannot list: the name rule decides
                return None
        return self._annotations.get(name)

    async def _refresh(self) -> None:
        cursor: str | None = None
        while True:
            page = await self._list_tools(cursor)
            self.absorb(page)
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str):
                return

    async def validate(self, name: str, result: CallToolResult) -> None:
        """Raises RuntimeError saying why `result` does not fit the tool's outputSchema."""
        if name not in self._schemas:
            await self._refresh()
        schema = self._schemas.get(name)
        if schema is None:
            return
        if result.structured_content is None:
            raise RuntimeError(f"Tool {name} has an output schema but did not return structured content")
        from jsonschema import exceptions
        from jsonschema.validators import validator_for

        validator = self._validators.get(name)
        if validator is None:
            cls = validator_for(schema)
            try:
                cls.check_schema(schema)
            except exceptions.SchemaError as exc:
                raise RuntimeError(f"Invalid schema for tool {name}: {exc}") from None
            validator = self._validators[name] = cls(schema)
        error = exceptions.best_match(validator.iter_errors(result.structured_content))
        if error is not None:
            raise RuntimeError(f"Invalid structured content returned by tool {name}: {error.message}")
