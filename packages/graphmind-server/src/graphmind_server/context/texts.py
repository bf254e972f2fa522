"""The strings of a model input's value that a tokenizer counts (pure): a message's text, not the
JSON scaffolding around it; a 512 KB marker gives its preview and the size it left out."""

from __future__ import annotations

import json
from typing import Any

ATTACHMENT = ("image", "document", "audio", "file")
RESULT_TYPES = ("tool_result", "function_call_output")
CALL_TYPES = ("tool_use", "function_call", "tool_call")


def is_marker(value: Any) -> bool:
    return isinstance(value, dict) and value.get("$graphmind") == "truncated"


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class Texts:
    """Collects a value's countable strings; a 512 KB marker gives its preview and its cut size."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.cut_bytes = 0
        self.head = 0

    def marker(self, value: dict[str, Any]) -> None:
        preview = value.get("preview", value.get("v"))  # a payload's marker, or a streamed delta's
        text = preview if isinstance(preview, str) else ""
        self.texts.append(text)
        full = value.get("bytes")
        if type(full) is int:
            self.cut_bytes += max(0, full - len(text.encode("utf-8", "replace")))

    def add(self, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, str):
            self.texts.append(value)
        elif is_marker(value):
            self.marker(value)
        else:
            self.texts.append(_json(value))

    def blocks(self, content: Any) -> None:
        """A message's content: a string, or blocks whose text (not their JSON scaffolding) counts."""
        if isinstance(content, str) or content is None or is_marker(content):
            self.add(content)
            return
        if not isinstance(content, list):
            self.add(content)
            return
        for block in content:
            self.block(block)

    def block(self, block: Any) -> None:
        if not isinstance(block, dict) or is_marker(block):
            self.add(block)
            return
        kind = str(block.get("type") or block.get("block_type") or "")
        if kind in ("text", "input_text", "output_text"):
            self.add(block.get("text"))
        elif kind in ("thinking", "reasoning"):
            self.add(block.get("thinking", block.get("text")))
        elif kind in CALL_TYPES:
            self.call(block)
        elif kind in RESULT_TYPES:
            self.blocks(block.get("content", block.get("output")))
        elif any(a in kind for a in ATTACHMENT):
            self.add(f"[{kind}]")  # its bytes are not text; the provider prices it its own way
        elif kind == "message" and "content" in block:
            self.blocks(block["content"])
        else:
            self.add(block)

    def call(self, call: Any) -> None:
        if not isinstance(call, dict):
            self.add(call)
            return
        inner = call.get("function")
        fn: dict[str, Any] = inner if isinstance(inner, dict) else call
        self.add(fn.get("name") or call.get("tool_name"))
        for key in ("arguments", "args", "input", "tool_kwargs"):
            if key in fn:
                self.add(fn[key])
                break
