"""Cutting a held model call's input before it is sent: drop a part, truncate its text (pure).

The result goes back as the before gate's edited input (`{"action": "continue", "input": ...}`), so
the adapter's one conversion applies it and the node records the edit (docs/protocol.md, "Editing a
held call").

Dropping a tool result also drops the tool call it answers (and a message left empty by that):
providers refuse a call without its result (OpenAI: "An assistant message with 'tool_calls' must be
followed by tool messages responding to each 'tool_call_id'"; Anthropic: every `tool_use` needs a
`tool_result` in the next user message) and a result without its call, so keeping either alone
would make the request invalid. To keep the call and hide the result's text, truncate it instead.
"""

from __future__ import annotations

import copy
from typing import Any

from . import parts as parts_mod
from .texts import CALL_TYPES
from .tokenizer import CHARS_PER_TOKEN, Tokenizer

Pointer = tuple[str | int, ...]


class SurgeryError(ValueError):
    """An op that cannot apply: `status` (400 bad shape, 422 a path that does not fit) and the reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def parse_pointer(doc: Any, text: str) -> Pointer:
    """An RFC 6901 pointer resolved against `doc` (list indices as ints); SurgeryError when absent."""
    if not isinstance(text, str) or (text and not text.startswith("/")):
        raise SurgeryError(400, f"path {text!r} is not a JSON pointer (like /messages/3)")
    out: list[str | int] = []
    node = doc
    for raw in text.split("/")[1:] if text else []:
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and token.isdigit() and int(token) < len(node):
            out.append(int(token))
            node = node[int(token)]
        elif isinstance(node, dict) and token in node:
            out.append(token)
            node = node[token]
        else:
            raise SurgeryError(422, f"path {text!r} is not in the input")
    return tuple(out)


def _get(doc: Any, ptr: Pointer) -> Any:
    for token in ptr:
        doc = doc[token]
    return doc


def _set(doc: Any, ptr: Pointer, value: Any) -> Any:
    if not ptr:
        return value
    _get(doc, ptr[:-1])[ptr[-1]] = value
    return doc


def cut_text(text: str, keep_first: int, keep_last: int, tokenizer: Tokenizer) -> str:
    """The text with its middle cut, keeping the first/last N tokens, and a marker of how many went."""
    if tokenizer.encode is not None and tokenizer.decode is not None:
        ids = tokenizer.encode(text)
        if len(ids) <= keep_first + keep_last:
            return text
        head = tokenizer.decode(ids[:keep_first])
        tail = tokenizer.decode(ids[len(ids) - keep_last :]) if keep_last else ""
        return f"{head}…[{len(ids) - keep_first - keep_last} tokens cut]…{tail}"
    first, last = keep_first * CHARS_PER_TOKEN, keep_last * CHARS_PER_TOKEN
    if len(text) <= first + last:
        return text
    gone = (len(text) - first - last + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN
    return f"{text[:first]}…[about {gone} tokens cut]…{text[len(text) - last :] if last else ''}"


def _check_ops(ops: Any) -> list[dict[str, Any]]:
    shape = (
        'ops must be a list of {"path", "op": "drop"} or {"path", "op": "truncate", "keepFirst", "keepLast"}'
    )
    if not isinstance(ops, list) or not all(isinstance(o, dict) for o in ops):
        raise SurgeryError(400, shape)
    for op in ops:
        if op.get("op") not in ("drop", "truncate") or not isinstance(op.get("path"), str):
            raise SurgeryError(400, shape)
        if op["op"] == "truncate":
            for key in ("keepFirst", "keepLast"):
                value = op.get(key, 0)
                if type(value) is not int or value < 0:
                    raise SurgeryError(400, f"{key} must be a whole number of tokens, 0 or more")
    return ops


def _calls_answered(doc: Any, call_id: str) -> list[Pointer]:
    """Where the tool call a result answers sits: an OpenAI `tool_calls` entry, an Anthropic
    `tool_use` block, a Responses `function_call` item."""
    found: list[Pointer] = []
    if not isinstance(doc, dict):
        return found
    for key in ("messages", "input", "contents"):
        listed = doc.get(key)
        if not isinstance(listed, list):
            continue
        for i, m in enumerate(listed):
            if not isinstance(m, dict):
                continue
            if m.get("type") == "function_call" and m.get("call_id") == call_id:
                found.append((key, i))
            calls = m.get("tool_calls")
            for j, call in enumerate(calls if isinstance(calls, list) else []):
                if isinstance(call, dict) and (call.get("id") == call_id or call.get("call_id") == call_id):
                    found.append((key, i, "tool_calls", j))
            ck = next((k for k in parts_mod.CONTENT_KEYS if isinstance(m.get(k), list)), "")
            for j, block in enumerate(m[ck] if ck else []):
                if isinstance(block, dict) and block.get("type") in CALL_TYPES and block.get("id") == call_id:
                    found.append((key, i, ck, j))
    return found


def _empty_message(m: Any) -> bool:
    if not isinstance(m, dict):
        return False
    if m.get("tool_calls"):
        return False
    if m.get("type") in ("function_call", "function_call_output"):
        return False
    content = next((m[k] for k in parts_mod.CONTENT_KEYS if k in m), None)
    return content in (None, "", [])


def apply(node_input: Any, ops: Any, tokenizer: Tokenizer) -> Any:
    """The input with the ops applied (paths are into the input as given, not as edited)."""
    checked = _check_ops(ops)
    doc = copy.deepcopy(node_input)
    found = {p.path: p for p in parts_mod.split(node_input)}
    drops: set[Pointer] = set()
    for op in checked:
        ptr = parse_pointer(doc, op["path"])
        if op["op"] == "truncate":
            target = _get(doc, ptr)
            if not isinstance(target, str):
                part = found.get(op["path"])
                if part is None or part.text_path is None:
                    raise SurgeryError(422, f"nothing to truncate at {op['path']!r}: it holds no single text")
                ptr = parse_pointer(doc, part.text_path)
                target = _get(doc, ptr)
            doc = _set(doc, ptr, cut_text(target, op.get("keepFirst", 0), op.get("keepLast", 0), tokenizer))
            continue
        if not ptr:
            raise SurgeryError(422, "dropping the whole input would send nothing; drop its parts")
        drops.add(ptr)
        part = found.get(op["path"])
        if part is not None and part.kind == "tool_result" and part.call_id:
            drops.update(_calls_answered(doc, part.call_id))
    # Messages that lose a call or a block, held by identity: deleting shifts the indices.
    touched = [(_get(doc, ptr[:1]), _get(doc, ptr[:2])) for ptr in drops if len(ptr) > 2]
    for ptr in sorted(drops, key=_order, reverse=True):
        container = _get(doc, ptr[:-1])
        del container[ptr[-1]]  # a later index first, so earlier pointers still hold
    # A message that lost its only call or block would be sent empty: drop it too.
    for listed, m in touched:
        if isinstance(m, dict) and m.get("tool_calls") == []:
            del m["tool_calls"]
        if isinstance(listed, list) and _empty_message(m):
            for i, held in enumerate(listed):
                if held is m:
                    del listed[i]
                    break
    return doc


def _order(ptr: Pointer) -> tuple[tuple[int, int | str], ...]:
    return tuple((0, t) if isinstance(t, int) else (1, t) for t in ptr)
