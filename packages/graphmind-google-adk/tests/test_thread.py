"""The run's thread is the ADK session (docs/google-adk.md): every invocation of one session_id is a
turn of one thread."""

from __future__ import annotations

from adk_helpers import USER, ScriptedLlm, agent, message, reply_script, runner

import graphmind
from graphmind.testing import FakeHub
from graphmind_google_adk import GraphmindPlugin


async def test_each_invocation_of_a_session_names_it_as_its_thread(
    gm: graphmind.Client, fakehub: FakeHub
) -> None:
    r = runner(agent(ScriptedLlm(script=reply_script("hi"))), plugins=[GraphmindPlugin(gm)])
    for session in ("chat-1", "chat-1", "chat-2"):
        [e async for e in r.run_async(user_id=USER, session_id=session, new_message=message("hello"))]
    fakehub.wait_for(lambda: len(fakehub.of_type("run.started")) >= 3)
    assert [e.get("thread") for e in fakehub.of_type("run.started")] == ["chat-1", "chat-1", "chat-2"]
