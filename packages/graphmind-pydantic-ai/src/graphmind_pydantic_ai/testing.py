"""Offline fakes for tests of an instrumented agent: a `FunctionModel` that plays a scripted model
and counts its calls, and tools that count theirs (a tool is a plain function: see the package's tests).

    model = ScriptedModel(["Paris."])                                  # one text reply
    model = ScriptedModel([call("search", q="cats"), "done"])          # a tool call, then text
    agent = Agent(model.model, tools=[search])

Each reply is a string (a text reply), a `ToolCallPart` (from `call(...)`), or an exception (raised
once, as a provider error would be). When the script runs out the last reply repeats.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

Reply = str | ToolCallPart | BaseException | Callable[[list[ModelMessage]], Any]


def call(name: str, call_id: str | None = None, **arguments: Any) -> ToolCallPart:
    """A tool call the scripted model makes."""
    return ToolCallPart(tool_name=name, args=arguments, tool_call_id=call_id or f"call_{name}")


def last_tool_return(messages: list[ModelMessage]) -> str | None:
    """The content of the newest tool return the model is shown (None before any)."""
    for message in reversed(messages):
        for part in getattr(message, "parts", ()):
            if isinstance(part, ToolReturnPart):
                return part.model_response_str()
    return None


@dataclass
class ScriptedModel:
    """A FunctionModel (text, tool calls and streams) that counts the requests reaching it."""

    script: list[Reply]
    chunk: int = 4  # characters per streamed text chunk
    calls: int = 0
    seen: list[list[ModelMessage]] = field(default_factory=list)
    model: FunctionModel = field(init=False)

    def __post_init__(self) -> None:
        self.model = FunctionModel(self._reply, stream_function=self._stream, model_name="scripted")

    def add(self, reply: Reply) -> None:
        """Plays `reply` next (before the rest of the script)."""
        self.script.insert(0, reply)

    def _next(self, messages: list[ModelMessage]) -> Any:
        self.calls += 1
        self.seen.append(list(messages))
        reply = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply) and not isinstance(reply, ToolCallPart):
            reply = reply(messages)
        return reply

    def _reply(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        reply = self._next(messages)
        if isinstance(reply, ToolCallPart):
            return ModelResponse(parts=[reply])
        return ModelResponse(parts=[TextPart(str(reply))])

    async def _stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        reply = self._next(messages)
        if isinstance(reply, ToolCallPart):
            yield {
                0: DeltaToolCall(
                    name=reply.tool_name, json_args=reply.args_as_json_str(), tool_call_id=reply.tool_call_id
                )
            }
            return
        text = str(reply)
        for i in range(0, len(text), self.chunk):
            yield text[i : i + self.chunk]
