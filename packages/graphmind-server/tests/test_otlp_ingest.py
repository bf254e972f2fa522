"""POST /v1/traces on the real hub process: the mapping, arrival order, the round trip from
`graphmind record --format otlp`, and the bounds (every refusal a clear 4xx, the hub stays up)."""

from __future__ import annotations

import gzip
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from graphmind_server.cli import main
from graphmind_server.export.otlp import trace_id
from graphmind_server.export.otlp_http import proto3_json
from graphmind_server.testing import FakeApp, HubProcess, wait_for

TRACE = "5b8efff798038103d269b633813fc60c"


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[HubProcess]:
    with HubProcess(tmp_path / "hub.db") as process:
        yield process
    assert "Traceback" not in process.stderr, process.stderr


def _kv(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": value}}


def span(
    span_id: str, name: str, parent: str | None = None, start: int = 1, end: int = 2, **attrs: Any
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": TRACE,
        "spanId": span_id,
        "name": name,
        "kind": 1,
        "startTimeUnixNano": str(1_767_225_600_000_000_000 + start * 1_000_000),
        "endTimeUnixNano": str(1_767_225_600_000_000_000 + end * 1_000_000),
        "attributes": [_kv(k.replace("__", "."), v) for k, v in attrs.items()],
        "status": {"code": 1},
    }
    if parent:
        out["parentSpanId"] = parent
    return out


def request(*spans: dict[str, Any], service: str = "shop") -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": [_kv("service.name", service)]},
                "scopeSpans": [{"scope": {"name": "hand.built"}, "spans": list(spans)}],
            }
        ]
    }


def protobuf(doc: dict[str, Any]) -> bytes:
    return bytes(json_format.ParseDict(proto3_json(doc), ExportTraceServiceRequest()).SerializeToString())


ROOT = span("a000000000000001", "planner", start=0, end=50, openinference__span__kind="AGENT")
LLM = span(
    "b000000000000002",
    "ChatCompletion",
    "a000000000000001",
    start=1,
    end=10,
    openinference__span__kind="LLM",
    llm__model_name="gpt-test",
    **{
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "fly me to Cairo",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "search",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"to": "CAI"}',
        "llm.token_count.prompt": 7,
        "llm.token_count.completion": 3,
        "llm.token_count.total": 10,
        "llm.cost.total": 0.25,
    },
)
TOOL = span(
    "c000000000000003",
    "search",
    "a000000000000001",
    start=11,
    end=20,
    openinference__span__kind="TOOL",
    tool__name="search",
    input__value='{"to": "CAI"}',
    input__mime_type="application/json",
    output__value="2 flights",
)


def test_spans_in_any_order_make_one_run_parented_by_span_ids(hub, otlp):
    # The tool and the model step land first (spans are exported when they end), the root last.
    assert otlp.post(hub, json.dumps(request(TOOL)).encode(), "application/json")[0] == 200
    run = otlp.only_run(hub, "running")
    assert run["id"] == f"otlp-{TRACE}" and run["clientId"] == "otlp" and run["app"] == "shop"
    assert otlp.post(hub, protobuf(request(LLM)))[0] == 200
    assert otlp.post(hub, protobuf(request(ROOT)), gzipped=True)[0] == 200
    run = otlp.only_run(hub, "finished")
    assert run["name"] == "planner" and run["meta"]["otlp"]["traceId"] == TRACE
    g = otlp.graph(hub, run["id"])
    by_id = {n["nodeId"]: n for n in g["nodes"]}
    assert g["agent"] == "agent:planner" and set(by_id) == {"llm:step", "tool:search"}
    assert by_id["llm:step"]["parent"] == by_id["tool:search"]["parent"] == "agent:planner"
    assert by_id["llm:step"]["input"] == {
        "model": "gpt-test",
        "messages": [{"role": "user", "content": "fly me to Cairo"}],
    }
    assert by_id["llm:step"]["output"] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_1", "name": "search", "arguments": '{"to": "CAI"}'}],
        "model": "gpt-test",
    }
    assert by_id["llm:step"]["usage"] == {"inputTokens": 7, "outputTokens": 3, "totalTokens": 10}
    assert by_id["tool:search"]["input"] == {"to": "CAI"} and by_id["tool:search"]["output"] == "2 flights"
    finished = [e for e in otlp.events(hub, run["id"]) if e["type"] == "node.finished"]
    assert {e["nodeId"]: e.get("cost") for e in finished}["llm:step"] == {"total": 0.25}
    nodes = {n["nodeId"]: n for n in hub.api("GET", f"/api/runs/{run['id']}")[1]["nodes"]}
    assert nodes["agent:planner"]["status"] == nodes["llm:step"]["status"] == "ok"
    # An exporter's retry of a request the hub already took stores nothing twice.
    assert otlp.post(hub, protobuf(request(LLM)))[0] == 200
    assert hub.api("GET", f"/api/runs/{run['id']}")[1]["eventCount"] == 6
    assert otlp.health(hub)["duplicateSpans"] == 1


