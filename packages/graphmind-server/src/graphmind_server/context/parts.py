"""A model step's input split into the parts that fill the window (pure; no counting here).

The input is the `llm:step` node's `input` as the adapters describe it (docs/viewer.md, "Chat
view"): OpenAI chat `messages` and Responses `input`/`instructions`, Anthropic `system` and
content blocks, LangChain message types (and batches), LlamaIndex `blocks`, and the `{"role",
"content"}` transcripts of Pydantic AI, Google ADK, google-genai and the OpenAI Agents SDK. The
rules mirror the viewer's chat view (viewer/js/chat.js): the same message, the same role.

Each part carries the strings a tokenizer counts and the per-message overhead of OpenAI's cookbook
(`num_tokens_from_messages`: 3 tokens a message, 1 more for a `name`), so a provider that counts
the same way agrees with the sum.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from graphmind.protocol import REDACTED

from .texts import ATTACHMENT, RESULT_TYPES, Texts, is_marker

ROLE = {
    "human": "user",
    "ai": "assistant",
    "AIMessageChunk": "assistant",
    "model": "assistant",
    "chatbot": "assistant",
    "function": "tool",
    "developer": "system",
    "function_call_output": "tool",
    "function_call": "assistant",
}
PER_MESSAGE = 3  # the cookbook's tokens_per_message (gpt-3.5-turbo-0613 and later)
PER_NAME = 1
REPLY_PRIMING = 3  # every reply is primed with <|start|>assistant<|message|>
CONTENT_KEYS = ("content", "blocks", "parts")
PREVIEW = 160


@dataclass
class Part:
    kind: str  # system | tools | message | tool_result | attachment
    role: str | None
    label: str
    path: str
    text_path: str | None
    value: Any  # what the part's key hashes (the JSON it stands for)
    texts: list[str] = field(default_factory=list)
    overhead: int = 0  # tokens the format adds (per message, per name, reply priming)
    cut_bytes: int = 0  # bytes of the app's value beyond the 512 KB preview (estimated, not counted)
    cut: bool = False
    call_id: str | None = None  # a tool result's call id (surgery drops the matching call)
    head: int = 0  # the first `head` texts are the message's role, name and ids (counted, not shown)


def pointer(parts: list[str | int]) -> str:
    """An RFC 6901 JSON pointer."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _role(m: dict[str, Any]) -> str:
    r = m.get("role") if isinstance(m.get("role"), str) else m.get("type")
    r = r if isinstance(r, str) else "message"
    return ROLE.get(r, r)


def _content_key(m: dict[str, Any]) -> str | None:
    return next((k for k in CONTENT_KEYS if k in m), None)


def _is_attachment(block: Any) -> bool:
    kind = block.get("type") or block.get("block_type") if isinstance(block, dict) else None
    return isinstance(kind, str) and any(a in kind for a in ATTACHMENT)


