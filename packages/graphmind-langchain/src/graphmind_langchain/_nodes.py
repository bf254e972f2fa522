"""Node identity for LangChain calls, shared by the handler and the gated methods.

| call          | nodeId             | instanceId                         |
|---------------|--------------------|------------------------------------|
| model step    | `llm:step`         | `<invocationId>:sN` (core's steps) |
| tool call     | `tool:<name>`      | the tool call id, else the run id  |
| retriever     | `retriever:<name>` | the LangChain run id               |
| chain         | none: chains are the parent structure (a root chain is the run) |
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphmind.adapter import Engine, NodeSpec, RunContext, StepIdentity, json_scalar, json_scalars

from ._describe import field_or_none, first_message_key, messages_input_owned, tool_input_owned

# What a before gate offers when nothing can substitute the call (an ungated tool or model seen
# only by the callback handler): no callback can return a result instead of the call.
OBSERVE_ONLY_ACTIONS = ("continue", "abort")


_NAME_KEYS = ("model", "model_name", "ls_model_name")
_NAME_KEY_SET = frozenset(_NAME_KEYS)


def model_name(
    model: Any = None, params: dict[str, Any] | None = None, metadata: dict[str, Any] | None = None
) -> str | None:
    for source in (params, metadata):
        # one C-level check first: most metadata (and a fake model's params) has none of the keys
        if source and not _NAME_KEY_SET.isdisjoint(source):
            for key in _NAME_KEYS:
                value = source.get(key)
                if isinstance(value, str) and value:
                    return value
    if model is not None:
        for key in ("model", "model_name"):
            value = field_or_none(model, key)
            if isinstance(value, str) and value:
                return value
        return type(model).__name__
    return None


def llm_step(client: Engine, run: RunContext | None, messages: Sequence[Any]) -> StepIdentity:
    # core groups each agent's steps into invocations of their own (the caller's agent scope)
    return client.next_llm_step(first_message_key(messages), len(messages), run=run)


def llm_spec(
    step: StepIdentity, messages: Sequence[Any], model: str | None, gated: bool, prompts: bool = False
) -> NodeSpec:
    described: dict[str, Any]
    if prompts:
        described, owned = {"prompts": list(messages)}, json_scalars(messages)
    else:
        described, owned = messages_input_owned(messages)
    return NodeSpec(
        name="step",
        kind="llm",
        input=described,
        node_id="llm:step",
        instance_id=step.instance_id,
        attrs={"model": model} if model else None,
        actions=None if gated else OBSERVE_ONLY_ACTIONS,
        owned=owned and (not model or json_scalar(model)),
    )


def tool_spec(name: str, described_input: Any, instance_id: str | None, gated: bool) -> NodeSpec:
    described, owned = tool_input_owned(described_input)
    return NodeSpec(
        name=name,
        kind="tool",
        input=described,
        instance_id=instance_id,
        actions=None if gated else OBSERVE_ONLY_ACTIONS,
        owned=owned,
    )


def retriever_spec(name: str, query: str, instance_id: str) -> NodeSpec:
    """A retriever run: observed only (no callback can substitute its documents)."""
    return NodeSpec(
        name, "retriever", {"query": query}, instance_id=instance_id, actions=OBSERVE_ONLY_ACTIONS
    )