def test_a_span_whose_parent_never_arrives_still_reads(hub, otlp):
    orphan = span("d000000000000004", "lookup", "e0000000000000ff", openinference__span__kind="RETRIEVER")
    failed = span("d000000000000005", "mystery", "e0000000000000ff", custom__attr="x")
    failed["status"] = {"code": 2, "message": "boom"}
    failed["events"] = [
        {
            "name": "exception",
            "timeUnixNano": "1767225600002000000",
            "attributes": [_kv("exception.type", "KeyError"), _kv("exception.message", "'k'")],
        }
    ]
    # Breakpoints and step mode hold gated apps' calls; an OTLP run has no gate to hold.
    debug = {"breakpoints": [{"nodeId": "custom:mystery", "gate": "error"}], "mode": "step"}
    assert hub.api("PUT", "/api/debug", debug)[0] == 200
    assert otlp.post(hub, protobuf(request(orphan, failed)))[0] == 200
    run = otlp.only_run(hub, "running")  # its root never came: a running run
    assert hub.api("GET", "/api/gates")[1]["gates"] == [] and run["heldCount"] == 0
    g = otlp.graph(hub, run["id"])
    by_id = {n["nodeId"]: n for n in g["nodes"]}
    assert by_id["retriever:lookup"]["parent"] == "<missing>"
    assert by_id["custom:mystery"]["error"] == ("KeyError", "'k'")
    started = next(e for e in otlp.events(hub, run["id"]) if e["nodeId"] == "custom:mystery")
    assert started["kind"] == "custom" and started["attrs"]["otel"]["attributes"] == {"custom.attr": "x"}
    assert started["parentInstanceId"] == "e0000000000000ff"
    nodes = {n["nodeId"]: n["status"] for n in hub.api("GET", f"/api/runs/{run['id']}")[1]["nodes"]}
    assert nodes == {"retriever:lookup": "ok", "custom:mystery": "error"}
    # Observe-only: the hub says so instead of trying to reach an app.
    status, body = hub.api("POST", f"/api/runs/{run['id']}/abort", {})
    assert status == 409 and "observe-only" in body["error"]


def test_a_lone_llm_root_span_is_a_run_with_an_llm_step_under_its_agent_node(hub, otlp):
    lone = {**LLM, "spanId": "f000000000000006"}
    lone.pop("parentSpanId")
    lone["status"] = {"code": 2, "message": "RateLimitError: slow down"}
    assert otlp.post(hub, json.dumps(request(lone)).encode(), "application/json; charset=utf-8")[0] == 200
    run = otlp.only_run(hub, "error")
    g = otlp.graph(hub, run["id"])
    assert g["agent"] == "agent:ChatCompletion" and g["status"] == "error"
    assert [(n["nodeId"], n["parent"], n["error"]) for n in g["nodes"]] == [
        ("llm:step", "agent:ChatCompletion", ("RateLimitError", "slow down"))
    ]


def _fixture_run(hub: HubProcess, export_fixture: Any) -> str:
    with FakeApp(hub.ingest_url, app="travel", client_id="client-1") as app:
        export_fixture.record_agent_run(app, "0123456789abcdef0123456789abcdef")
        wait_for(
            lambda: hub.api("GET", "/api/runs/0123456789abcdef0123456789abcdef")[1].get("status") == "error",
            10,
            "the run stored",
        )
    return "0123456789abcdef0123456789abcdef"


