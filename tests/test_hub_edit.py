"""Issue 30 acceptance against the real hub process: edit a held call's input, retry with an
edited input, reload a tool's code and retry, and the refusals the API and the card show."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import graphmind
from graphmind_server.testing import HubProcess, in_thread, wait_for


@pytest.fixture
def client(hub: HubProcess) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="edit-e2e", url=hub.ingest_url)
    assert c.ready(5)
    yield c
    c.dispose()


def _break(hub: HubProcess, node_id: str, gate: str) -> None:
    status, state = hub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": node_id, "gate": gate}]})
    assert status == 200 and "pending" not in state


def _answer(hub: HubProcess, gate: dict[str, Any], body: dict[str, Any]) -> tuple[int, Any]:
    return hub.api("POST", f"/api/gates/{gate['gateId']}", body)


def _held_again(hub: HubProcess, old: dict[str, Any]) -> dict[str, Any]:
    return wait_for(
        lambda: next(
            (g for g in hub.api("GET", "/api/gates")[1]["gates"] if g["gateId"] != old["gateId"]), None
        ),
        10,
        "the gate held again",
    )


def _events(hub: HubProcess, run_id: str, event_type: str) -> list[dict[str, Any]]:
    def found() -> list[dict[str, Any]] | None:
        events = hub.api("GET", f"/api/runs/{run_id}/events")[1]["events"]
        return [e for e in events if e["type"] == event_type] or None

    return wait_for(found, 10, f"{event_type} of run {run_id}")


def test_a_tool_held_before_runs_with_the_edited_arguments(hub: HubProcess, client: graphmind.Client) -> None:
    _break(hub, "tool:book", "before")
    received: list[tuple[str, int]] = []

    @client.tool
    def book(city: str, nights: int = 1) -> str:
        received.append((city, nights))
        return f"{city} x{nights}"

    runs: list[str] = []

    def agent() -> str:
        with client.run("trip") as run:
            runs.append(run.run_id)
            return book("Lisbon")

    thread, out = in_thread(agent)
    gate = hub.held_gates()[0]
    assert gate["editable"] is True and gate["attempt"] == 1 and gate["input"] == {"city": "Lisbon"}
    status, body = _answer(hub, gate, {"action": "continue", "input": {"city": "Porto", "nights": 3}})
    assert status == 200, body
    thread.join(10)
    assert out == {"value": "Porto x3"} and received == [("Porto", 3)]
    finished = _events(hub, runs[0], "node.finished")[0]
    assert finished["edited"] is True
    assert finished["originalInput"] == {"city": "Lisbon"}
    assert finished["input"] == {"city": "Porto", "nights": 3}


def test_retry_with_an_edited_input_at_the_error_gate_keeps_both_attempts(
    hub: HubProcess, client: graphmind.Client
) -> None:
    @client.tool
    def convert(amount: str) -> float:
        return float(amount)

    runs: list[str] = []

    def agent() -> float:
        with client.run("money") as run:
            runs.append(run.run_id)
            return convert("12,5")

    thread, out = in_thread(agent)
    gate = hub.held_gates()[0]
    assert gate["gate"] == "error" and gate["editable"] is True
    assert _answer(hub, gate, {"action": "retry", "input": {"amount": "12.5"}})[0] == 200
    thread.join(10)
    assert out == {"value": 12.5}
    attempt = _events(hub, runs[0], "node.attempt")[0]
    assert attempt["attempt"] == 1 and attempt["input"] == {"amount": "12,5"}
    assert attempt["error"]["name"] == "ValueError" and attempt["durationMs"] >= 0
    finished = _events(hub, runs[0], "node.finished")[0]
    assert finished["input"] == {"amount": "12.5"} and finished["originalInput"] == {"amount": "12,5"}


BROKEN = """
def shout(text):
    return text.upper() + missing_suffix
"""
FIXED = """
def shout(text):
    return text.upper() + "!"
