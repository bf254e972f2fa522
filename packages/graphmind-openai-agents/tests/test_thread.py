"""The run's thread is the SDK's own conversation id (docs/openai-agents.md): `RunConfig.group_id`,
else the Session's `session_id`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from agents import Agent, RunConfig, Runner, SQLiteSession
from agents_helpers import PROMPT, model_for

import graphmind
from graphmind.testing import FakeHub
from graphmind_openai.testing import FakeOpenAI
from graphmind_openai_agents import instrument_openai_agents


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(default_reply="ok") as provider:
        yield provider


async def test_group_id_then_session_id_name_the_thread(
    gm: graphmind.Client, fakehub: FakeHub, fake: FakeOpenAI
) -> None:
    instrument_openai_agents(session=gm)
    agent = Agent(name="chat", model=model_for(fake))
    await Runner.run(agent, PROMPT, run_config=RunConfig(group_id="conv-42"))
    await Runner.run(agent, PROMPT, session=SQLiteSession("user-7"))
    await Runner.run(agent, PROMPT, run_config=RunConfig(group_id="conv-42"), session=SQLiteSession("s"))
    await Runner.run(agent, PROMPT)
    fakehub.wait_for(lambda: len([e for e in fakehub.of_type("run.started") if e.get("name") == "chat"]) == 4)
    threads = [e.get("thread") for e in fakehub.of_type("run.started") if e.get("name") == "chat"]
    assert threads == ["conv-42", "user-7", "conv-42", None]