def _is_result(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") in RESULT_TYPES


def _text_path(base: list[str | int], value: Any) -> str | None:
    """The one string truncation would cut in a content value, or None."""
    if isinstance(value, str):
        return pointer(base)
    if isinstance(value, list):
        strings = [i for i, b in enumerate(value) if isinstance(b, dict) and isinstance(b.get("text"), str)]
        if len(strings) == 1 and all(isinstance(b, dict) for b in value):
            return pointer([*base, strings[0], "text"])
    return None


def _preview(texts: list[str]) -> str:
    joined = " ".join(t for t in texts if t)
    return joined[:PREVIEW]


def _message_head(m: dict[str, Any], texts: Texts) -> int:
    """Count the message-level strings (role, name, call ids, tool calls); returns the overhead."""
    overhead = PER_MESSAGE
    role = m.get("role") if isinstance(m.get("role"), str) else m.get("type")
    texts.add(role if isinstance(role, str) else None)
    if isinstance(m.get("name"), str):
        texts.add(m["name"])
        overhead += PER_NAME
    for key in ("tool_call_id", "tool_use_id", "call_id"):
        if isinstance(m.get(key), str):
            texts.add(m[key])
    texts.head = len(texts.texts)
    if isinstance(m.get("thinking"), str):
        texts.add(m["thinking"])
    calls = m.get("tool_calls")
    for call in calls if isinstance(calls, list) else []:
        texts.call(call)
    # A Responses API item carries its payload at the top level.
    if m.get("type") in ("function_call", "function_call_output"):
        texts.call(m) if m.get("type") == "function_call" else texts.add(m.get("output"))
    return overhead


def _label(kind: str, role: str, m: dict[str, Any], index: int) -> str:
    if kind == "tool_result":
        name = m.get("name") if isinstance(m.get("name"), str) else None
        call = m.get("tool_call_id") or m.get("tool_use_id") or m.get("call_id")
        return "tool result " + " ".join(str(x) for x in (name, call) if x)
    calls = m.get("tool_calls")
    if isinstance(calls, list) and calls:
        names = []
        for c in calls:
            fn = c.get("function") if isinstance(c, dict) and isinstance(c.get("function"), dict) else c
            names.append(str(fn.get("name")) if isinstance(fn, dict) else "?")
        return f"{role} #{index} → " + ", ".join(names)
    return f"{role} #{index}"


def _message_parts(m: Any, base: list[str | int], index: int) -> list[Part]:
    if isinstance(m, str) or is_marker(m) or not isinstance(m, dict):
        texts = Texts()
        texts.add(m)
        return [
            _done(
                Part(
                    "message",
                    "user",
                    f"user #{index}",
                    pointer(base),
                    pointer(base) if isinstance(m, str) else None,
                    m,
                    overhead=PER_MESSAGE,
                ),
                texts,
            )
        ]
    role = _role(m)
    key = _content_key(m)
    content = m.get(key) if key else m.get("output") if m.get("type") == "function_call_output" else None
    content_base: list[str | int] = [*base, key] if key else [*base, "output"]
    split = isinstance(content, list) and any(_is_result(b) or _is_attachment(b) for b in content)
    if not split:
        texts = Texts()
        overhead = _message_head(m, texts)
        texts.blocks(content) if key else None
        kind = "tool_result" if role == "tool" else "system" if role == "system" else "message"
        call = m.get("tool_call_id") or m.get("tool_use_id") or m.get("call_id")
        part = Part(
            kind,
            role,
            _label(kind, role, m, index),
            pointer(base),
            _text_path(content_base, content),
            m,
            overhead=overhead,
            call_id=call if kind == "tool_result" and isinstance(call, str) else None,
        )
        return [_done(part, texts)]
    # Content blocks that are tool results or files: one part each (the rest, one part per block).
    out: list[Part] = []
    assert isinstance(content, list)
    for i, block in enumerate(content):
        texts = Texts()
        overhead = _message_head(m, texts) if i == 0 else 0
        texts.block(block)
        path = [*content_base, i]
        if _is_result(block):
            call = block.get("tool_use_id") or block.get("call_id")
            inner = block.get("content", block.get("output"))
            inner_key = "content" if "content" in block else "output"
            label = "tool result " + (str(call) if call else "")
            part = Part(
                "tool_result",
                "tool",
                label.strip(),
                pointer(path),
                _text_path([*path, inner_key], inner),
                block,
                overhead=overhead,
                call_id=call if isinstance(call, str) else None,
            )
        elif _is_attachment(block):
            kind = block.get("type") or block.get("block_type")
            part = Part(
                "attachment",
                role,
                f"{kind} in {role} #{index}",
                pointer(path),
                None,
                block,
                overhead=overhead,
            )
        else:
            part = Part(
                "message",
                role,
                f"{role} #{index}",
                pointer(path),
                _text_path([*path, "text"], block.get("text")) if isinstance(block, dict) else None,
                block,
                overhead=overhead,
            )
        out.append(_done(part, texts))
    return out


def _done(part: Part, texts: Texts) -> Part:
    part.texts = texts.texts
    part.head = texts.head
    part.cut_bytes = texts.cut_bytes
    part.cut = texts.cut_bytes > 0 or _has_marker(part.value)
    return part


def _has_marker(value: Any) -> bool:
    if is_marker(value):
        return True
    if isinstance(value, dict):
        return any(_has_marker(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_marker(v) for v in value)
    return False


def _messages(node_input: dict[str, Any]) -> tuple[str | None, Any]:
    for key in ("messages", "input", "contents"):
        if isinstance(node_input.get(key), list):
            return key, node_input[key]
    for key in ("input", "prompt"):
        if isinstance(node_input.get(key), str):
            return key, node_input[key]
    if isinstance(node_input.get("prompts"), list):
        return "prompts", node_input["prompts"]
    return None, None


def split(node_input: Any) -> list[Part]:
    """The parts of a model step's input, in the order they are sent."""
    if isinstance(node_input, str) or is_marker(node_input) or not isinstance(node_input, dict):
        if node_input is None:
            return []
        texts = Texts()
        texts.add(node_input)
        label = "input (cut at 512 KB)" if is_marker(node_input) else "input"
        if node_input == REDACTED:  # the app hides inputs (GRAPHMIND_HIDE_INPUTS): nothing to split
            label = "input (hidden by the app)"
        part = Part(
            "message",
            "user",
            label,
            "",
            "" if isinstance(node_input, str) else None,
            node_input,
            overhead=PER_MESSAGE,
        )
        parts = [_done(part, texts)]
    else:
        parts = _dict_parts(node_input)
    messages = [p for p in parts if p.kind != "tools"]
    if messages:
        messages[-1].overhead += REPLY_PRIMING
    return parts


def _dict_parts(node_input: dict[str, Any]) -> list[Part]:
    parts: list[Part] = []
    for key in ("system", "instructions"):
        value = node_input.get(key)
        if value in (None, "", []):
            continue
        texts = Texts()
        texts.blocks(value)
        parts.append(
            _done(
                Part(
                    "system",
                    "system",
                    key,
                    pointer([key]),
                    _text_path([key], value),
                    value,
                    overhead=PER_MESSAGE,
                ),
                texts,
            )
        )
    tools = node_input.get("tools")
    if tools not in (None, [], {}):
        texts = Texts()
        texts.add(tools)
        count = len(tools) if isinstance(tools, list | dict) else 1
        parts.append(_done(Part("tools", None, f"tools ({count})", "/tools", None, tools), texts))
    msg_key, listed = _messages(node_input)
    if isinstance(listed, str):
        texts = Texts()
        texts.add(listed)
        parts.append(
            _done(
                Part(
                    "message",
                    "user",
                    "user #0",
                    pointer([msg_key or ""]),
                    pointer([msg_key or ""]),
                    listed,
                    overhead=PER_MESSAGE,
                ),
                texts,
            )
        )
    elif isinstance(listed, list) and msg_key:
        index = 0
        for i, m in enumerate(listed):
            if isinstance(m, list):  # LangChain's batches: a list of message lists
                for j, inner in enumerate(m):
                    parts += _message_parts(inner, [msg_key, i, j], index)
                    index += 1
            else:
                parts += _message_parts(m, [msg_key, i], index)
                index += 1
    if not parts and node_input and any(k not in ("model", "agent") for k in node_input):
        texts = Texts()
        texts.add({k: v for k, v in node_input.items() if k not in ("model", "agent")})
        parts.append(
            _done(Part("message", "user", "input", "", None, node_input, overhead=PER_MESSAGE), texts)
        )
    return parts


def shown(part: Part) -> list[str]:
    """The part's content texts (without the role and ids its message adds)."""
    return part.texts[part.head :]


def preview(part: Part) -> str:
    return _preview(shown(part))
