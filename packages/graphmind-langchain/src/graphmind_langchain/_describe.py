"""LangChain objects as plain JSON for events, and injected JSON back as LangChain objects."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult, LLMResult
from pydantic import BaseModel

from graphmind.adapter import ModelReply, json_scalar, json_scalars, parse_model_reply

# pydantic.BaseModel.__getattr__ (pydantic/main.py) raises AttributeError for a name the model lacks:
# 3-4 µs each (a HumanMessage's `tool_calls`, a text LLM's `Generation.message`), per message per
# model call. `field_or_none` answers the same without raising.
_PYDANTIC_GETATTR = getattr(BaseModel, "__getattr__", None)
_EXTRA_ONLY: dict[tuple[type, str], bool] = {}
_ABSENT = object()


def field_or_none(obj: Any, name: str) -> Any:
    """`getattr(obj, name, None)`, without pydantic's exception when a LangChain object lacks `name`.

    A pydantic model whose class has neither a field nor any attribute called `name`, and keeps
    pydantic's own `__getattr__`, can only find it in the instance `__dict__` (set by hand) or, through
    that `__getattr__`, in the model's extra values (`extra="allow"`, as BaseMessage has), else it
    raises: for those classes this reads the two directly. Everything else (a field, a property,
    any other object) is a plain `getattr`, which is fast when the attribute exists. The per-class
    answer is cached (a class is not expected to gain such an attribute at run time).
    """
    key = (type(obj), name)
    extra_only = _EXTRA_ONLY.get(key)
    if extra_only is None:
        extra_only = _learn(key)
    if not extra_only:
        return getattr(obj, name, None)
    value = obj.__dict__.get(name, _ABSENT)
    if value is not _ABSENT:
        return value
    extra = getattr(obj, "__pydantic_extra__", None)
    return extra.get(name) if extra else None


def _learn(key: tuple[type, str]) -> bool:
    cls, name = key
    fields = getattr(cls, "__pydantic_fields__", None)
    extra_only = _EXTRA_ONLY[key] = (
        _PYDANTIC_GETATTR is not None
        and getattr(cls, "__getattr__", None) is _PYDANTIC_GETATTR
        and isinstance(fields, dict)
        and name not in fields
        and name not in (getattr(cls, "__private_attributes__", None) or ())
        and not hasattr(cls, name)
    )
    return extra_only


def text_of(content: Any) -> str:
    """Message content (a string, or a list of content blocks) as plain text."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        return "".join(parts)
    return ""


def message_json(message: BaseMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.type, "content": message.content}
    tool_calls = field_or_none(message, "tool_calls")
    if tool_calls:
        out["tool_calls"] = [
            {"name": c.get("name"), "args": c.get("args"), "id": c.get("id")} for c in tool_calls
        ]
    if isinstance(message, ToolMessage):
        out["tool_call_id"] = message.tool_call_id
    if message.name:
        out["name"] = message.name
    return out


