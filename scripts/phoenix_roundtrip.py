"""A run recorded by a real hub, posted to a local Arize Phoenix, read back from Phoenix's REST API.

Run by `uv run nox -s phoenix` (needs arize-phoenix, which that session installs). Exit 0 when
Phoenix shows the run with as many spans as `graphmind record --format otlp` wrote, with the same
kinds and parents.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import graphmind
from graphmind_server.cli import main
from graphmind_server.serve import start_in_thread


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def record_a_run(db: Path) -> None:
    with start_in_thread(port=0, db=str(db)) as hub:
        client = graphmind.Client(app="phoenix-check", url=hub.ingest_url)
        assert client.ready(5)

        def search(city: str) -> list[str]:
            return [f"hotel in {city}"]

        def book(hotel: str, api_key: str) -> str:
            return f"booked {hotel}"

        gated_search = client.wrap(search, name="search")
        gated_book = client.wrap(book, name="book")
        with client.run("trip"):
            hotels = gated_search(city="Lisbon")
            gated_book(hotel=hotels[0], api_key="sk-not-for-phoenix")
        client.dispose()


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())


def main_check() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "hub.db"
        record_a_run(db)
        out = Path(tmp) / "trace.json"
        assert main(["record", "--db", str(db), "--format", "otlp", "--out", str(out)]) == 0
        expected = json.loads(out.read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]

        port = free_port()
        env = {
            **os.environ,
            "PHOENIX_WORKING_DIR": tmp,
            "PHOENIX_PORT": str(port),
            "PHOENIX_GRPC_PORT": str(free_port()),
            "PHOENIX_TELEMETRY_ENABLED": "false",
        }
        phoenix = subprocess.Popen(
            [sys.executable, "-m", "phoenix.server.main", "serve"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            deadline = time.monotonic() + 300
            while True:
                try:
                    urllib.request.urlopen(f"{base}/healthz", timeout=2).read()
                    break
                except OSError:
                    if time.monotonic() > deadline or phoenix.poll() is not None:
                        print("phoenix did not start", file=sys.stderr)
                        return 1
                    time.sleep(1)
            assert main(["record", "--db", str(db), "--otlp-endpoint", base]) == 0
            deadline = time.monotonic() + 60
            while True:
                spans = get(f"{base}/v1/projects/default/spans?limit=100")["data"]
                if len(spans) >= len(expected) or time.monotonic() > deadline:
                    break
                time.sleep(1)
        finally:
            phoenix.terminate()
            phoenix.wait(30)
    ours = {s["spanId"]: (s["name"], s.get("parentSpanId")) for s in expected}
    theirs = {s["context"]["span_id"]: (s["name"], s.get("parent_id")) for s in spans}
    print(f"Phoenix shows {len(spans)} spans; graphmind record wrote {len(expected)}")
    if ours != theirs:
        print(f"mismatch:\n ours   {ours}\n theirs {theirs}", file=sys.stderr)
        return 1
    print("same names and parents: " + ", ".join(sorted(name for name, _ in ours.values())))
    return 0


if __name__ == "__main__":
    sys.exit(main_check())
