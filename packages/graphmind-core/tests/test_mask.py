"""`mask=` / GRAPHMIND_MASK: every match in every string an event records becomes __MASKED__, errors
included, before the event is buffered (the four hide switches never cover node.error)."""

from __future__ import annotations

import json
from typing import Any

import pytest

import graphmind
from graphmind._events.mask import MASKED

SECRET = "sk-live-0123456789abcdef"


def _recorded(client: graphmind.Client) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    assert client._transport is not None
    client._transport.enqueue = lambda event, size: events.append(event)  # type: ignore[method-assign]
    return events


def _client(**options: Any) -> graphmind.Client:
    return graphmind.Client(app="mask", url="ws://127.0.0.1:9/ingest", retry_interval=3600, **options)


def test_a_mask_rewrites_inputs_outputs_and_errors_before_buffering() -> None:
    client = _client(mask=[r"sk-live-[0-9a-f]+"])
    events = _recorded(client)

    def charge(key: str, note: dict[str, Any]) -> str:
        raise PermissionError(f"key {key} was revoked")

    tool = client.wrap(charge, name="charge")
    with pytest.raises(PermissionError, match=SECRET), client.run("r", meta={"key": SECRET}):
        tool(SECRET, {"nested": [f"Bearer {SECRET}"], SECRET: 1})
    text = json.dumps(events)
    assert SECRET not in text
    error = next(e for e in events if e["type"] == "node.error")["error"]
    assert error["message"] == f"key {MASKED} was revoked" and SECRET not in error.get("stack", "")
    started = next(e for e in events if e["type"] == "node.started")
    assert started["input"] == {"key": MASKED, "note": {"nested": [f"Bearer {MASKED}"], MASKED: 1}}
    assert started["nodeId"] == "tool:charge"  # protocol fields are never rewritten


def test_graphmind_mask_takes_one_expression_or_a_json_list() -> None:
    one = graphmind.Client(app="m", environ={"GRAPHMIND_MASK": r"\d{4}-\d{4}"}, url="ws://127.0.0.1:9/ingest")
    many = graphmind.Client(
        app="m", environ={"GRAPHMIND_MASK": '["secret", "\\\\d{3}"]'}, url="ws://127.0.0.1:9/ingest"
    )
    assert one.options.mask is not None and one.options.mask.sub("#", "card 1234-5678") == "card #"
    assert many.options.mask is not None and many.options.mask.sub("#", "a secret 123") == "a # #"


@pytest.mark.parametrize("value", ["(unclosed", [""], [1], 42])
def test_a_mask_that_cannot_work_warns_loudly_and_hides_everything(
    value: Any, caplog: pytest.LogCaptureFixture
) -> None:
    # Options fail open (issue 16 item 2) without leaking: no crash at start, one warning, and
    # every input and output hidden, since a mask that masks nothing would record what it meant to hide.
    caplog.set_level("WARNING", logger="graphmind")
    client = _client(mask=value)
    from_env = graphmind.Client(app="m", environ={"GRAPHMIND_MASK": "[not json"})
    for c in (client, from_env):
        assert c.options.mask is None
        assert c.redaction_switches.hide_inputs and c.redaction_switches.hide_outputs
    assert "mask" in caplog.text and "GRAPHMIND_MASK" in caplog.text
    assert "every input and output is hidden instead" in caplog.text


def test_no_mask_changes_nothing() -> None:
    client = _client()
    events = _recorded(client)
    client.wrap(lambda key: key, name="echo")(SECRET)
    assert any(e.get("output") == SECRET for e in events)
