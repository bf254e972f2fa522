"""An injected (or replayed) JSON value turned into what CrewAI's own code returns.

A model step returns what `get_llm_response` returns (crewai/utilities/agent_utils.py:656): the
reply's text, or, with native function calling, the list of tool calls, here in the OpenAI dict
shape that the executor's `is_tool_call_list` (agent_utils.py:1262) and `extract_tool_call_info`
(agent_utils.py:1204) read for every provider. A tool returns its own result: the injected value as
it is (CrewAI formats it for the model, `format_native_tool_output_for_agent`).
"""

from __future__ import annotations

import json
from typing import Any

from graphmind.adapter import parse_model_reply


def model_answer(value: Any) -> Any:
    """core's one model-reply shape (docs/protocol.md, "Injecting a model reply") -> the step's answer."""
    reply = parse_model_reply(value)
    if reply.tool_calls:
        return [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments)},
            }
            for call in reply.tool_calls
        ]
    if not reply.content:
        raise ValueError(
            "an injected model reply needs a non-empty content or tool_calls (CrewAI rejects an empty answer)"
        )
    return reply.content


def tool_result(value: Any) -> Any:
    return value
