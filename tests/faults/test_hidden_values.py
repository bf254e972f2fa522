"""A hidden value stays hidden where the engine writes text about it (issue 47, docs/protocol.md
"Redaction"): a replay that diverges under GRAPHMIND_HIDE_INPUTS builds its diff from the redacted
inputs (the diff goes into `node.error` and `run.finished`, which no switch hides); a loop hold's
fingerprint of an argument hidden by `mask=` is the digest of the masked arguments, not of the
secret (10,000 guessed PINs hashed find nothing). Checked in every stored event (the database's
files, byte for byte), the export, the held gate and the exception the app gets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import graphmind
from graphmind._loop.fingerprint import fingerprint
from graphmind._replay.cassette import write_cassette
from graphmind._replay.errors import ReplayDivergence
from graphmind.testing import FakeHub
from graphmind_server.testing import HubProcess, in_thread, wait_for

from .conftest import figure

SECRET = "SECRET-9137"
PIN = "SECRET-4821"


def everything_stored(hub: HubProcess, db: Path, tmp_path: Path) -> str:
    """Every byte the hub keeps and hands out: its database files, its API's events, an export."""
    out = tmp_path / "export.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "graphmind_server", "record", "--db", str(db), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    texts = [out.read_text()]
    for run in hub.api("GET", "/api/runs")[1]["runs"]:
        texts.append(json.dumps(hub.api("GET", f"/api/runs/{run['id']}/events")[1]))
    texts.append(json.dumps(hub.api("GET", "/api/gates")[1]))
    raw = b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))
    return "\n".join(texts) + raw.decode("latin-1")


def recording(tmp_path: Path) -> Path:
    """A run whose `check` call had the input {"pin": "0000"} (nothing secret)."""
    with FakeHub() as fake:
        client = graphmind.Client(app="pins", url=fake.url, retry_interval=0.2)
        assert client.ready(5)
        check = client.wrap(lambda pin: pin == "0000", name="check")
        with client.run("unlock"):
            check(pin="0000")
        sent = client.stats()["events"]
        fake.wait_for(lambda: len(fake.events) >= sent, what="the recorded events")
        client.dispose()
        path = tmp_path / "unlock.jsonl"
        write_cassette(path, client.client_id, list(fake.events))
    return path


@pytest.mark.faults
@pytest.mark.parametrize("policy", ["fail", "hold"])
def test_a_diverging_replay_under_hide_inputs_stores_no_input(
    tmp_path: Path, home: Path, policy: str
) -> None:
    cassette = recording(tmp_path)
    db = tmp_path / "hub.db"
    with HubProcess(db) as hub:
        client = graphmind.Client(
            app="pins",
            url=hub.ingest_url,
            hide_inputs=True,
            replay={"source": str(cassette), "on_divergence": policy},
        )
        try:
            assert client.ready(5)
            check = client.wrap(lambda pin: pin == "0000", name="check")

            def agent() -> Any:
                with client.run("unlock"):
                    return check(pin=SECRET)

            thread, out = in_thread(agent)
            if policy == "hold":
                gate = hub.held_gates()[0]
                assert gate["reason"] == "divergence"
                assert SECRET not in json.dumps(gate)
                assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "abort"})[0] == 200
            thread.join(10)
            error = out.get("error")
            if policy == "fail":
                assert isinstance(error, ReplayDivergence), out
                assert SECRET not in str(error) and "hide" in str(error)
        finally:
            client.dispose()
        wait_for(
            lambda: hub.api("GET", "/api/runs")[1]["runs"][0]["status"] != "running", 10, "the run ended"
        )
        stored = everything_stored(hub, db, tmp_path)
    assert "diverged" in stored or policy == "hold"
    assert SECRET not in stored
    figure(
        f"replay divergence ({policy}) under hide_inputs",
        "the input in no stored byte, export, gate or error",
    )


@pytest.mark.faults
def test_a_loop_holds_fingerprint_does_not_give_away_a_masked_pin(tmp_path: Path, home: Path) -> None:
    db = tmp_path / "hub.db"
    with HubProcess(db) as hub:
        client = graphmind.Client(app="pins", url=hub.ingest_url, mask=r"SECRET-\d{4}")
        try:
            assert client.ready(5)
            check = client.wrap(lambda pin: False, name="check")

            def agent() -> Any:
                with client.run("brute"):
                    for _ in range(3):  # the third identical call is held by the loop guard
                        check(pin=PIN)

            thread, _ = in_thread(agent)
            gate = hub.held_gates()[0]
            assert gate["reason"] == "loop"
            seen = gate["loop"]["fingerprint"]
            assert isinstance(seen, str) and len(seen) == 64
            # The attack: hash every PIN of the masked shape, as the fingerprint's definition says.
            found = [i for i in range(10_000) if fingerprint({"pin": f"SECRET-{i:04d}"}) == seen]
            assert found == []
            assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "abort"})[0] == 200
            thread.join(10)
        finally:
            client.dispose()
        stored = everything_stored(hub, db, tmp_path)
    assert PIN not in stored and fingerprint({"pin": PIN}) not in stored
    figure(
        "masked PIN at a loop hold",
        "10,000 guesses hashed: 0 match the fingerprint; PIN and its hash stored nowhere",
    )
