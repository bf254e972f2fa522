"""The demo agent: a plain tool-calling loop over the OpenAI SDK, instrumented by graphmind-openai.

This is the shape of a real agent: the model is an `openai.OpenAI` client (here pointed at the
scripted model on loopback, or at OpenAI with `--live`), the tools are plain functions gated with
`gm.wrap_tools`, and `gm.tool_call(call.id)` links each tool node to the model step that asked for it.
The scenario's hold is a breakpoint in this code (`breakpoint=`), so the demo never touches the
hub's debug state: the person's own breakpoints and pause-on-error stay as they were.
"""

from __future__ import annotations

import json
from typing import Any

import graphmind

from .travel import PROMPT, TOOL_SCHEMAS, TravelTools

SYSTEM = "You are a travel assistant. Use the tools to search, check the budget, then book."


def run_travel_agent(
    openai_client: Any,
    gm: graphmind.Client,
    tools: TravelTools,
    *,
    model: str,
    run_name: str,
    breakpoints: dict[str, str] | None = None,
) -> tuple[str, str]:
    """Runs one conversation to its end. Returns (run id, the assistant's final answer).
    `breakpoints`: tool name -> the gate held from code ("before", "error"). An Abort from the
    viewer ends the run `aborted` and the conversation with it: the demo then says so, never a
    traceback (issue 29)."""
    run_ids: list[str] = []
    try:
        return _conversation(openai_client, gm, tools, model, run_name, breakpoints, run_ids)
    except graphmind.RunAborted:
        return (run_ids[0] if run_ids else ""), "(the run was aborted from the viewer; the agent stopped)"


def _conversation(
    openai_client: Any,
    gm: graphmind.Client,
    tools: TravelTools,
    model: str,
    run_name: str,
    breakpoints: dict[str, str] | None,
    run_ids: list[str],
) -> tuple[str, str]:
    holds = breakpoints or {}
    plain = {name: fn for name, fn in tools.as_dict().items() if name not in holds}
    gated = gm.wrap_tools(plain)
    for name, gate in holds.items():
        gated[name] = gm.wrap(tools.as_dict()[name], name, breakpoint=gate)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": PROMPT},
    ]
    with gm.run(run_name, meta={"demo": True, "model": model}) as run:
        run_ids.append(run.run_id)
        for _ in range(12):
            completion = openai_client.chat.completions.create(
                model=model, messages=messages, tools=TOOL_SCHEMAS
            )
            message = completion.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return run.run_id, message.content or ""
            for call in message.tool_calls:
                name = call.function.name
                try:
                    args = json.loads(call.function.arguments or "{}")
                    with gm.tool_call(call.id):
                        result = gated[name](**args)
                    content = json.dumps(result)
                except graphmind.RunAborted:
                    raise
                except Exception as exc:  # a failed tool is reported to the model, as real agents do
                    content = json.dumps({"error": f"{type(exc).__name__}: {exc}"})
                messages.append({"role": "tool", "tool_call_id": call.id, "name": name, "content": content})
        return run.run_id, "The agent stopped after 12 steps without an answer."
