"""OTLP: the OTLP/JSON encoding, parsing into opentelemetry-proto, posting to a loopback collector,
and `serve --otlp-endpoint` (a dead collector never slows the hub)."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from graphmind_server.cli import main
from graphmind_server.export.forwarder import OtlpForwarder
from graphmind_server.export.otlp_http import OtlpTarget, proto3_json
from graphmind_server.testing import wait_for


class Collector:
    """A loopback OTLP/HTTP receiver: decodes protobuf with opentelemetry-proto, keeps JSON as is."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []  # {"path", "headers", "proto" | "json"}
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                item: dict[str, Any] = {"path": self.path, "headers": dict(self.headers)}
                if self.headers["Content-Type"] == "application/x-protobuf":
                    item["proto"] = ExportTraceServiceRequest.FromString(body)
                else:
                    item["json"] = json.loads(body)
                collector.requests.append(item)
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class HangingCollector:
    """Accepts connections and never answers: a collector that is up but dead."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.conns: list[socket.socket] = []
        self.accepted = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            self.accepted.set()

    def close(self) -> None:
        self.sock.close()
        for conn in self.conns:
            conn.close()


@pytest.fixture
def collector() -> Iterator[Collector]:
    c = Collector()
    yield c
    c.close()


@pytest.fixture
def hanging() -> Iterator[HangingCollector]:
    c = HangingCollector()
    yield c
    c.close()


def _recorded_db(make_hub, tmp_path: Path, export_fixture, runs: int = 1) -> Path:
    db = tmp_path / "hub.db"
    hub = make_hub(db=db)
    app = hub.app(app="travel", client_id="client-1")
    for i in range(runs):
        export_fixture.record_agent_run(app, f"run-{i}")
    hub.wait_for(
        lambda: all(hub.api("GET", f"/api/runs/run-{i}")[1].get("status") == "error" for i in range(runs)),
        10,
        "runs stored",
    )
    return db


def _attrs(span: dict[str, Any]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in span["attributes"]}


def _snake_keys(value: Any, path: str = "") -> list[str]:
    """Object keys that are not camelCase (attribute *names* are values, not keys, in OTLP/JSON)."""
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            if "_" in k or "." in k:
                found.append(f"{path}.{k}")
            found += _snake_keys(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _snake_keys(v, f"{path}[{i}]")
    return found


def test_otlp_json_follows_the_spec_and_parses_into_opentelemetry_proto(make_hub, tmp_path, export_fixture):
    db = _recorded_db(make_hub, tmp_path, export_fixture)
    out = tmp_path / "trace.json"
    assert main(["record", "--db", str(db), "--format", "otlp", "--out", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert export_fixture.contains_secret(text) == []
    doc = json.loads(text)
    assert _snake_keys(doc) == []
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert (
        _attrs({"attributes": doc["resourceSpans"][0]["resource"]["attributes"]})["service.name"] == "travel"
    )
    for span in spans:
        assert re.fullmatch(r"[0-9a-f]{32}", span["traceId"]) and re.fullmatch(
            r"[0-9a-f]{16}", span["spanId"]
        )
        assert isinstance(span["kind"], int) and isinstance(span["status"]["code"], int)
        assert span["startTimeUnixNano"].isdigit() and int(span["endTimeUnixNano"]) >= int(
            span["startTimeUnixNano"]
        )
    by_name = {s["name"]: s for s in spans}
    assert set(by_name) == {"trip", "step", "weather", "book"}
    root, step, weather, book = by_name["trip"], by_name["step"], by_name["weather"], by_name["book"]
    assert "parentSpanId" not in root
    assert step["parentSpanId"] == root["spanId"] and book["parentSpanId"] == root["spanId"]
    assert weather["parentSpanId"] == step["spanId"]  # the tool call the model step started
    assert _attrs(root)["openinference.span.kind"] == "AGENT" and root["status"]["code"] == 2
    a = _attrs(step)
    assert (a["openinference.span.kind"], a["llm.model_name"]) == ("LLM", "gpt-test")
    assert (a["llm.token_count.prompt"], a["llm.token_count.completion"], a["llm.token_count.total"]) == (
        "12",
        "5",
        "17",
    )
    assert json.loads(a["input.value"])["messages"][0]["content"] == "weather in Lisbon?"
    assert a["input.mime_type"] == "application/json"
    assert json.loads(a["input.value"])["extra_headers"]["Authorization"] == "__REDACTED__"
    a = _attrs(weather)
    assert (a["openinference.span.kind"], a["tool.name"]) == ("TOOL", "weather")
    assert json.loads(a["tool_call.function.arguments"])["city"] == "Lisbon"
    assert json.loads(a["output.value"])["temp"] == 21 and a["graphmind.held_ms"] == 3.5
    assert [e["name"] for e in weather["events"]] == ["graphmind.gate.held", "graphmind.gate.answered"]
    assert _attrs(weather["events"][1])["graphmind.action"] == "continue"
    assert book["status"] == {"code": 2, "message": "ValueError: no seats"}
    assert _attrs(book["events"][0])["exception.message"] == "no seats"

    message = json_format.ParseDict(proto3_json(doc), ExportTraceServiceRequest())
    parsed = message.resource_spans[0].scope_spans[0].spans
    assert len(parsed) == 4 and {s.span_id.hex() for s in parsed} == {s["spanId"] for s in spans}
    assert all(s.trace_id.hex() == root["traceId"] for s in parsed)


@pytest.mark.parametrize("protocol", ["http/protobuf", "http/json"])
def test_a_loopback_collector_receives_every_span_with_its_parent(
    make_hub, tmp_path, export_fixture, collector, protocol
):
    db = _recorded_db(make_hub, tmp_path, export_fixture, runs=2)
    assert (
        main(
            [
                "record",
                "--db",
                str(db),
                "--otlp-endpoint",
                collector.url,
                "--otlp-protocol",
                protocol,
                "--header",
                "X-Api-Key=abc",
            ]
        )
        == 0
    )
    assert len(collector.requests) == 2  # one trace per run
    for request in collector.requests:
        assert request["path"] == "/v1/traces" and request["headers"]["X-Api-Key"] == "abc"
        if protocol == "http/protobuf":
            spans = [
                (s.span_id.hex(), s.parent_span_id.hex(), s.trace_id.hex(), s.name)
                for s in request["proto"].resource_spans[0].scope_spans[0].spans
            ]
        else:
            spans = [
                (s["spanId"], s.get("parentSpanId", ""), s["traceId"], s["name"])
                for s in request["json"]["resourceSpans"][0]["scopeSpans"][0]["spans"]
            ]
        assert len(spans) == 4 and len({t for _, _, t, _ in spans}) == 1
        ids = {sid: name for sid, _, _, name in spans}
        parents = {name: ids.get(parent) for _, parent, _, name in spans}
        assert parents == {"trip": None, "step": "trip", "weather": "step", "book": "trip"}


def test_an_unreachable_collector_is_one_line(make_hub, tmp_path, export_fixture, capsys):
    db = _recorded_db(make_hub, tmp_path, export_fixture)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    assert main(["record", "--db", str(db), "--otlp-endpoint", f"http://127.0.0.1:{port}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("graphmind: cannot reach the collector at") and err.count("\n") == 1
    assert main(["record", "--db", str(db), "--otlp-endpoint", "ftp://x"]) == 2
    assert "--otlp-endpoint must be an http(s) URL" in capsys.readouterr().err


def test_serve_forwards_each_finished_run_and_counts_it_in_health(
    make_hub, tmp_path, export_fixture, collector
):
    hub = make_hub(otlp_endpoint=f"{collector.url}/v1/traces")
    app = hub.app(app="travel")
    export_fixture.record_agent_run(app, "run-live")
    wait_for(lambda: len(collector.requests) == 1, 10, "the run forwarded")
    spans = collector.requests[0]["proto"].resource_spans[0].scope_spans[0].spans
    assert sorted(s.name for s in spans) == ["book", "step", "trip", "weather"]
    health = wait_for(lambda: (h := hub.api("GET", "/api/health")[1])["otlp"]["sent"] == 1 and h, 5, "health")
    assert health["otlp"] | {"endpoint": None} == {
        "endpoint": None,
        "protocol": "http/protobuf",
        "queued": 0,
        "sent": 1,
        "failed": 0,
        "dropped": 0,
        "lastError": None,
    }
    assert "otlp" not in make_hub(db=tmp_path / "other.db").api("GET", "/api/health")[1]


def test_a_hanging_collector_never_slows_the_hub(make_hub, tmp_path, hanging):
    hub = make_hub(otlp_endpoint=hanging.url)
    app = hub.app(app="busy")
    for i in range(30):
        app.run_started(f"r{i}", "job")
        app.run_finished(f"r{i}")
    # The forwarder's post now hangs until its 10 s timeout: anything of the hub's that waited on it
    # would take that long. The bounds below leave room for a loaded machine and stay well under it.
    wait_for(lambda: hub.api("GET", "/api/runs/r29")[1].get("status") == "finished", 10, "last run stored")
    assert hanging.accepted.wait(5)  # the forwarder is stuck in its first post
    t1 = time.monotonic()
    status, health = hub.api("GET", "/api/health")
    assert status == 200 and time.monotonic() - t1 < 3.0
    otlp = health["otlp"]
    # One run in flight; the rest wait (or, past a timeout, failed). Nothing was sent or dropped.
    assert otlp["sent"] == 0 and otlp["dropped"] == 0 and otlp["queued"] + otlp["failed"] in (29, 30)
    # A gate round trip while the forwarder hangs: as fast as ever.
    app.hold("r-gate", "tool:x", "i1")
    gate = wait_for(lambda: hub.gates(), 5, "gate held")[0]
    app.auto_resume = True
    t2 = time.monotonic()
    assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})[0] == 200
    assert time.monotonic() - t2 < 5.0
    t3 = time.monotonic()
    hub.stop()
    assert time.monotonic() - t3 < 8.0  # stopping does not wait for the hanging post


def test_a_full_queue_drops_and_counts(tmp_path):
    # Not started: nothing drains the queue, so what does not fit is dropped, counted, never waited for.
    fwd = OtlpForwarder(
        tmp_path / "hub.db", OtlpTarget("http://127.0.0.1:9/v1/traces", "http/json"), queue_max=2
    )
    t0 = time.monotonic()
    for i in range(6):
        fwd.offer(f"r{i}")
    assert time.monotonic() - t0 < 0.5
    assert fwd.stats() | {"endpoint": None} == {
        "endpoint": None,
        "protocol": "http/json",
        "queued": 2,
        "sent": 0,
        "failed": 0,
        "dropped": 4,
        "lastError": None,
    }


def test_a_collector_that_answers_503_is_retried_with_backoff_and_said_once(
    make_hub, export_fixture, collector, capfd, monkeypatch
):
    from graphmind_server.export import forwarder

    monkeypatch.setattr(forwarder, "RETRY_MIN_S", 0.05)
    refusals = [3]
    real = collector.server.RequestHandlerClass.do_POST

    def flaky(handler: Any) -> None:
        if refusals[0] > 0:
            refusals[0] -= 1
            handler.rfile.read(int(handler.headers["Content-Length"]))
            handler.send_response(503)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        real(handler)

    monkeypatch.setattr(collector.server.RequestHandlerClass, "do_POST", flaky)
    hub = make_hub(otlp_endpoint=f"{collector.url}/v1/traces")
    export_fixture.record_agent_run(hub.app(app="travel"), "run-retried")
    wait_for(lambda: len(collector.requests) == 1, 15, "the run forwarded after the 503s")
    otlp_stats = wait_for(
        lambda: (h := hub.api("GET", "/api/health")[1]["otlp"])["sent"] == 1 and h, 5, "sent"
    )
    assert otlp_stats["failed"] == 0 and otlp_stats["dropped"] == 0
    err = capfd.readouterr().err
    said = [line for line in err.splitlines() if "could not forward" in line]
    assert len(said) == 1 and "503" in said[0], err
    assert "works again" in err
