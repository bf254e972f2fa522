"""The real HTTP path: Pydantic AI's `OpenAIChatModel` pointed at graphmind_openai.testing's loopback
fake (the OpenAI wire format, no network), with a tool that counts its calls."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pa_helpers import Search, tool_agent
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai.testing import FakeOpenAI
from graphmind_pydantic_ai import instrument_pydantic_ai
from graphmind_pydantic_ai.testing import ScriptedModel


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(chunks=4) as provider:
        yield provider


def openai_agent(fake: FakeOpenAI, search: Search) -> Agent[None, str]:
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=fake.base_url, api_key="test"))
    agent = tool_agent(search, ScriptedModel(["unused"]))
    agent.model = model
    return agent


@pytest.mark.parametrize("stream", [False, True], ids=["run", "run_stream"])
async def test_a_tool_calling_run_over_http_is_two_steps_and_a_tool(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI, stream: bool
) -> None:
    fake.script([FakeOpenAI.tool_call("search", {"q": "cats"}, call_id="call_http"), "Cats are found."])
    search = Search()
    agent = instrument_pydantic_ai(openai_agent(fake, search), session=gm)
    if stream:
        async with agent.run_stream("find cats") as result:
            output = await result.get_output()
    else:
        output = (await agent.run("find cats")).output
    assert output == "Cats are found." and search.seen == ["cats"] and fake.request_count == 2
    fakehub.wait_for(lambda: bool(fakehub.of_type("run.finished")), what="the run's end")
    started = [(e["nodeId"], e["instanceId"]) for e in fakehub.of_type("node.started")]
    assert [n for n, _ in started] == ["llm:step", "tool:search", "llm:step"]
    assert started[1][1] == "call_http", "the tool node takes the model's tool-call id"
    steps = [e for e in fakehub.of_type("node.finished") if e["nodeId"] == "llm:step"]
    assert steps[0]["output"]["tool_calls"][0] == {
        "id": "call_http",
        "name": "search",
        "arguments": {"q": "cats"},
    }
    assert steps[1]["output"]["content"] == "Cats are found." and steps[1]["usage"]["totalTokens"] > 0


async def test_before_inject_over_http_sends_no_request_and_after_retry_sends_it_again(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    fake.script(["first", "second"])
    agent = instrument_pydantic_ai(openai_agent(fake, Search()), session=gm)
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("inject", "from the debugger")
    assert (await agent.run("hi")).output == "from the debugger"
    assert fake.request_count == 0
    fakehub.set_debug(breakpoints=[("llm:step", "after")])
    answers = iter([("retry", None), ("continue", None)])
    fakehub.auto_answer(lambda _paused: next(answers))
    assert (await agent.run("hi")).output == "second"
    assert fake.request_count == 2
