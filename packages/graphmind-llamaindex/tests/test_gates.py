"""gate_tools / gate_llm against graphmind.testing.FakeHub: shape, undo, inject, retry, abort, streams."""

from __future__ import annotations

import pytest
from li_fixtures import make_asearch, make_search, of
from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from llama_index.core.tools import FunctionTool, ToolOutput

import graphmind
from graphmind import RunAborted
from graphmind.testing import FakeHub
from graphmind_llamaindex import gate_llm, gate_tools, ungate_llm, ungate_tools
from graphmind_llamaindex.testing import ScriptedFunctionCallingLLM, tool_call

HI = [ChatMessage(role="user", content="hi")]


# ---- shape, idempotence, undo ------------------------------------------------------------------
def test_gate_tools_returns_the_same_shape_in_place(client: graphmind.Client) -> None:
    a, b = make_search([]), make_search([])
    tools = [a, b]
    assert gate_tools(tools, session=client) is tools
    assert gate_tools(a, session=client) is a
    as_dict = {"a": a}
    assert gate_tools(as_dict, session=client) is as_dict
    as_tuple = (b,)
    assert gate_tools(as_tuple, session=client) is as_tuple
    assert "call" in a.__dict__ and "acall" in a.__dict__


def test_gating_twice_wraps_once_and_ungate_restores_the_very_methods(client: graphmind.Client) -> None:
    search = make_search([])
    llm = ScriptedFunctionCallingLLM(["a"])
    before_tool, before_llm = dict(search.__dict__), dict(llm.__dict__)
    gate_tools(search, session=client)
    gate_llm(llm, session=client)
    first_tool, first_llm = search.__dict__["acall"], llm.__dict__["achat"]
    gate_tools(search, session=client)
    gate_llm(llm, session=client)
    assert search.__dict__["acall"] is first_tool and llm.__dict__["achat"] is first_llm
    ungate_tools(search)
    ungate_llm(llm)
    assert search.__dict__ == before_tool and llm.__dict__ == before_llm
    assert "call" not in search.__dict__ and "chat" not in llm.__dict__  # the class's own methods again
    ungate_tools(search)  # a second undo does nothing
    ungate_llm(llm)


def test_bad_arguments_get_a_clear_error(client: graphmind.Client) -> None:
    with pytest.raises(TypeError, match=r"FunctionTool\.from_defaults"):
        gate_tools([lambda q: q], session=client)
    with pytest.raises(TypeError, match="LlamaIndex LLM"):
        gate_llm(object(), session=client)


def test_a_disabled_client_patches_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMIND_DISABLED", "1")
    client = graphmind.Client(app="off")
    search, llm = make_search([]), ScriptedFunctionCallingLLM(["a"])
    tools = [search]
    assert gate_tools(tools, session=client) is tools and gate_llm(llm, session=client) is llm
    assert "call" not in search.__dict__ and "chat" not in llm.__dict__


def test_a_gated_llm_still_serialises_like_the_original(client: graphmind.Client) -> None:
    llm = ScriptedFunctionCallingLLM(["a"])
    before = llm.to_dict()
    gate_llm(llm, session=client)
    assert llm.to_dict() == before


# ---- tools -------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["call", "acall on a sync tool", "acall on an async tool"])
async def test_before_inject_skips_the_tool_body(hub: FakeHub, client: graphmind.Client, kind: str) -> None:
    calls: list[str] = []
    search = make_asearch(calls) if kind == "acall on an async tool" else make_search(calls)
    gate_tools(search, session=client)
    hub.set_debug(breakpoints=[("tool:search", "before")])
    hub.auto_answer("inject", "injected")
    result = search.call(query="x") if kind == "call" else await search.acall(query="x")
    assert isinstance(result, ToolOutput) and result.content == "injected" and result.tool_name == "search"
    assert calls == []
    finished = hub.wait_event(lambda e: e["type"] == "node.finished")
    assert finished["injected"] is True and len(of(hub, "node.started")) == 1


async def test_after_inject_replaces_the_result_with_the_frameworks_fields(
    hub: FakeHub, client: graphmind.Client
) -> None:
    calls: list[str] = []
    search = gate_tools(make_search(calls), session=client)
    hub.set_debug(breakpoints=[("tool:search", "after")])
    hub.auto_answer("inject", {"content": "replaced", "is_error": True})
    result = await search.acall(query="x")
    assert (result.content, result.is_error) == ("replaced", True) and calls == ["x"]
    assert hub.next_paused()["output"] == {"content": "results for x"}


@pytest.mark.parametrize("path", ["sync", "async"])
async def test_error_retry_runs_the_tool_again(hub: FakeHub, client: graphmind.Client, path: str) -> None:
    attempts: list[str] = []

    def flaky(query: str) -> str:
        """Fails the first time."""
        attempts.append(query)
        if len(attempts) == 1:
            raise RuntimeError("upstream timeout")
        return "ok"

    tool = gate_tools(FunctionTool.from_defaults(flaky), session=client)
    hub.set_debug(pause_on_error="on")
    hub.auto_answer("retry")
    result = tool.call(query="x") if path == "sync" else await tool.acall(query="x")
    assert result.content == "ok" and attempts == ["x", "x"]


async def test_abort_at_a_tool_raises_run_aborted_and_the_body_never_runs(
    hub: FakeHub, client: graphmind.Client
) -> None:
    calls: list[str] = []
    search = gate_tools(make_search(calls), session=client)
    hub.set_debug(breakpoints=[("tool:search", "before")])
    hub.auto_answer("abort")
    with pytest.raises(RunAborted):
        await search.acall(query="x")
    assert calls == []


