"""Streamed chunks as `node.token` deltas (text, and tool-call arguments as they arrive)."""

from __future__ import annotations

from typing import Any

from graphmind.adapter import NodeExecution

from ._describe import text_of


def emit(ex: NodeExecution, content: Any, message: Any, tool_ids: dict[int, tuple[str, str]]) -> None:
    text = content if isinstance(content, str) else text_of(content)
    if text:
        ex.token(text)
    calls = getattr(message, "tool_call_chunks", None)
    if not calls:
        return
    for call in calls:
        index = call.get("index")
        index = index if isinstance(index, int) else 0
        if call.get("id") or call.get("name"):
            known = tool_ids.get(index, ("", ""))
            tool_ids[index] = (call.get("id") or known[0], call.get("name") or known[1])
        args = call.get("args")
        if args:
            call_id, name = tool_ids.get(index, ("", ""))
            ex.token(args, t="tool-args", toolCallId=call_id, toolName=name)
