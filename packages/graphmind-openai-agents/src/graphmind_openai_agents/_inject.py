"""A JSON value a person gave (inject, a recorded reply) as the Agents SDK's own types.

One conversion serves inject, edit and replay alike: the one model-reply shape
(`graphmind.adapter.parse_model_reply`) becomes the SDK's `ModelResponse` whose `output` holds the
Responses items the agent loop reads (`ResponseOutputMessage` for text, `ResponseFunctionToolCall`
for each tool call, a handoff included: a handoff is the tool call `transfer_to_<agent>`), so the loop
follows an injected reply exactly as it follows a real one. A streamed call gets the same items in
the event the loop needs, `response.completed` (agents/run_internal/run_loop.py:2655: the terminal
event's `response.output` is the turn's reply), after the text's delta events.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from agents.items import ModelResponse
from agents.usage import Usage
from openai.types.responses import (
    Response,
    ResponseCompletedEvent,
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseTextDeltaEvent,
)

from graphmind.adapter import Items, Owned, parse_model_reply

INJECTED_MODEL = "graphmind-injected"


def output_items(value: Any) -> list[Any]:
    """The Responses output items of an injected model reply (raises ValueError on a bad shape)."""
    reply = parse_model_reply(value)
    items: list[Any] = []
    if reply.content:
        items.append(
            ResponseOutputMessage(
                id=f"msg_gm_{uuid.uuid4().hex[:16]}",
                type="message",
                role="assistant",
                status="completed",
                content=[ResponseOutputText(type="output_text", text=reply.content, annotations=[])],
            )
        )
    for call in reply.tool_calls:
        items.append(
            ResponseFunctionToolCall(
                id=f"fc_gm_{uuid.uuid4().hex[:16]}",
                type="function_call",
                call_id=call.id,
                name=call.name,
                arguments=json.dumps(call.arguments),
                status="completed",
            )
        )
    return items


def model_response(value: Any) -> ModelResponse:
    """`Model.get_response`'s result for an injected reply: no request was made, so no usage."""
    return ModelResponse(output=output_items(value), usage=Usage(), response_id=None)


def completed_event(value: Any) -> Items:
    """`Model.stream_response`'s events for an injected (or replayed) reply: its text as
    `response.output_text.delta` events, a word each (so a replayed stream arrives as a stream),
    then the `response.completed` the loop reads the turn from."""
    output = output_items(value)
    events: list[Any] = []
    for index, item in enumerate(output):
        if isinstance(item, ResponseOutputMessage):
            part = item.content[0] if item.content else None
            text = part.text if isinstance(part, ResponseOutputText) else ""
            for piece in re.findall(r"\s*\S+\s*|\s+", text):
                events.append(
                    ResponseTextDeltaEvent(
                        type="response.output_text.delta",
                        item_id=item.id,
                        output_index=index,
                        content_index=0,
                        delta=piece,
                        sequence_number=len(events),
                        logprobs=[],
                    )
                )
    response = Response(
        id=f"resp_gm_{uuid.uuid4().hex[:16]}",
        created_at=0.0,
        model=INJECTED_MODEL,
        object="response",
        output=output,
        parallel_tool_calls=True,
        tool_choice="auto",
        tools=[],
        status="completed",
    )
    events.append(
        ResponseCompletedEvent(type="response.completed", response=response, sequence_number=len(events))
    )
    return Items(tuple(events))


def stream_reply(events: list[Any]) -> tuple[Any, Any]:
    """(node output, usage) of a model stream read so far: the terminal event's response; an
    `Owned` tuple when both may be claimed owned (the stream loop then records them without the
    pipeline's copy, as `_model._settle` does for an unstreamed reply)."""
    from ._describe import plain_usage, reply_of

    for event in reversed(events):
        response = getattr(event, "response", None)
        if getattr(event, "type", None) == "response.completed" and response is not None:
            usage = getattr(response, "usage", None)
            tokens = None
            if usage is not None:
                tokens = {
                    "inputTokens": usage.input_tokens,
                    "outputTokens": usage.output_tokens,
                    "totalTokens": usage.total_tokens,
                }
            output, owned = reply_of(response.output)
            return Owned((output, tokens)) if owned and plain_usage(tokens) else (output, tokens)
    text = "".join(e.delta for e in events if getattr(e, "type", None) == "response.output_text.delta")
    return {"role": "assistant", "content": text or None}, None
