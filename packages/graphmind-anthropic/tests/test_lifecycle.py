"""instrument / uninstrument, derived clients, a shared httpx2 client, the kill switch, step identity, hints."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from anthropic import Anthropic
from anthropic_shapes import MESSAGES, MODEL, TOOLS, new_client

import graphmind
from graphmind.testing import FakeHub
from graphmind_anthropic import instrument_anthropic, uninstrument_anthropic
from graphmind_anthropic.testing import FakeAnthropic


def _steps(hub: FakeHub) -> list[dict[str, Any]]:
    return [e for e in hub.events if e["type"] == "node.started" and e["nodeId"] == "llm:step"]


def _call(client: Any, messages: list[Any] = MESSAGES, **kw: Any) -> Any:
    return client.messages.create(model=MODEL, max_tokens=64, messages=messages, **kw)


def _settle(gm: graphmind.Client, hub: FakeHub) -> None:
    """Every event emitted so far has reached the hub (a marker span, then wait for it)."""
    with gm.span("marker", kind="custom"):
        pass
    hub.wait_event(lambda e: e["type"] == "node.finished" and e["nodeId"] == "custom:marker")


def _hooked(client: Any) -> dict[str, Any]:
    """Every attribute a hook sets, as the client has it now (the very objects)."""
    http = client._client
    return {
        "messages._post": vars(client.messages).get("_post"),
        "beta.messages._post": vars(client.beta.messages).get("_post"),
        "tool_runner": vars(client.beta.messages).get("tool_runner"),
        "copy": vars(client).get("copy"),
        "with_options": vars(client).get("with_options"),
        "with_middleware": vars(client).get("with_middleware"),
        "send": vars(http).get("send"),
        "http": sorted(vars(http)),
    }


def test_instrumenting_twice_is_harmless(fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub) -> None:
    client = new_client(fake, False)
    assert instrument_anthropic(client, session=gm) is client
    hooked = _hooked(client)
    assert instrument_anthropic(client, session=gm) is client
    assert _hooked(client) == hooked
    _call(client)
    _settle(gm, fakehub)
    assert len(_steps(fakehub)) == 1


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
async def test_uninstrument_restores_the_very_original_objects(
    fake: FakeAnthropic, gm: graphmind.Client, is_async: bool
) -> None:
    client = new_client(fake, is_async)
    before = _hooked(client)
    post = client.messages._post
    instrument_anthropic(client, session=gm)
    assert client.messages._post is not post
    assert uninstrument_anthropic(client) is client
    assert _hooked(client) == before
    assert client.messages._post is post
    assert uninstrument_anthropic(client) is client  # a second undo is harmless


def test_an_uninstrumented_client_records_nothing(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    client = instrument_anthropic(new_client(fake, False), session=gm)
    uninstrument_anthropic(client)
    _call(client)
    _settle(gm, fakehub)
    assert _steps(fakehub) == []


def test_another_client_is_untouched(fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub) -> None:
    instrument_anthropic(new_client(fake, False), session=gm)
    other = new_client(fake, False)
    assert vars(other.messages)["_post"] == other.post
    _call(other)
    _settle(gm, fakehub)
    assert _steps(fakehub) == []


def test_clients_derived_with_with_options_and_copy_are_instrumented(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    client = instrument_anthropic(new_client(fake, False), session=gm)
    _call(client.with_options(timeout=5))
    _call(client.copy(max_retries=1))
    _call(client.with_options(timeout=5).with_options(max_retries=0))
    _settle(gm, fakehub)
    assert len(_steps(fakehub)) == 3


def test_a_shared_httpx_client_keeps_working_for_a_copy_after_the_parent_is_uninstrumented(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    client = instrument_anthropic(new_client(fake, False), session=gm)
    http = client._client
    original_send = type(http).send
    derived = client.with_options(timeout=5)
    assert derived._client is http  # the SDK shares it
    uninstrument_anthropic(client)
    fakehub.set_debug(breakpoints=[("llm:step", "before")])
    fakehub.auto_answer("inject", "still injected")
    assert _call(derived).content[0].text == "still injected"
    assert fake.request_count == 0
    uninstrument_anthropic(derived)
    assert "send" not in vars(http) and http.send.__func__ is original_send


def test_disabled_patches_nothing_and_starts_no_thread(fake: FakeAnthropic) -> None:
    session = graphmind.Client(app="off", environ={"GRAPHMIND_DISABLED": "1"})
    client = new_client(fake, False)
    before = _hooked(client)
    assert instrument_anthropic(client, session=session) is client
    assert _hooked(client) == before
    assert _call(client).content[0].text == "ok"
    # The fake provider's own handler threads aside, no GraphMind thread (transport, tokens) runs.
    assert [
        t.name
        for t in threading.enumerate()
        if t.name in ("graphmind-transport", "graphmind-tokens", "graphmind-reader")
    ] == []
    session.dispose()


def test_the_kill_switch_environment_variable_patches_nothing(
    fake: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHMIND_DISABLED", "1")
    monkeypatch.setattr(graphmind, "_default", None)
    client = new_client(fake, False)
    before = _hooked(client)
    assert instrument_anthropic(client) is client
    assert _hooked(client) == before
    graphmind.dispose()


def test_a_wrong_object_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match=r"anthropic\.Anthropic or anthropic\.AsyncAnthropic"):
        instrument_anthropic(object())


def test_steps_of_one_conversation_share_an_invocation_and_tools_are_hinted_once(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    client = instrument_anthropic(new_client(fake, False), session=gm)
    fake.script([FakeAnthropic.tool_use("search_flights", {"to": "CAI"}), "Done."])
    with gm.run("trip"):
        first = _call(client, tools=TOOLS)
        conversation = [*MESSAGES, {"role": "assistant", "content": first.content}]
        conversation.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": first.content[0].id, "content": "09:40"}],
            }
        )
        _call(client, conversation, tools=TOOLS)
    _settle(gm, fakehub)
    steps = _steps(fakehub)
    assert [s["instanceId"].rsplit(":", 1)[1] for s in steps] == ["s1", "s2"]
    assert steps[0]["instanceId"].rsplit(":", 1)[0] == steps[1]["instanceId"].rsplit(":", 1)[0]
    hints = fakehub.of_type("graph.hint")
    assert [h["nodes"] for h in hints] == [
        [{"nodeId": "tool:search_flights", "kind": "tool", "name": "search_flights"}]
    ]
    second = steps[1]["input"]["messages"]
    assert second[1]["content"][0] == {
        "type": "tool_use",
        "id": first.content[0].id,
        "name": "search_flights",
        "input": {"to": "CAI"},
    }
    assert second[2]["content"][0]["tool_use_id"] == first.content[0].id


def test_a_client_subclass_is_instrumented(
    fake: FakeAnthropic, gm: graphmind.Client, fakehub: FakeHub
) -> None:
    class MyAnthropic(Anthropic):
        pass

    client = instrument_anthropic(MyAnthropic(base_url=fake.base_url, api_key="k", max_retries=0), session=gm)
    _call(client)
    _settle(gm, fakehub)
    assert len(_steps(fakehub)) == 1
