"""A recorded run with secrets nested in tool args, model inputs and headers, for the export tests."""

from __future__ import annotations

from typing import Any

from graphmind_server.testing import FakeApp

SECRET_VALUES = ("sk-live-123", "Bearer abc", "hunter2", "ghp_tok", "sess=1", "pk-9", "refresh-7")


def record_agent_run(app: FakeApp, run_id: str) -> None:
    """One run: an LLM step (model, usage, headers), a tool call nested under it, a held gate, an error."""
    app.event(
        "run.started",
        run_id,
        name="trip",
        app=app.app,
        nodeId="agent:trip",
        instanceId=run_id,
        kind="agent",
        meta={"user": "ana", "api_key": "sk-live-123"},
        implicit=False,
    )
    _started(
        app,
        run_id,
        "llm:step",
        f"{run_id}:s1",
        parentInstanceId=run_id,
        attrs={"model": "gpt-test"},
        input={
            "model": "gpt-test",
            "messages": [{"role": "user", "content": "weather in Lisbon?"}],
            "extra_headers": {"Authorization": "Bearer abc", "X-Trace": "t1"},
            "client": {"config": {"nested": {"Password": "hunter2"}}},
        },
    )
    app.node_finished(
        run_id,
        "llm:step",
        f"{run_id}:s1",
        output={"tool_calls": [{"name": "weather"}]},
        usage={"inputTokens": 12, "outputTokens": 5, "totalTokens": 17},
    )
    _started(
        app,
        run_id,
        "tool:weather",
        "call-1",
        parentInstanceId=f"{run_id}:s1",
        input={
            "city": "Lisbon",
            "auth": {"access_token": "ghp_tok", "token": "__REDACTED__"},
            "headers": [["Cookie", "sess=1"], ["Accept", "json"]],
        },
    )
    paused = app.hold(run_id, "tool:weather", "call-1", gate="before", reason="breakpoint")
    app.resume(paused, "continue")
    app.event(
        "node.finished",
        run_id,
        nodeId="tool:weather",
        instanceId="call-1",
        output={"temp": 21, "private_key": "pk-9"},
        durationMs=5.0,
        heldMs=3.5,
    )
    _started(
        app,
        run_id,
        "tool:book",
        "call-2",
        parentInstanceId=run_id,
        input={"refresh_token": "refresh-7", "when": "now", "note": "é ünïcode"},
    )
    app.event(
        "node.error",
        run_id,
        nodeId="tool:book",
        instanceId="call-2",
        error={"name": "ValueError", "message": "no seats", "stack": "..."},
        durationMs=2.0,
        heldMs=0.0,
    )
    app.run_finished(run_id, "error", error={"name": "ValueError", "message": "no seats"})


def _started(
    app: FakeApp,
    run_id: str,
    node_id: str,
    instance_id: str,
    *,
    parentInstanceId: str,
    input: Any,
    **fields: Any,
) -> None:
    kind, _, name = node_id.partition(":")
    app.event(
        "node.started",
        run_id,
        nodeId=node_id,
        instanceId=instance_id,
        kind=kind,
        name=name,
        parentInstanceId=parentInstanceId,
        input=input,
        **fields,
    )


def contains_secret(text: str) -> list[str]:
    return [s for s in SECRET_VALUES if s in text]


def lines_of(text: str) -> list[dict[str, Any]]:
    import json

    return [json.loads(line) for line in text.splitlines() if line.strip()]