@pytest.mark.parametrize("protocol", ["http/protobuf", "http/json"])
def test_record_format_otlp_posted_to_another_hub_gives_the_same_graph(
    tmp_path, export_fixture, otlp, protocol
):
    with HubProcess(tmp_path / "a.db") as a, HubProcess(tmp_path / "b.db") as b:
        run_id = _fixture_run(a, export_fixture)
        args = [
            "record",
            "--db",
            str(a.db),
            "--keep-secrets",
            "--otlp-endpoint",
            b.url,
            "--otlp-protocol",
            protocol,
        ]
        assert main(args) == 0
        copy = otlp.only_run(b, "error")
        assert copy["id"] == f"otlp-{trace_id(run_id)}" and copy["app"] == "travel"
        assert otlp.graph(b, copy["id"]) == otlp.graph(a, run_id)
        assert len(otlp.graph(b, copy["id"])["nodes"]) == 3
        held = [e for e in otlp.events(b, copy["id"]) if e.get("nodeId") == "tool:weather"]
        assert held[-1]["heldMs"] == 3.5  # the time held at the gate, not a gate of its own
    for hub in (a, b):
        assert "Traceback" not in hub.stderr, hub.stderr


def test_an_otlp_run_recorded_again_keeps_its_trace_id(hub, otlp, tmp_path):
    assert otlp.post(hub, protobuf(request(ROOT, LLM)))[0] == 200
    otlp.only_run(hub, "finished")
    out = tmp_path / "again.json"
    assert main(["record", "--db", str(hub.db), "--format", "otlp", "--out", str(out)]) == 0
    spans = json.loads(out.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert {s["traceId"] for s in spans} == {TRACE}
    assert {s["spanId"] for s in spans} == {"a000000000000001", "b000000000000002"}
    # Posted back (a hub forwarding to itself): every span is known, nothing is stored twice.
    assert otlp.post(hub, out.read_bytes(), "application/json")[0] == 200
    assert hub.api("GET", f"/api/runs/otlp-{TRACE}")[1]["eventCount"] == 4


def test_bad_requests_get_a_clear_4xx_are_counted_and_the_hub_stays_up(hub, otlp):
    cases = [
        (b"\x0a\xff\xff\xff\xff\x0f", "application/x-protobuf", 400, "not an OTLP ExportTraceServiceRequest"),
        (b"{not json", "application/json", 400, "not JSON"),
        (b"[1, 2]", "application/json", 400, "JSON object"),
        (b'{"resourceSpans": 3}', "application/json", 400, "must be a list"),
        (b"{}", "text/plain", 415, "application/x-protobuf or application/json"),
        (b"{}", "", 415, "(none)"),
    ]
    for body, ctype, status, reason in cases:
        got, raw, _ = otlp.post(hub, body, ctype)
        assert (got, reason in json.loads(raw)["error"]) == (status, True), (body, raw)
    got, raw, _ = otlp.post(hub, b"not gzip", "application/json", headers={"Content-Encoding": "gzip"})
    assert got == 400 and "not valid gzip" in json.loads(raw)["error"]
    got, raw, _ = otlp.post(hub, b"{}", "application/json", headers={"Content-Encoding": "br"})
    assert got == 400 and "br" in json.loads(raw)["error"]
    got, raw, _ = otlp.post(hub, os.urandom(1024) * (50 * 1024), "application/x-protobuf")  # 50 MiB
    assert got == 413 and "over 20 MiB" in json.loads(raw)["error"]
    bomb = gzip.compress(b"\0" * (65 * 1024 * 1024), compresslevel=1)
    got, raw, _ = otlp.post(hub, bomb, "application/x-protobuf", headers={"Content-Encoding": "gzip"})
    assert got == 413 and "inflates beyond" in json.loads(raw)["error"]
    # Spans without usable ids are skipped and named (partial success), the others stored.
    bad = {**TOOL, "traceId": "xyz"}
    got, raw, _ = otlp.post(hub, json.dumps(request(bad, TOOL)).encode(), "application/json")
    assert got == 200 and json.loads(raw)["partialSuccess"]["rejectedSpans"] == "1"
    stats = otlp.health(hub)
    assert stats["refused"] == {"400": 6, "413": 2, "415": 2} and stats["rejectedSpans"] == 1
    assert "traceId" in stats["lastError"]
    assert hub.api("GET", "/api/health")[1]["ok"] is True and hub.running


def test_browser_origins_are_refused_and_a_token_is_required(tmp_path, otlp):
    body = protobuf(request(ROOT))
    with HubProcess(tmp_path / "t.db", env={"GRAPHMIND_TOKEN": "s3cret-token-for-tests"}) as hub:
        assert otlp.post(hub, body)[0] == 401
        auth = {"Authorization": "Bearer s3cret-token-for-tests"}
        for origin in ("http://evil.example", f"http://127.0.0.1:{hub.port}"):
            got, raw, _ = otlp.post(hub, body, headers={**auth, "Origin": origin})
            assert got == 403 and "Origin" in json.loads(raw)["error"]
        assert otlp.post(hub, body, headers=auth)[0] == 200
        assert hub.api("GET", "/api/runs", headers=auth)[1]["runs"][0]["name"] == "planner"
    assert "Traceback" not in hub.stderr


def test_one_connection_over_the_rate_gets_429(hub):
    """600 requests pipelined on one keep-alive connection: past the burst of 200 (refilled at 100
    a second) the hub answers 429 with Retry-After, and answers every one."""
    one = (
        f"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1:{hub.port}\r\nContent-Type: application/json\r\n"
        "Content-Length: 2\r\n\r\n{}"
    ).encode()
    with socket.create_connection(("127.0.0.1", hub.port), timeout=30) as sock:
        sock.sendall(one * 600)
        data = b""
        while data.count(b"HTTP/1.1 ") < 600:
            chunk = sock.recv(65536)
            assert chunk, "the hub closed the connection"
            data += chunk
    assert data.count(b"HTTP/1.1 429") > 0 and data.count(b"HTTP/1.1 200") >= 200
    assert b"retry-after: 1" in data.lower()
    assert hub.api("GET", "/api/health")[1]["otlpIngest"]["refused"]["429"] == data.count(b"HTTP/1.1 429")


def test_past_eight_bodies_in_flight_the_hub_answers_503_and_a_client_gone_mid_body_frees_its_slot(hub, otlp):
    head = (
        f"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1:{hub.port}\r\nContent-Type: application/json\r\n"
        "Content-Length: 1000\r\n\r\n{"
    ).encode()
    assert otlp.post(hub, b"{}", "application/json")[0] == 200  # health counts from here on
    slow = [socket.create_connection(("127.0.0.1", hub.port), timeout=30) for _ in range(8)]
    try:
        for sock in slow:
            sock.sendall(head)  # one byte of a 1000-byte body: the hub waits for the rest
        wait_for(lambda: otlp.health(hub)["inFlight"] == 8, 10, "8 bodies in flight")
        got, raw, headers = otlp.post(hub, b"{}", "application/json")
        assert got == 503 and "retry later" in json.loads(raw)["error"] and headers["retry-after"] == "1"
    finally:
        for sock in slow:
            sock.close()
    wait_for(lambda: otlp.health(hub)["inFlight"] == 0, 10, "the slots freed")
    assert otlp.post(hub, b"{}", "application/json")[0] == 200
    assert otlp.health(hub)["refused"]["503"] == 1


def test_a_viewer_sees_each_span_as_it_lands_and_the_run_end_with_its_root(hub, otlp):
    from websockets.sync.client import connect

    def until(ws: Any, want: Any) -> dict[str, Any]:
        while True:
            frame = json.loads(ws.recv(timeout=10))
            if want(frame):
                return dict(frame)

    with connect(hub.live_url) as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "hello"
        assert otlp.post(hub, protobuf(request(TOOL)))[0] == 200
        started = until(ws, lambda f: f["type"] == "event" and f["event"]["type"] == "node.started")
        assert started["runId"] == f"otlp-{TRACE}" and started["event"]["nodeId"] == "tool:search"
        assert until(ws, lambda f: f["type"] == "run")["run"]["status"] == "running"
        assert otlp.post(hub, protobuf(request(ROOT)))[0] == 200
        run = until(ws, lambda f: f["type"] == "run" and f["run"]["status"] != "running")["run"]
        assert (run["status"], run["name"], run["clientId"]) == ("finished", "planner", "otlp")