def messages_input(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    return {"messages": [message_json(m) for m in messages]}


# ---- owned payloads (docs/adapters.md, "Owned payloads"): what this module just built, handed over
# without the pipeline's snapshot copy when every container is ours and every leaf a plain JSON scalar.
def _flat(d: Any) -> bool:
    """An exact dict of exact-str keys and `json_scalar` values (a tool call's args, a tool's input)."""
    return type(d) is dict and all(type(k) is str for k in d) and json_scalars(d) and json_scalars(d.values())


def claim_message(out: dict[str, Any]) -> bool:
    """Whether a dict `message_json` / `ai_json` just built may be owned. Its `tool_calls` list and
    call dicts are ours; a call's `args` is the app's dict, so it is replaced by an (equal) copy when
    it is flat, and anything nested or odd takes the full pass instead."""
    for key, value in out.items():
        if key == "tool_calls":
            for call in value:
                args = call["args"]
                if not (_flat(args) and json_scalar(call["name"]) and json_scalar(call["id"])):
                    return False
                call["args"] = dict(args)
        elif not json_scalar(value):  # content as a list of blocks is the app's: the full pass
            return False
    return True


def messages_input_owned(messages: Sequence[BaseMessage]) -> tuple[dict[str, Any], bool]:
    """`messages_input`, and whether it may be handed over as owned."""
    built = [message_json(m) for m in messages]
    return {"messages": built}, all([claim_message(m) for m in built])


def claim_reply(value: Any) -> bool:
    """Whether `llm_result_json`'s answer (a reply dict, a text, or a list of them) may be owned."""
    if type(value) is dict:
        return claim_message(value)
    if type(value) is list:
        return all([claim_reply(v) for v in value])
    return json_scalar(value)


def claim_usage(usage: dict[str, Any] | None) -> bool:
    return usage is None or json_scalars(usage.values())


def tool_input_owned(described: Any) -> tuple[Any, bool]:
    """A tool's input (LangChain's dict of the call's arguments, or its input text): a flat dict is
    copied and owned, a plain string is owned as it is, anything else takes the full pass."""
    if _flat(described):
        return dict(described), True
    return described, type(described) is str and json_scalar(described)


def first_message_key(messages: Sequence[Any]) -> str:
    """A stable text for the prompt's first message (groups model steps into invocations)."""
    if not messages:
        return ""
    first = messages[0]
    if isinstance(first, BaseMessage):
        return f"{first.type}:{text_of(first.content)[:2000]}"
    return str(first)[:2000]


def ai_json(message: BaseMessage) -> dict[str, Any]:
    """A model reply in the same shape an injected reply takes."""
    out: dict[str, Any] = {"content": message.content}
    tool_calls = field_or_none(message, "tool_calls")
    if tool_calls:
        out["tool_calls"] = [
            {"name": c.get("name"), "args": c.get("args"), "id": c.get("id")} for c in tool_calls
        ]
    return out


def chat_result_json(result: ChatResult) -> Any:
    replies = [ai_json(g.message) for g in result.generations]
    return replies[0] if len(replies) == 1 else replies


def llm_result_json(result: LLMResult) -> Any:
    first = result.generations[0] if result.generations else []
    replies = [ai_json(g.message) if isinstance(g, ChatGeneration) else g.text for g in first]
    return replies[0] if len(replies) == 1 else replies


def _usage_from_metadata(usage: Any) -> dict[str, Any] | None:
    if not usage:
        return None
    inp, out = usage.get("input_tokens"), usage.get("output_tokens")
    return {"inputTokens": inp, "outputTokens": out, "totalTokens": usage.get("total_tokens")}


def _usage_from_llm_output(llm_output: Any) -> dict[str, Any] | None:
    usage = (llm_output or {}).get("token_usage") or (llm_output or {}).get("usage")
    if not isinstance(usage, dict):
        return None
    inp = usage.get("prompt_tokens", usage.get("input_tokens"))
    out = usage.get("completion_tokens", usage.get("output_tokens"))
    total = usage.get("total_tokens")
    if inp is None and out is None and total is None:
        return None
    return {"inputTokens": inp, "outputTokens": out, "totalTokens": total}


def chat_result_usage(result: ChatResult) -> dict[str, Any] | None:
    for g in result.generations:
        usage = _usage_from_metadata(field_or_none(g.message, "usage_metadata"))
        if usage:
            return usage
    return _usage_from_llm_output(result.llm_output)


def llm_result_usage(result: LLMResult) -> dict[str, Any] | None:
    for batch in result.generations:
        for g in batch:
            usage = _usage_from_metadata(field_or_none(field_or_none(g, "message"), "usage_metadata"))
            if usage:
                return usage
    return _usage_from_llm_output(result.llm_output)


def chunks_usage(chunks: Sequence[ChatGenerationChunk]) -> dict[str, Any] | None:
    total: dict[str, Any] | None = None
    for c in chunks:
        usage = field_or_none(c.message, "usage_metadata")
        if usage:
            total = (
                _usage_from_metadata(usage)
                if total is None
                else {
                    "inputTokens": (total["inputTokens"] or 0) + (usage.get("input_tokens") or 0),
                    "outputTokens": (total["outputTokens"] or 0) + (usage.get("output_tokens") or 0),
                    "totalTokens": (total["totalTokens"] or 0) + (usage.get("total_tokens") or 0),
                }
            )
    return total


def chunks_json(chunks: Sequence[ChatGenerationChunk]) -> Any:
    if not chunks:
        return {"content": ""}
    merged = chunks[0]
    for c in chunks[1:]:
        merged = merged + c
    return ai_json(merged.message)


def _tool_calls(reply: ModelReply) -> list[dict[str, Any]]:
    return [{"name": c.name, "args": c.arguments, "id": c.id} for c in reply.tool_calls]


def to_ai_message(value: Any) -> AIMessage:
    """The one model-reply shape (docs/protocol.md) as LangChain's `AIMessage`."""
    reply = parse_model_reply(value)
    return AIMessage(content=reply.content or "", tool_calls=_tool_calls(reply))


def to_chat_result(value: Any) -> ChatResult:
    return ChatResult(generations=[ChatGeneration(message=to_ai_message(value))])


def describe_chunks(chunks: list[ChatGenerationChunk]) -> tuple[Any, dict[str, Any] | None]:
    """(output, usage) of a streamed step from the chunks it produced (the core stream loop's `describe`)."""
    return chunks_json(chunks), chunks_usage(chunks)


def to_chunk(value: Any) -> ChatGenerationChunk:
    reply = parse_model_reply(value)
    chunks = [
        {
            "name": c["name"],
            "args": json.dumps(c["args"]),
            "id": c["id"],
            "index": i,
            "type": "tool_call_chunk",
        }
        for i, c in enumerate(_tool_calls(reply))
    ]
    return ChatGenerationChunk(message=AIMessageChunk(content=reply.content or "", tool_call_chunks=chunks))  # type: ignore[arg-type]


def tool_output_json(output: Any) -> Any:
    if isinstance(output, ToolMessage):  # the same shape an injected tool result takes
        if output.status == "success" and output.artifact is None:
            return output.content
        out: dict[str, Any] = {"content": output.content}
        if output.status != "success":
            out["status"] = output.status
        if output.artifact is not None:
            out["artifact"] = output.artifact
        return out
    if isinstance(output, tuple) and len(output) == 2:  # response_format="content_and_artifact"
        return {"content": output[0], "artifact": output[1]}
    return output


def documents_json(documents: Sequence[Any]) -> list[Any]:
    out = []
    for d in documents:
        content = getattr(d, "page_content", None)
        out.append(
            {"page_content": content, "metadata": getattr(d, "metadata", {})} if content is not None else d
        )
    return out


def tool_roster(tools: Any) -> list[dict[str, Any]]:
    """The `graph.hint` nodes for the tools a model was bound with (OpenAI-style or plain dicts)."""
    nodes = []
    for spec in tools or []:
        name = None
        if isinstance(spec, dict):
            fn = spec.get("function")
            name = fn.get("name") if isinstance(fn, dict) else spec.get("name")
        else:
            name = getattr(spec, "name", None)
        if isinstance(name, str) and name:
            nodes.append({"nodeId": f"tool:{name}", "kind": "tool", "name": name})
    return nodes
