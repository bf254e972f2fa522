"""Node identity for LlamaIndex calls, shared by the handler and the gated methods.

| call                         | nodeId                     | instanceId                           |
|------------------------------|----------------------------|--------------------------------------|
| LLM chat / completion        | `llm:step`                 | `<invocationId>:sN` (core's steps)   |
| tool `call` / `acall`        | `tool:<name>`              | the model's tool call id, else fresh |
| retriever `retrieve`         | `retriever:<class>`        | fresh                                |
| query engine `query`         | `chain:<class>`            | fresh                                |
| workflow / agent `run`       | `agent:<name>`             | fresh (a root one is also the run)   |
| workflow step                | `chain:<step>`             | fresh                                |
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphmind.adapter import Engine, NodeSpec, RunContext, StepIdentity

from . import _links as links
from ._describe import messages_input, tool_input

# What the before gate offers for a node the handler only observes: it never holds (the
# dispatcher swallows every handler exception, so nothing raised there could abort the call).
OBSERVED = ("continue",)


def model_name(llm: Any) -> str:
    # The provider classes keep the model in a field (OpenAI.model, Anthropic.model); `metadata`
    # is a property that builds an LLMMetadata on every read, so it is only the fallback.
    for key in ("model", "model_name"):
        value = getattr(llm, key, None)
        if isinstance(value, str) and value:
            return value
    try:
        name = llm.metadata.model_name
    except Exception:
        name = None
    return name if isinstance(name, str) and name and name != "unknown" else type(llm).__name__


def llm_node(
    engine: Engine,
    run: RunContext | None,
    llm: Any,
    messages: Sequence[Any],
    kwargs: Mapping[str, Any],
    gated: bool,
) -> tuple[NodeSpec, StepIdentity]:
    """The `llm:step` node of one call: its step identity (core's invocation grouping) and spec."""
    described = messages_input(messages, kwargs)
    shown = described["messages"]
    key = f"{shown[0]['role']}:{(shown[0]['content'] or '')[:2000]}" if shown else ""
    step = engine.next_llm_step(key, len(shown), run=run)  # per agent: the caller's agent scope
    spec = NodeSpec(
        name="step",
        kind="llm",
        input=described,
        node_id="llm:step",
        instance_id=step.instance_id,
        attrs={"model": model_name(llm)},
        actions=None if gated else OBSERVED,
    )
    return spec, step


def tool_name(tool: Any) -> str:
    try:
        return str(tool.metadata.get_name())
    except Exception:
        return type(tool).__name__


def tool_spec(
    tool: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any], run: RunContext | None, gated: bool
) -> NodeSpec:
    name = tool_name(tool)
    described = tool_input(args, kwargs, getattr(tool, "ctx_param_name", None))
    call_id = links.take_tool_call_id(links.scope(run), name, described)
    return NodeSpec(
        name=name, kind="tool", input=described, instance_id=call_id, actions=None if gated else OBSERVED
    )
