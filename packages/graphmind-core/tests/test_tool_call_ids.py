"""Tool node identity = the tool call id, automatically (issue 16 item 6; docs/protocol.md,
"Tool node identity"): a gated tool called after a model step that asked for it takes that call's id."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import graphmind
from graphmind.adapter import NodeSpec, engine_for
from graphmind.testing import FakeHub


def _reply(*calls: tuple[str, str]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": i, "name": n, "arguments": "{}"} for n, i in calls],
    }


def step(client: graphmind.Client, reply: Any) -> Any:
    """One model step, the way the model adapters mark theirs."""
    spec = NodeSpec("step", "llm", {"messages": []}, node_id="llm:step", tool_calls_in_output=True)
    return engine_for(client).execute(spec, lambda: reply)


def tool_ids(hub: FakeHub, name: str, count: int) -> list[str]:
    node_id = f"tool:{name}"
    hub.wait_for(
        lambda: len([e for e in hub.of_type("node.finished") if e["nodeId"] == node_id]) >= count,
        what=f"{count} finished {node_id}",
    )
    return [e["instanceId"] for e in hub.of_type("node.started") if e["nodeId"] == node_id]


def test_tools_take_the_ids_of_the_step_that_asked_for_them_by_name_in_order(
    hub: FakeHub, client: graphmind.Client
) -> None:
    search = client.wrap(lambda q: q, name="search")
    read = client.wrap(lambda q: q, name="read")
    with client.run("agent"):
        step(client, _reply(("search", "call_s1"), ("read", "call_r1"), ("search", "call_s2")))
        search("a")
        read("b")
        search("c")
        search("d")  # nothing left for it: a fresh id
    ids = tool_ids(hub, "search", 3)
    assert ids[:2] == ["call_s1", "call_s2"] and ids[2] not in ("call_s1", "call_s2")
    assert tool_ids(hub, "read", 1) == ["call_r1"]


def test_an_explicit_tool_call_id_wins_and_takes_its_entry_out(
    hub: FakeHub, client: graphmind.Client
) -> None:
    search = client.wrap(lambda q: q, name="search")
    with client.run("agent"):
        step(client, _reply(("search", "call_1"), ("search", "call_2")))
        with client.tool_call("call_2"):
            search("second first")
        search("then the first")
        with client.tool_call("mine"):
            search("an id the model did not give")
    assert tool_ids(hub, "search", 3) == ["call_2", "call_1", "mine"]


def test_an_entry_not_taken_by_the_end_of_the_next_model_step_is_dropped(
    hub: FakeHub, client: graphmind.Client
) -> None:
    search = client.wrap(lambda q: q, name="search")
    with client.run("agent"):
        step(client, _reply(("search", "call_old")))
        step(client, {"role": "assistant", "content": "no tools this time"})
        search("late")
        step(client, _reply(("search", "call_new")))
        search("now")
    ids = tool_ids(hub, "search", 2)
    assert ids[0] != "call_old" and ids[1] == "call_new"


def test_a_failed_step_drops_the_previous_steps_calls(hub: FakeHub, client: graphmind.Client) -> None:
    search = client.wrap(lambda q: q, name="search")
    spec = NodeSpec("step", "llm", None, node_id="llm:step", tool_calls_in_output=True)

    def boom() -> None:
        raise RuntimeError("model down")

    with client.run("agent"):
        step(client, _reply(("search", "call_1")))
        with pytest.raises(RuntimeError):
            engine_for(client).execute(spec, boom)
        search("x")
    assert tool_ids(hub, "search", 1) != ["call_1"]


def test_the_queue_is_per_run(hub: FakeHub, client: graphmind.Client) -> None:
    search = client.wrap(lambda q: q, name="search")
    with client.run("a"):
        step(client, _reply(("search", "call_a")))
    with client.run("b"):
        search("not run a's")
    assert tool_ids(hub, "search", 1) != ["call_a"]


def test_the_adapter_api_takes_pairs_or_mappings(hub: FakeHub, client: graphmind.Client) -> None:
    engine = engine_for(client)
    search = client.wrap(lambda q: q, name="search")
    with client.run("agent"):
        engine.expect_tool_calls([("search", "call_p"), {"name": "search", "id": "call_m"}, "junk", ("x",)])
        search("1")
        search("2")
    assert tool_ids(hub, "search", 2) == ["call_p", "call_m"]


async def test_outside_any_run_the_tasks_an_agent_starts_share_its_queue(
    hub: FakeHub, client: graphmind.Client
) -> None:
    @client.tool
    async def search(q: str) -> str:
        await asyncio.sleep(0)
        return q

    async def agent() -> None:
        step(client, _reply(("search", "call_1"), ("search", "call_2")))
        await asyncio.gather(search(q="a"), search(q="b"))

    async def other_request() -> None:
        await asyncio.sleep(0)
        await search(q="unrelated")  # another task's calls: not this agent's ids

    await asyncio.gather(agent(), other_request())
    ids = tool_ids(hub, "search", 3)
    assert sorted(i for i in ids if i.startswith("call_")) == ["call_1", "call_2"]
    unrelated = next(e for e in hub.of_type("node.started") if e["input"] == {"q": "unrelated"})
    assert not unrelated["instanceId"].startswith("call_")


def test_a_sub_agent_inside_a_tool_neither_takes_nor_drops_the_outer_agents_ids(
    hub: FakeHub, client: graphmind.Client
) -> None:
    # The outer step asks for delegate and search; delegate runs a sub-agent whose step asks for a
    # search it never runs (and then a step that asks for nothing). The outer search still takes
    # the outer step's id: the queue is per parent, and the sub-agent's steps are delegate's children.
    search = client.wrap(lambda q: q, name="search")

    def delegate_body(task: str) -> str:
        step(client, _reply(("search", "call_inner")))
        step(client, _reply())
        return task

    delegate = client.wrap(delegate_body, name="delegate")
    with client.run("agent"):
        step(client, _reply(("delegate", "call_d"), ("search", "call_outer")))
        delegate("find")
        search("x")
    assert tool_ids(hub, "delegate", 1) == ["call_d"]
    assert tool_ids(hub, "search", 1) == ["call_outer"]
