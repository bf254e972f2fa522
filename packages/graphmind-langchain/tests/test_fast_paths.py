"""The handler's fast paths answer exactly what the plain ones did (issue 17: no behaviour change)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import LLM, BaseChatModel
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import (
    ChatGeneration,
    ChatGenerationChunk,
    ChatResult,
    Generation,
    GenerationChunk,
)
from pydantic import BaseModel

import graphmind
from graphmind.adapter import engine_for
from graphmind.testing import FakeHub
from graphmind_langchain import GraphmindCallbackHandler
from graphmind_langchain._describe import field_or_none


class WithProperty(HumanMessage):
    @property
    def tool_calls(self) -> list[str]:
        return ["from a property"]


class WithGetattr(HumanMessage):
    def __getattr__(self, item: str) -> Any:
        if item == "tool_calls":
            return ["from __getattr__"]
        return super().__getattr__(item)


class Plain:
    tool_calls = ("class attribute",)


class Strict(BaseModel):
    usage_metadata: dict[str, int] | None = None


def objects() -> list[Any]:
    return [
        HumanMessage("hi"),
        HumanMessage("hi", tool_calls=[{"name": "x"}]),  # an extra value (BaseMessage allows extras)
        SystemMessage("sys"),
        ToolMessage("out", tool_call_id="c1"),
        ChatMessage(role="r", content="c"),
        AIMessage("a", tool_calls=[{"name": "t", "args": {}, "id": "1"}], usage_metadata=None),
        AIMessage("a", usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}),
        AIMessageChunk(content="c", tool_call_chunks=[{"name": "t", "args": "{", "id": "1", "index": 0}]),
        Generation(text="t"),
        GenerationChunk(text="t"),
        ChatGeneration(message=AIMessage("g")),
        ChatGenerationChunk(message=AIMessageChunk(content="g")),
        WithProperty("p"),
        WithGetattr("g"),
        Strict(usage_metadata={"a": 1}),
        HumanMessage.model_construct(),  # no field set at all: every read goes through __getattr__
        Strict(),
        FakeMessagesListChatModel(responses=[AIMessage("ok")]),
        Plain(),
        None,
        "text",
    ]


NAMES = [
    "tool_calls",
    "tool_call_chunks",
    "message",
    "usage_metadata",
    "model",
    "model_name",
    "name",
    "content",
]


@pytest.mark.parametrize("name", NAMES)
def test_field_or_none_is_getattr(name: str) -> None:
    for obj in objects():
        for _ in range(2):  # the second read comes from the per-class cache
            assert field_or_none(obj, name) == getattr(obj, name, None), (type(obj).__name__, name)


def test_field_or_none_sees_an_extra_value_set_after_construction() -> None:
    message = HumanMessage("hi")
    assert field_or_none(message, "tool_calls") is None
    message.tool_calls = ["late"]  # type: ignore[attr-defined]
    assert field_or_none(message, "tool_calls") == ["late"] == message.tool_calls  # type: ignore[attr-defined]


def test_ignore_flags_read_as_langchain_defaults() -> None:
    handler, base = GraphmindCallbackHandler(graphmind.Client(app="t", enabled=False)), BaseCallbackHandler()
    for flag in [n for n in dir(BaseCallbackHandler) if n.startswith("ignore_")]:
        assert getattr(handler, flag) is getattr(base, flag) is False, flag


def test_a_given_session_is_kept_and_none_follows_the_default_client() -> None:
    client = graphmind.Client(app="t", enabled=False)
    assert GraphmindCallbackHandler(client)._client() is engine_for(client)
    default = GraphmindCallbackHandler()
    try:
        first = graphmind.configure(app="first", enabled=False)
        assert default._client() is engine_for(first)
        second = graphmind.configure(app="second", enabled=False)  # a new default: the handler follows it
        assert default._client() is engine_for(second)
    finally:
        graphmind.dispose()


class ToolCallStreamer(BaseChatModel):
    """Streams one tool call in three chunks (id and name first, then the arguments in two parts)."""

    @property
    def _llm_type(self) -> str:
        return "tool-call-streamer"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any) -> ChatResult:
        raise AssertionError("only streamed here")

    def _stream(
        self, messages: list[BaseMessage], stop: Any = None, **kwargs: Any
    ) -> Iterator[ChatGenerationChunk]:
        call_id = f"call-{len(messages)}"
        parts: list[dict[str, Any]] = [
            {"name": "search", "args": "", "id": call_id, "index": 0},
            {"name": None, "args": '{"query": ', "id": None, "index": 0},
            {"name": None, "args": '"q"}', "id": None, "index": 0},
        ]
        for part in parts:
            chunk = ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[part]))  # type: ignore[list-item]
            run_manager = kwargs.get("run_manager")
            if run_manager is not None:
                run_manager.on_llm_new_token("", chunk=chunk)
            yield chunk


def tool_args(hub: FakeHub, instance_id: str) -> list[dict[str, Any]]:
    return [
        d
        for e in hub.of_type("node.token")
        if e["instanceId"] == instance_id
        for d in e["deltas"]
        if d["t"] == "tool-args"
    ]


def test_streamed_tool_call_arguments_keep_their_id_and_name_per_step(
    hub: FakeHub, client: graphmind.Client
) -> None:
    handler = GraphmindCallbackHandler(client)
    model = ToolCallStreamer()
    for prompt in (["hi"], ["hi", "again"]):  # two steps: each node keeps its own tool-call ids
        list(model.stream([HumanMessage(p) for p in prompt], config={"callbacks": [handler]}))
    hub.wait_event(lambda e: e["type"] == "node.finished" and len(hub.of_type("node.finished")) == 2)
    starts = hub.of_type("node.started")
    assert [s["nodeId"] for s in starts] == ["llm:step", "llm:step"]
    for start, call_id in zip(starts, ("call-1", "call-2"), strict=True):
        deltas = tool_args(hub, start["instanceId"])
        assert {(d["toolCallId"], d["toolName"]) for d in deltas} == {(call_id, "search")}
        assert "".join(d["v"] for d in deltas) == '{"query": "q"}'
    assert handler._links == {}


class TextStreamer(LLM):
    """A text LLM whose `_stream` reports each chunk, as real ones do (BaseLLM.stream leaves it to them)."""

    @property
    def _llm_type(self) -> str:
        return "text-streamer"

    def _call(self, prompt: str, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> str:
        return "hello"

    def _stream(
        self, prompt: str, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Iterator[GenerationChunk]:
        for text in ("hel", "lo"):
            chunk = GenerationChunk(text=text)
            if run_manager is not None:
                run_manager.on_llm_new_token(text, chunk=chunk)
            yield chunk


def test_a_text_llm_stream_arrives_as_text_tokens(hub: FakeHub, client: graphmind.Client) -> None:
    llm = TextStreamer()
    assert "".join(llm.stream("q", config={"callbacks": [GraphmindCallbackHandler(client)]})) == "hello"
    hub.wait_event(lambda e: e["type"] == "node.finished")
    deltas = [d for e in hub.of_type("node.token") for d in e["deltas"]]
    assert [d["t"] for d in deltas] == ["text"] * len(deltas)
    assert "".join(d["v"] for d in deltas) == "hello"
