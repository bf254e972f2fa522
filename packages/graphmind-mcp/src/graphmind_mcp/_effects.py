"""A tool's effect class from its MCP annotations (docs/effects.md; the MCP spec's `ToolAnnotations`):
`readOnlyHint: true` is a read; `destructiveHint: true`, or `readOnlyHint: false` (a tool that changes
its environment; destructiveHint defaults to true then), is a write. A tool with neither hint says
nothing: core's name rule decides."""

from __future__ import annotations

from typing import Any

from graphmind.adapter import Effect, framework_effect


def effect_of(annotations: Any) -> Effect | None:
    """`annotations` as on the wire (a dict) or the SDK's `ToolAnnotations` model."""
    if annotations is None:
        return None
    if not isinstance(annotations, dict):
        dump = getattr(annotations, "model_dump", None)
        annotations = dump(by_alias=True, exclude_none=True) if callable(dump) else {}
    read_only = annotations.get("readOnlyHint")
    destructive = annotations.get("destructiveHint")
    if read_only is True:
        return framework_effect("read", "readOnlyHint")
    if destructive is True:
        return framework_effect("write", "destructiveHint")
    if read_only is False:
        return framework_effect("write", "readOnlyHint")
    return None
