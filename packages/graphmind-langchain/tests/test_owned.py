"""Owned payloads (docs/adapters.md): the handler claims a node's input / output only when it built
every container of it and every leaf is a plain JSON scalar (a tool call's flat `args` is copied);
anything else (content blocks, nested args, a lone surrogate, NaN, an odd model name) takes the
pipeline's full pass. Either way the recorded JSON is what the snapshot would have made."""

from __future__ import annotations

import enum
import json
import math
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, Generation, LLMResult
from langchain_core.tools import tool

import graphmind
from graphmind._events.jsonsafe import (
    to_jsonable,  # the reference the claims must agree with (as openai's test_owned)
)
from graphmind.adapter import StepIdentity
from graphmind.testing import FakeHub
from graphmind_langchain import GraphmindCallbackHandler
from graphmind_langchain._describe import (
    claim_reply,
    claim_usage,
    llm_result_json,
    llm_result_usage,
    messages_input,
    tool_input_owned,
)
from graphmind_langchain._nodes import llm_spec, tool_spec

STEP = StepIdentity("inv:s1", "inv", 1)


class Model(str, enum.Enum):
    GPT = "gpt"


def snapshot(value: Any) -> Any:
    """What the pipeline's full pass records (to_jsonable's copy), as JSON text."""
    return json.dumps(to_jsonable(value), sort_keys=False)


def plain_history() -> list[BaseMessage]:
    return [
        SystemMessage("be brief"),
        HumanMessage("Plan a day in Cairo – naïvely ✓", name="ana"),
        AIMessage("", tool_calls=[{"name": "search", "args": {"query": "q", "n": 3, "x": 1.5}, "id": "c1"}]),
        ToolMessage("found", tool_call_id="c1"),
    ]


def test_plain_messages_are_owned_and_the_app_keeps_its_args() -> None:
    messages = plain_history()
    spec = llm_spec(STEP, messages, "fake-model", gated=False)
    assert spec.owned
    assert spec.input == messages_input(messages)
    assert json.dumps(spec.input) == snapshot(messages_input(messages))
    recorded_args = spec.input["messages"][2]["tool_calls"][0]["args"]
    app_args = messages[2].tool_calls[0]["args"]  # type: ignore[attr-defined]
    assert recorded_args == app_args and recorded_args is not app_args


@pytest.mark.parametrize(
    "message",
    [
        HumanMessage([{"type": "text", "text": "content blocks: the app's list"}]),
        AIMessage("", tool_calls=[{"name": "f", "args": {"nested": {"a": 1}}, "id": "c"}]),
        AIMessage("", tool_calls=[{"name": "f", "args": {"x": math.nan}, "id": "c"}]),
        AIMessage("", tool_calls=[{"name": "f", "args": {"x": [1, 2]}, "id": "c"}]),
        HumanMessage("lone \ud800 surrogate"),
    ],
)
def test_anything_else_takes_the_full_pass(message: BaseMessage) -> None:
    messages = [SystemMessage("s"), message]
    spec = llm_spec(STEP, messages, "fake-model", gated=False)
    assert not spec.owned
    assert spec.input == messages_input(messages)


def test_an_odd_model_name_or_prompt_takes_the_full_pass() -> None:
    assert not llm_spec(STEP, [HumanMessage("hi")], Model.GPT, gated=False).owned
    assert llm_spec(STEP, ["a prompt"], "m", gated=False, prompts=True).owned
    assert not llm_spec(STEP, ["lone \udc00"], "m", gated=False, prompts=True).owned


def test_tool_input_a_flat_dict_is_copied_a_nested_one_is_not() -> None:
    flat = {"query": "q", "limit": 3}
    copied, owned = tool_input_owned(flat)
    assert owned and copied == flat and copied is not flat
    nested = {"filter": {"a": 1}}
    same, owned = tool_input_owned(nested)
    assert not owned and same is nested
    assert tool_input_owned("text") == ("text", True)
    assert tool_input_owned({1: "an int key"})[1] is False
    assert tool_input_owned({"k\ud800": "a lone surrogate key"})[1] is False
    assert tool_spec("t", flat, "i", gated=False).owned


def test_replies_and_usage() -> None:
    usage = {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}
    chat = LLMResult(generations=[[ChatGeneration(message=AIMessage("hi", usage_metadata=usage))]])
    reply, used = llm_result_json(chat), llm_result_usage(chat)
    assert (
        claim_reply(reply)
        and claim_usage(used)
        and used == {"inputTokens": 5, "outputTokens": 3, "totalTokens": 8}
    )
    text = LLMResult(generations=[[Generation(text="a"), Generation(text="b")]])
    assert claim_reply(llm_result_json(text)) and llm_result_json(text) == ["a", "b"]
    blocks = LLMResult(generations=[[ChatGeneration(message=AIMessage([{"type": "text", "text": "x"}]))]])
    assert not claim_reply(llm_result_json(blocks))
    assert not claim_usage({"inputTokens": math.nan})


def test_recorded_events_are_the_same_json_owned_or_not(hub: FakeHub, client: graphmind.Client) -> None:
    handler = GraphmindCallbackHandler(client)
    model = FakeMessagesListChatModel(responses=[AIMessage("ok"), AIMessage([{"type": "text", "text": "x"}])])
    plain, odd = plain_history(), [HumanMessage([{"type": "text", "text": "blocks"}])]
    model.invoke(plain, config={"callbacks": [handler]})
    model.invoke(odd, config={"callbacks": [handler]})

    @tool
    def search(query: str, limit: int) -> str:
        """Search."""
        return query

    search.invoke({"query": "q", "limit": 2}, config={"callbacks": [handler]})
    hub.wait_event(lambda e: e["type"] == "node.finished" and len(hub.of_type("node.finished")) == 3)
    started = hub.of_type("node.started")
    assert [s["input"] for s in started] == [
        json.loads(snapshot(messages_input(plain))),
        json.loads(snapshot(messages_input(odd))),
        {"query": "q", "limit": 2},
    ]
    finished = hub.of_type("node.finished")
    assert [f["output"] for f in finished] == [
        {"content": "ok"},
        {"content": [{"type": "text", "text": "x"}]},
        "q",
    ]
