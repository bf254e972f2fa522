"""The requests the proxy passes through to the real server, as one table.

Each row: the server capability that must be present for the proxy to offer the method, the
low-level `Server(on_...=)` keyword that receives it from the host (mcp/server/lowlevel/server.py
Server.__init__, mcp 2.3), and how to forward its params upstream. tools/call is not here: it is
gated (see _proxy.py). A method the real server does not offer is not offered to the host either.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp import ClientSession, types


def clean(params: Any) -> Any:
    """The host's params without its progress token: the proxy's own session asks for progress itself."""
    meta = getattr(params, "meta", None)
    if not meta or "progress_token" not in meta:
        return params
    rest = {k: v for k, v in meta.items() if k != "progress_token"}
    return params.model_copy(update={"meta": rest or None})


def _send(request: type[Any], result: type[Any]) -> Callable[[ClientSession, Any], Awaitable[Any]]:
    async def forward(upstream: ClientSession, params: Any) -> Any:
        return await upstream.send_request(request(params=clean(params)), result)

    return forward


async def _list_tools(upstream: ClientSession, params: Any) -> Any:
    # Through the session's own list_tools: it caches each tool's outputSchema, which
    # validate_tool_result (the inject check) reads.
    return await upstream.list_tools(params=clean(params))


@dataclass(frozen=True)
class Route:
    capability: str  # a field of ServerCapabilities ("tools", "resources", ...), or "resources.subscribe"
    handler: str  # the Server(...) keyword
    forward: Callable[[ClientSession, Any], Awaitable[Any]]

    def offered_by(self, capabilities: types.ServerCapabilities) -> bool:
        field, _, flag = self.capability.partition(".")
        value = getattr(capabilities, field, None)
        return value is not None and (not flag or bool(getattr(value, flag, False)))


ROUTES: tuple[Route, ...] = (
    Route("tools", "on_list_tools", _list_tools),
    Route("resources", "on_list_resources", _send(types.ListResourcesRequest, types.ListResourcesResult)),
    Route(
        "resources",
        "on_list_resource_templates",
        _send(types.ListResourceTemplatesRequest, types.ListResourceTemplatesResult),
    ),
    Route("resources", "on_read_resource", _send(types.ReadResourceRequest, types.ReadResourceResult)),
    Route("resources.subscribe", "on_subscribe_resource", _send(types.SubscribeRequest, types.EmptyResult)),
    Route(
        "resources.subscribe", "on_unsubscribe_resource", _send(types.UnsubscribeRequest, types.EmptyResult)
    ),
    Route("prompts", "on_list_prompts", _send(types.ListPromptsRequest, types.ListPromptsResult)),
    Route("prompts", "on_get_prompt", _send(types.GetPromptRequest, types.GetPromptResult)),
    Route("completions", "on_completion", _send(types.CompleteRequest, types.CompleteResult)),
)


def handlers(upstream: ClientSession, capabilities: types.ServerCapabilities) -> dict[str, Any]:
    """The `Server(...)` keywords for every route the real server offers."""

    def bind(route: Route) -> Callable[[Any, Any], Awaitable[Any]]:
        async def handle(_ctx: Any, params: Any) -> Any:
            return await route.forward(upstream, params)

        return handle

    return {route.handler: bind(route) for route in ROUTES if route.offered_by(capabilities)}
