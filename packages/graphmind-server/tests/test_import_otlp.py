"""`graphmind import FILE` of an OTLP trace file in each form a collector or a backend writes:
told from the content, stored as `/v1/traces` stores it, a second import storing nothing."""

from __future__ import annotations

import base64
import gzip
import json
import sqlite3
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from graphmind_server.cli import main

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


def _request(
    span_id: str, parent: str | None, name: str, attrs: dict[str, str], start: int
) -> dict[str, Any]:
    span: dict[str, Any] = {
        "traceId": TRACE,
        "spanId": span_id,
        "name": name,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1000),
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }
    if parent:
        span["parentSpanId"] = parent
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]},
                "scopeSpans": [{"scope": {"name": "openinference.instrumentation.openai"}, "spans": [span]}],
            }
        ]
    }


LLM = _request(
    "00f067aa0ba902b7",
    "00f067aa0ba902b6",
    "ChatCompletion",
    {
        "openinference.span.kind": "LLM",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "hi",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "hello",
    },
    1_000_000,
)
AGENT = _request("00f067aa0ba902b6", None, "shop", {"openinference.span.kind": "AGENT"}, 0)


def _pb(request: dict[str, Any]) -> bytes:
    """The request as protobuf (proto3 JSON spells the ids in base64, OTLP/JSON in hex)."""

    def ids(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: base64.b64encode(bytes.fromhex(v)).decode() if k.endswith(("traceId", "panId")) else ids(v)
                for k, v in value.items()
            }
        return [ids(v) for v in value] if isinstance(value, list) else value

    return json_format.ParseDict(ids(request), ExportTraceServiceRequest()).SerializeToString()


FORMATS: dict[str, Callable[[], bytes]] = {
    "json lines": lambda: (json.dumps(LLM) + "\n" + json.dumps(AGENT) + "\n").encode(),
    "one document": lambda: json.dumps(
        {"resourceSpans": LLM["resourceSpans"] + AGENT["resourceSpans"]}, indent=2
    ).encode(),
    "a list": lambda: json.dumps([LLM, AGENT]).encode(),
    "gzip": lambda: gzip.compress((json.dumps(LLM) + "\n" + json.dumps(AGENT) + "\n").encode()),
    "protobuf": lambda: _pb({"resourceSpans": LLM["resourceSpans"] + AGENT["resourceSpans"]}),
    "length-prefixed protobuf": lambda: b"".join(
        struct.pack(">I", len(b)) + b for b in (_pb(LLM), _pb(AGENT))
    ),
}


@pytest.mark.parametrize("form", list(FORMATS))
def test_each_form_imports_as_the_run_the_route_would_store(
    form: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, db = tmp_path / "trace.bin", tmp_path / "hub.db"
    path.write_bytes(FORMATS[form]())
    assert main(["import", str(path), "--db", str(db)]) == 0
    err = capsys.readouterr().err
    assert f"1 OTLP trace(s) (otlp-{TRACE})" in err and "replay one with" in err, err
    conn = sqlite3.connect(db)
    [(run_id, client, status)] = conn.execute("SELECT id, client_id, status FROM runs").fetchall()
    assert (run_id, client, status) == (f"otlp-{TRACE}", "otlp", "finished")
    nodes = [json.loads(r[0]) for r in conn.execute("SELECT body FROM events WHERE type = 'node.started'")]
    assert [(n["nodeId"], n["input"]["messages"]) for n in nodes] == [
        ("llm:step", [{"role": "user", "content": "hi"}])
    ]
    conn.close()
    assert main(["import", str(path), "--db", str(db)]) == 0
    assert "0 new event(s)" in capsys.readouterr().err