# ---- the LLM -----------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["chat", "achat"])
async def test_an_injected_reply_with_a_tool_call_is_a_chat_response_the_llm_reads(
    hub: FakeHub, client: graphmind.Client, method: str
) -> None:
    llm = gate_llm(ScriptedFunctionCallingLLM(["never"]), session=client)
    hub.set_debug(breakpoints=[("llm:step", "before")])
    hub.auto_answer(
        "inject",
        {"content": "", "tool_calls": [{"id": "call_9", "name": "lookup", "arguments": {"order": "A42"}}]},
    )
    response = llm.chat(HI) if method == "chat" else await llm.achat(HI)
    assert isinstance(response, ChatResponse) and llm.calls == []
    selection = llm.get_tool_calls_from_response(response)[0]
    assert (selection.tool_id, selection.tool_name, selection.tool_kwargs) == (
        "call_9",
        "lookup",
        {"order": "A42"},
    )


async def test_an_injected_reply_in_llamaindexs_own_form_is_taken_as_is(
    hub: FakeHub, client: graphmind.Client
) -> None:
    llm = gate_llm(ScriptedFunctionCallingLLM(["never"]), session=client)
    hub.set_debug(breakpoints=[("llm:step", "before")])
    hub.auto_answer("inject", {"message": {"role": "assistant", "content": "own form"}, "raw": {"id": "r1"}})
    response = await llm.achat(HI)
    assert response.message.content == "own form" and response.raw == {"id": "r1"}


async def test_a_reply_that_does_not_fit_holds_the_gate_again(hub: FakeHub, client: graphmind.Client) -> None:
    llm = gate_llm(ScriptedFunctionCallingLLM(["never"]), session=client)
    hub.set_debug(breakpoints=[("llm:step", "before")])
    answers = iter([("inject", {"content": 42}), ("inject", "fine")])
    hub.auto_answer(lambda paused: next(answers))
    response = await llm.achat(HI)
    assert response.message.content == "fine" and len(of(hub, "exec.paused")) == 2


@pytest.mark.parametrize("path", ["sync", "async"])
async def test_error_retry_calls_the_llm_again(hub: FakeHub, client: graphmind.Client, path: str) -> None:
    llm = gate_llm(ScriptedFunctionCallingLLM([RuntimeError("rate limited"), "second time"]), session=client)
    hub.set_debug(pause_on_error="on")
    hub.auto_answer("retry")
    response = llm.chat(HI) if path == "sync" else await llm.achat(HI)
    assert response.message.content == "second time" and len(llm.calls) == 2


async def test_a_gated_stream_sends_tokens_and_usage(hub: FakeHub, client: graphmind.Client) -> None:
    llm = gate_llm(
        ScriptedFunctionCallingLLM(
            ["Hello there, world"], usage={"prompt_tokens": 5, "completion_tokens": 3}
        ),
        session=client,
    )
    chunks = [c async for c in await llm.astream_chat(HI)]
    assert chunks[-1].message.content == "Hello there, world"
    finished = hub.wait_event(lambda e: e["type"] == "node.finished")
    assert finished["output"] == {"content": "Hello there, world"}
    assert finished["usage"] == {"inputTokens": 5, "outputTokens": 3, "totalTokens": 8}
    hub.wait_for(
        lambda: "".join(d["v"] for t in of(hub, "node.token") for d in t["deltas"]) == "Hello there, world"
    )


@pytest.mark.parametrize("path", ["sync", "async"])
async def test_before_inject_on_a_stream_yields_one_injected_chunk(
    hub: FakeHub, client: graphmind.Client, path: str
) -> None:
    llm = gate_llm(ScriptedFunctionCallingLLM(["never"]), session=client)
    hub.set_debug(breakpoints=[("llm:step", "before")])
    hub.auto_answer("inject", {"content": None, "tool_calls": [tool_call("search", "call_s", query="q")]})
    chunks = list(llm.stream_chat(HI)) if path == "sync" else [c async for c in await llm.astream_chat(HI)]
    assert len(chunks) == 1 and llm.calls == []
    assert llm.get_tool_calls_from_response(chunks[0])[0].tool_id == "call_s"


async def test_after_inject_replaces_a_buffered_stream(hub: FakeHub, client: graphmind.Client) -> None:
    llm = gate_llm(ScriptedFunctionCallingLLM(["the real reply"]), session=client)
    hub.set_debug(breakpoints=[("llm:step", "after")])
    hub.auto_answer("inject", "a person's reply")
    chunks = [c async for c in await llm.astream_chat(HI)]
    # streamed as LlamaIndex streams a reply: deltas that join to it, the last chunk the whole reply
    assert len(chunks) > 1 and "".join(c.delta or "" for c in chunks) == "a person's reply"
    assert chunks[-1].message.content == "a person's reply"
    assert hub.next_paused()["output"] == {"content": "the real reply"}


async def test_abort_at_the_llm_raises_and_later_calls_of_the_run_raise_at_once(
    hub: FakeHub, client: graphmind.Client
) -> None:
    llm = gate_llm(ScriptedFunctionCallingLLM(["a", "b"]), session=client)
    search = gate_tools(make_search([]), session=client)
    hub.set_debug(breakpoints=[("llm:step", "before")])
    hub.auto_answer("abort")
    with client.run("agent"):
        with pytest.raises(RunAborted):
            await llm.achat(HI)
        with pytest.raises(RunAborted):
            await search.acall(query="x")
    assert llm.calls == []
