"""In-process tools (`@tool` + `create_sdk_mcp_server`): one gated `tool:mcp__<server>__<tool>` node per
call, around the very call of the handler, so inject, edit and retry are real (the handler runs 0, 1
or N times as the person answered).

The CLI calls such a tool with a JSON-RPC `tools/call` message that the SDK routes through
`SdkMcpBridge.handle` (claude_agent_sdk/_internal/sdk_mcp_bridge.py:352, called from
_internal/query.py:722 `_handle_sdk_mcp_request`) to the server `create_sdk_mcp_server` built, whose
`run_tool` (claude_agent_sdk/__init__.py:621) awaits the handler and turns any exception into an
`isError` result. The row on `handle` gates the message: the body is the bridge's own call; a result
with `isError` counts as the call's failure (the error gate can retry it); an injected value becomes
the JSON-RPC result the CLI reads (`_inject.tool_result`), and the handler never runs.

The node's name is the one the model used (`mcp__<server>__<tool>`), so the model step's tool calls
give it its tool-use id (docs/protocol.md, "Tool node identity").
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

from graphmind import ReplayDivergence
from graphmind.adapter import NodeSpec, Patches, RunAborted, engine_for

from ._describe import mcp_result_output
from ._inject import tool_result
from ._session import SessionState

# The in-process servers of instrumented options: server instance -> its options' state.
_SERVERS: weakref.WeakKeyDictionary[Any, SessionState] = weakref.WeakKeyDictionary()


def register(server: Any, state: SessionState) -> None:
    try:
        _SERVERS[server] = state
    except TypeError:  # a server type that refuses weak references: not gated (never breaks the app)
        pass


def unregister(state: SessionState) -> None:
    """The servers of `state`'s options are no longer gated (`uninstrument_claude_agent`)."""
    for server in [s for s, owner in _SERVERS.items() if owner is state]:
        _SERVERS.pop(server, None)


class InProcessToolError(Exception):
    """An in-process tool's failure: the `isError` result the SDK made of its handler's exception."""

    def __init__(self, message: str, response: dict[str, Any]) -> None:
        super().__init__(message)
        self.response = response


def _error_text(result: dict[str, Any]) -> str:
    for block in result.get("content") or ():
        if isinstance(block, dict) and block.get("type") == "text":
            return str(block.get("text"))
    return "the tool failed"


def wrap_handle(original: Callable[..., Awaitable[Any]], state: Patches) -> Callable[..., Awaitable[Any]]:
    async def handle(self: Any, message: dict[str, Any]) -> Any:
        session = _SERVERS.get(getattr(self, "_server", None))
        if (
            session is None
            or not isinstance(message, dict)
            or message.get("method") != "tools/call"
            or not isinstance(message.get("params"), dict)
        ):
            return await original(self, message)
        engine = engine_for(session.session if session.session is not None else state.session)
        if not engine.live:
            return await original(self, message)
        return await _gated(original, self, message, engine, session)

    handle.__wrapped__ = original  # type: ignore[attr-defined]
    return handle


async def _gated(
    original: Callable[..., Awaitable[Any]],
    bridge: Any,
    message: dict[str, Any],
    engine: Any,
    session: SessionState,
) -> Any:
    params = message["params"]
    name = f"mcp__{bridge.name}__{params.get('name')}"
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    tool_use_id = meta.get("claudecode/toolUseId") if isinstance(meta, dict) else None

    def body_for(msg: dict[str, Any]) -> Callable[[], Awaitable[Any]]:
        async def call() -> Any:
            response = await original(bridge, msg)
            result = response.get("result") if isinstance(response, dict) else None
            if isinstance(result, dict) and result.get("isError"):
                raise InProcessToolError(_error_text(result), response)
            return response

        return call

    def edit(value: Any) -> Callable[[], Awaitable[Any]]:
        if not isinstance(value, dict):
            raise ValueError("a tool's input is a JSON object of its arguments")
        edited = copy.deepcopy(message)
        edited["params"]["arguments"] = value
        return body_for(edited)

    def describe(response: Any) -> Any:
        return mcp_result_output(response.get("result") if isinstance(response, dict) else response)

    def replay_error(error: dict[str, Any]) -> BaseException | None:
        """A recorded failure as the very result the SDK made of it (the model reads the same text)."""
        if error.get("name") != InProcessToolError.__name__:
            return None
        text = str(error.get("message") or "")
        result = {"content": [{"type": "text", "text": text}], "isError": True}
        return InProcessToolError(text, {"jsonrpc": "2.0", "id": message.get("id"), "result": result})

    def from_injected(value: Any) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": message.get("id"), "result": tool_result(value)}

    spec = NodeSpec(
        name=name,
        kind="tool",
        input=params.get("arguments") or {},
        instance_id=tool_use_id if isinstance(tool_use_id, str) else None,
        edit=edit,
        attrs={"framework": "claude-agent-sdk", "runsIn": "python", "server": bridge.name},
        replay_error=replay_error,
    )
    try:
        return await engine.aexecute(
            spec, body_for(message), describe_output=describe, from_injected=from_injected
        )
    except InProcessToolError as exc:  # continue at the error gate: the SDK's own error result
        return exc.response
    except (RunAborted, ReplayDivergence) as exc:  # the SDK would make a tool error of it: raised at the end
        session.note_fatal(exc)
        raise
