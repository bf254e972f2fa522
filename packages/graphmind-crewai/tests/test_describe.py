"""What a node shows never fails the app's call: a tool result pydantic cannot serialize is recorded
as its text (CrewAI's own suite has such a tool: tests/tools/test_base_tool.py)."""

from __future__ import annotations

from typing import Any

from crewai.tools import tool
from pydantic import BaseModel, ConfigDict

import graphmind
from graphmind.testing import FakeHub
from graphmind_crewai import instrument_crewai


class Opaque(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    value: Any


def test_a_tool_result_pydantic_cannot_serialize_reaches_the_app_and_is_recorded_as_text() -> None:
    opaque = Opaque(value=object())

    @tool("opaque")
    def make() -> Opaque:
        """Returns an object pydantic cannot serialize."""
        return opaque

    with FakeHub(pause_on_error="off") as hub:
        session = graphmind.Client(app="describe", url=hub.url)
        assert session.ready(10)
        instrument_crewai(session=session)
        assert make.run() is opaque
        hub.wait_for(lambda: bool(hub.of_type("node.finished")))
        assert hub.of_type("node.finished")[0]["output"] == str(opaque)
        session.dispose()


def test_a_tool_called_with_positional_arguments_runs_with_them() -> None:
    """CrewAI's own suite calls `tool.run("value")`: the node records them, the body gets them."""

    @tool("echo")
    def echo(text: str) -> str:
        """Echoes."""
        return f"echo {text}"

    with FakeHub(pause_on_error="off") as hub:
        session = graphmind.Client(app="describe", url=hub.url)
        assert session.ready(10)
        instrument_crewai(session=session)
        assert echo.run("hi") == "echo hi"
        hub.wait_for(lambda: bool(hub.of_type("node.finished")))
        assert hub.of_type("node.started")[0]["input"] == {"args": ["hi"]}
        session.dispose()
