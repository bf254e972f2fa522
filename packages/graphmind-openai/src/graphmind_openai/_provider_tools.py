"""Provider-executed tools (AI SDK page, "Provider-executed tools"): OpenAI's hosted tools.

A Responses call can run tools on OpenAI's side (web search, file search, code interpreter, remote
MCP, image generation). They run inside the one HTTP call, so no gate can reach them: each becomes
a `tool:<name>` node, child of its `llm:step`, marked `providerExecuted: true` and `ungated: true`
(the viewer draws the ungated affordance), with the output item's id as the instance id.
The item types: openai/types/responses/response_output_item.py `ResponseOutputItem`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from graphmind.adapter import Engine, NodeExecution, NodeSpec

# output item type -> (tool name, the item fields that are the tool's input)
HOSTED: dict[str, tuple[str, tuple[str, ...]]] = {
    "web_search_call": ("web_search", ("action",)),
    "file_search_call": ("file_search", ("queries",)),
    "code_interpreter_call": ("code_interpreter", ("code", "container_id")),
    "mcp_call": ("mcp", ("server_label", "arguments")),  # named after the MCP tool it called
    "image_generation_call": ("image_generation", ("revised_prompt", "size", "quality", "output_format")),
}
# `tools` request entries that are hosted (their names in graph.hint): openai/types/responses/tool.py
HOSTED_TOOL_TYPES = frozenset(
    {"web_search", "web_search_preview", "file_search", "code_interpreter", "mcp", "image_generation"}
)
_NOT_OUTPUT = frozenset({"id", "type"})


class ProviderToolError(Exception):
    """The error a hosted tool reported (an MCP call's `error`), as the node's error."""


def _as_dict(item: Any) -> dict[str, Any] | None:
    if isinstance(item, Mapping):
        return dict(item)
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        try:
            data = dump(mode="json", exclude_none=True)
        except Exception:
            return None
        return data if isinstance(data, dict) else None
    return None


def is_hosted(item: Any) -> bool:
    kind = item.get("type") if isinstance(item, Mapping) else getattr(item, "type", None)
    return kind in HOSTED


def describe(item: Mapping[str, Any]) -> tuple[NodeSpec, Any, BaseException | None]:
    """(node spec, output, error) for one hosted-tool output item."""
    name, input_keys = HOSTED[item["type"]]
    if item["type"] == "mcp_call" and isinstance(item.get("name"), str):
        name = item["name"]
    node_input = {key: item[key] for key in input_keys if item.get(key) is not None}
    output: dict[str, Any] = {
        key: value for key, value in item.items() if key not in _NOT_OUTPUT and key not in input_keys
    }
    result = output.get("result")
    if item["type"] == "image_generation_call" and isinstance(result, str):
        output["result"] = f"<base64 image, {len(result)} characters>"  # megabytes of image data
    error = item.get("error")
    spec = NodeSpec(
        name=name,
        kind="tool",
        input=node_input,
        instance_id=item.get("id") if isinstance(item.get("id"), str) else None,
        attrs={"itemType": item["type"]},
        extra={"providerExecuted": True, "ungated": True},
    )
    return spec, output, ProviderToolError(_error_text(error)) if error else None


def _error_text(error: Any) -> str:
    """A plain string (older API versions) or an object (`McpToolCallError`, `ImageGenerationCallError`)."""
    if isinstance(error, Mapping):
        message = error.get("message")
        kind = error.get("type")
        if isinstance(message, str):
            return f"{kind}: {message}" if isinstance(kind, str) else message
    return str(error)


def observe(engine: Engine, ex: NodeExecution, items: Iterable[Any]) -> None:
    """Records each hosted-tool item among `items` as an ungated child of `ex`. Never raises."""
    for item in items:
        if not is_hosted(item):
            continue
        data = _as_dict(item)
        if data is None:
            continue
        try:
            spec, output, error = describe(data)
        except Exception:
            continue
        engine.observe_ungated(spec, output, error=error, run=ex.run, parent_instance_id=ex.instance_id)


def hint_entry(name: str, hosted: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"nodeId": f"tool:{name}", "kind": "tool", "name": name}
    if hosted:
        entry.update(providerExecuted=True, ungated=True)
    return entry


def hosted_names(tools: Any) -> set[str]:
    """Names (as `tool_names` gives them) of the hosted entries of a `tools` parameter."""
    names: set[str] = set()
    if isinstance(tools, list | tuple):
        for tool in tools:
            if isinstance(tool, Mapping) and tool.get("type") in HOSTED_TOOL_TYPES and "function" not in tool:
                names.add(str(tool["type"]))
    return names


def output_items(result: Any, response: Any) -> list[Any]:
    """A non-streamed Responses reply's output items: off the SDK's typed result, else its body bytes."""
    items = getattr(result, "output", None)
    if not isinstance(items, list) and response is not None:
        try:
            items = json.loads(response.content).get("output")
        except Exception:
            return []
    return items if isinstance(items, list) else []


def hints(body: Mapping[str, Any], names: list[str]) -> list[dict[str, Any]]:
    """`graph.hint` entries for a request's tool roster, hosted tools marked provider-executed."""
    hosted = hosted_names(body.get("tools"))
    return [hint_entry(name, name in hosted) for name in names]


def observe_reply(engine: Engine, ex: NodeExecution, result: Any, response: Any) -> None:
    """The hosted-tool calls of a reply that was not streamed, as ungated children of `ex`."""
    observe(engine, ex, output_items(result, response))
