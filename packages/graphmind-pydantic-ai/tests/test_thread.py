"""The run's thread is Pydantic AI's conversation (docs/pydantic-ai.md): a run given the message
history of an earlier run is a turn of that run's thread; a fresh run starts a thread of its own."""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent

import graphmind
from graphmind.testing import FakeHub
from graphmind_pydantic_ai import GraphmindCapability
from graphmind_pydantic_ai._capability import _thread
from graphmind_pydantic_ai.testing import ScriptedModel


def test_message_history_from_a_run_continues_its_thread(gm: graphmind.Client, fakehub: FakeHub) -> None:
    agent: Agent[None, str] = Agent(
        ScriptedModel(["one", "two", "three", "other"]).model,
        name="chat",
        capabilities=[GraphmindCapability(session=gm)],
    )
    first = agent.run_sync("hi")
    second = agent.run_sync("and then?", message_history=first.all_messages())
    agent.run_sync("more", message_history=second.all_messages())
    agent.run_sync("a new conversation")
    fakehub.wait_for(lambda: len(fakehub.of_type("run.finished")) == 4, what="four runs")
    threads = [e.get("thread") for e in fakehub.of_type("run.started")]
    assert threads[0] and threads[0] == threads[1] == threads[2] and threads[3] not in (None, threads[0])


class _OldContext:
    """A RunContext of a Pydantic AI release without `conversation_id`."""

    def __init__(self, messages: list[Any], run_id: str) -> None:
        self.messages = messages
        self.run_id = run_id


class _Message:
    def __init__(self, run_id: str) -> None:
        self.run_id = run_id


def test_without_conversation_id_the_first_message_s_run_names_the_thread() -> None:
    assert _thread(_OldContext([_Message("run-a"), _Message("run-b")], "run-c")) == "run-a"  # type: ignore[arg-type]
    assert _thread(_OldContext([], "run-c")) == "run-c"  # type: ignore[arg-type]
