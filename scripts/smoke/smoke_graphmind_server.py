"""Wheel smoke for graphmind-server: an in-process hub, an app attaches, a run is stored, the CLI answers."""

import json
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

import graphmind
from graphmind_server.serve import start_in_thread

with tempfile.TemporaryDirectory() as tmp:
    hub = start_in_thread(port=0, db=str(Path(tmp) / "smoke.db"))
    try:
        client = graphmind.Client(app="smoke", url=hub.ingest_url)
        assert client.ready(5), "the app did not attach"
        lookup = client.wrap(lambda key: key.upper(), name="lookup")
        with client.run("smoke-run"):
            assert lookup("a") == "A"
        client.dispose()
        with urllib.request.urlopen(hub.url + "/api/health", timeout=5) as response:
            assert json.loads(response.read())["ok"] is True
        with urllib.request.urlopen(hub.url + "/", timeout=5) as response:
            assert b"<html" in response.read().lower(), "the viewer is not packaged"
        # OTLP/HTTP protobuf at /v1/traces works from the wheel alone (opentelemetry-proto is a dependency).
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        otlp = ExportTraceServiceRequest()
        span = otlp.resource_spans.add().scope_spans.add().spans.add()
        span.trace_id, span.span_id, span.name = b"\x01" * 16, b"\x02" * 8, "smoke-otlp"
        span.start_time_unix_nano, span.end_time_unix_nano = 1, 2
        post = urllib.request.Request(
            hub.url + "/v1/traces",
            data=otlp.SerializeToString(),
            method="POST",
            headers={"Content-Type": "application/x-protobuf"},
        )
        with urllib.request.urlopen(post, timeout=5) as response:
            assert response.status == 200
        with urllib.request.urlopen(hub.url + "/api/runs/otlp-" + "01" * 16, timeout=5) as response:
            assert json.loads(response.read())["name"] == "smoke-otlp"
    finally:
        hub.stop()
    # Runs leave the hub without any extra: a JSONL export; `graphmind mcp` names its extra.
    db = str(Path(tmp) / "smoke.db")
    record = subprocess.run(
        [sys.executable, "-m", "graphmind_server", "record", "--last", "1", "--db", db],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert record.returncode == 0 and '"name":"smoke-run"' in record.stdout, record.stderr
    mcp = subprocess.run(
        [sys.executable, "-m", "graphmind_server", "mcp", "--db", db],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert mcp.returncode == 2 and "graphmind-server[mcp]" in mcp.stderr, mcp.stderr

version = subprocess.run(
    [sys.executable, "-m", "graphmind_server", "--version"], capture_output=True, text=True, check=True
)
print(f"{version.stdout.strip()} smoke ok")