"""


@pytest.fixture
def tool_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Any]]:
    name = f"gm_e2e_reload_{id(tmp_path)}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(BROKEN))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield path, importlib.import_module(name)
    sys.modules.pop(name, None)


def test_reload_retries_with_the_fixed_code_and_a_syntax_error_re_holds_with_it(
    hub: HubProcess, client: graphmind.Client, tool_file: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # This hub has no token: it passes a reload only from an app that opted in (docs/security.md).
    monkeypatch.setenv("GRAPHMIND_ALLOW_RELOAD", "1")
    path, module = tool_file
    shout = client.tool(module.shout)
    thread, out = in_thread(lambda: shout("hi"))
    gate = hub.held_gates()[0]
    assert gate["gate"] == "error" and gate["reloadable"] is True and gate["error"]["name"] == "NameError"
    path.write_text("def shout(text)\n    return text\n")
    assert _answer(hub, gate, {"action": "retry", "reload": True})[0] == 200
    again = _held_again(hub, gate)
    assert again["refused"].startswith("reload failed: SyntaxError"), again
    assert again["attempt"] == 1  # nothing ran
    path.write_text(textwrap.dedent(FIXED))
    assert _answer(hub, again, {"action": "retry", "reload": True})[0] == 200
    thread.join(10)
    assert out == {"value": "HI!"}


def test_an_edit_under_hide_inputs_is_not_editable_and_the_api_answers_422(
    hub: HubProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHMIND_HIDE_INPUTS", "1")
    client = graphmind.Client(app="hidden", url=hub.ingest_url)
    try:
        assert client.ready(5)
        _break(hub, "tool:pay", "before")

        @client.tool
        def pay(card: str) -> str:
            return "paid"

        thread, out = in_thread(lambda: pay("4111"))
        gate = hub.held_gates()[0]
        assert gate["editable"] is False and gate["notEditable"] == "input hidden by GRAPHMIND_HIDE_INPUTS"
        status, body = _answer(hub, gate, {"action": "continue", "input": {"card": "5555"}})
        assert (
            status == 422
            and body["error"] == "this gate is not editable: input hidden by GRAPHMIND_HIDE_INPUTS"
        )
        assert hub.api("GET", "/api/gates")[1]["gates"][0]["gateId"] == gate["gateId"]  # still held
        assert _answer(hub, gate, {"action": "continue"})[0] == 200
        thread.join(10)
        assert out == {"value": "paid"}
    finally:
        client.dispose()


def test_the_api_refuses_what_a_gate_cannot_take(hub: HubProcess, client: graphmind.Client) -> None:
    _break(hub, "tool:local", "before")

    @client.tool
    def local(x: int) -> int:
        return x

    thread, out = in_thread(lambda: local(1))
    gate = hub.held_gates()[0]
    assert gate["reloadable"] is False  # a closure: nothing to re-import
    cases = [
        ({"action": "continue", "reload": True}, 422, "reload does not apply here"),
        ({"action": "continue", "reload": "yes"}, 400, '"reload" must be true or false'),
        ({"action": "inject", "value": 1, "input": {"x": 2}}, 422, "an edited input goes with continue"),
        ({"action": "continue", "input": {"x": "__REDACTED__"}}, 422, "still contains '__REDACTED__'"),
    ]
    for body, status, message in cases:
        got, answer = _answer(hub, gate, body)
        assert (got, message in answer["error"]) == (status, True), (body, got, answer)
    assert _answer(hub, gate, {"action": "continue", "input": {"x": 7}})[0] == 200
    thread.join(10)
    assert out == {"value": 7}


def test_a_langchain_tool_held_before_runs_with_the_edited_arguments(
    hub: HubProcess, client: graphmind.Client
) -> None:
    from langchain_core.tools import tool

    from graphmind_langchain import gate_tools

    received: list[str] = []

    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        received.append(city)
        return f"sunny in {city}"

    gate_tools(weather, session=client)
    _break(hub, "tool:weather", "before")
    thread, out = in_thread(lambda: weather.invoke({"city": "Lisbon"}))
    gate = hub.held_gates()[0]
    assert gate["editable"] is True and gate["input"] == {"city": "Lisbon"}
    assert _answer(hub, gate, {"action": "continue", "input": {"city": "Porto"}})[0] == 200
    thread.join(10)
    assert out == {"value": "sunny in Porto"} and received == ["Porto"]
