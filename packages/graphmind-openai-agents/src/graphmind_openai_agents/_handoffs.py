"""Each handoff: one gated `handoff:<from>-><to>` node (core's rule, docs/protocol.md "Agents").

The run loop resolves a handoff in `execute_handoffs` (agents/run_internal/turn_resolution.py:544,
looked up at call time at :963 / :1455): it invokes the handoff (the app's `on_handoff`), runs the
input filter or the nested history, and returns the `SingleStepResult` whose `next_step` is
`NextStepHandoff(new_agent)` (:759) and whose `original_input` + items are what the target agent's
first model request is built from. The row runs that first, then passes the result through core's
handoff gate (`graphmind.adapter.ahandoff`) with the conversation handed over as its input:

- continue: the result as the SDK built it; the target's turns report it as their agent
  (`_model.py`'s `get_model` row enters it);
- an edited input: the target gets that conversation and nothing else (`original_input` = the
  edit, no step items left to append to it; the step's items stay in the session's history);
- inject: the run ends with that value as its final output, as if the target had answered it
  (`NextStepFinalOutput`, agents/run_internal/run_steps.py): the target never runs;
- abort: RunAborted.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

from agents.items import ItemHelpers
from agents.run_internal.run_steps import NextStepFinalOutput

from graphmind.adapter import Patches, ahandoff


def _name(agent: Any, default: str = "agent") -> str:
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name else default


def handed_items(result: Any) -> list[Any]:
    """The conversation the target agent's first turn starts from: the run's input, then every
    item of the steps so far as model input (agents/items.py `to_input_item`)."""
    original = result.original_input
    items = ItemHelpers.input_to_new_input_list(original) if original is not None else []
    for item in [*result.pre_step_items, *result.new_step_items]:
        items.append(item.to_input_item())
    return items


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)  # an SDK item that is a pydantic model (the Responses types)
    if callable(dump):
        return dump(mode="json", exclude_unset=True)
    return str(value)


def _json(items: list[Any]) -> Any:
    """The handed-over items as fresh JSON (what the gate shows and a person edits)."""
    return json.loads(json.dumps(items, default=_plain))


def _edited(result: Any, edited: Any) -> Any:
    items = edited.get("input") if isinstance(edited, dict) else edited
    if not isinstance(items, list):
        raise ValueError('a handoff\'s input is {"input": [...]}: the conversation the target agent gets')
    history = result.session_step_items
    if history is None:
        history = [*result.new_step_items]
    return dataclasses.replace(
        result,
        original_input=items,
        pre_step_items=[],
        new_step_items=[],
        session_step_items=history,
    )


def wrap_execute_handoffs(original: Callable[..., Any], state: Patches) -> Callable[..., Any]:
    async def execute_handoffs(**kwargs: Any) -> Any:
        engine = state.engine()
        result = await original(**kwargs)
        target = getattr(result.next_step, "new_agent", None)
        if not engine.live or target is None:
            return result
        source = _name(kwargs.get("public_agent"))
        handed = {"input": _json(handed_items(result))}
        decided = await ahandoff(engine, source, _name(target), handed, attrs={"framework": "openai-agents"})
        if decided.injected:  # answered as the target: the run ends with that value
            return dataclasses.replace(result, next_step=NextStepFinalOutput(decided.output))
        if decided.edited:
            return _edited(result, decided.input)
        return result

    execute_handoffs.__wrapped__ = original  # type: ignore[attr-defined]
    return execute_handoffs
