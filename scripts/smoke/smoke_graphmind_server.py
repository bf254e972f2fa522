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
