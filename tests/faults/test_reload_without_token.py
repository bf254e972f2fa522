"""Reload is code execution in the app (issue 47, docs/security.md "Reload"): "reload code and
retry" re-runs the tool module's top level. A hub without a token lets every local user answer
gates, so it refuses reload there (403, with the reason on the card) unless the app opted in
(GRAPHMIND_ALLOW_RELOAD=1); with a token it is offered as before. Another uid (65534, as root)
asks for it and is refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmind import protocol as proto
from graphmind_server.testing import FakeApp, HubProcess, wait_for

from .conftest import figure

AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
PYTHON = next((p for p in ("/usr/bin/python3", sys.executable) if os.access(p, os.X_OK)), sys.executable)
ANSWER = textwrap.dedent(r"""
    import json, sys, urllib.error, urllib.request
    body = json.dumps({"action": "retry", "reload": True}).encode()
    req = urllib.request.Request(sys.argv[1], data=body, method="POST", headers={"content-type": "application/json"})
    try:
        with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=10) as r:
            print(json.dumps([r.status, json.loads(r.read())]))
    except urllib.error.HTTPError as exc:
        print(json.dumps([exc.code, json.loads(exc.read())]))
""")


@pytest.fixture
def script() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="graphmind-reload-"))
    folder.chmod(0o755)
    path = folder / "answer.py"
    path.write_text(ANSWER)
    path.chmod(0o644)
    try:
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def held(hub: HubProcess, app: FakeApp, headers: dict[str, str], **fields: object) -> dict[str, object]:
    app.run_started("r1")
    app.node_started("r1", "tool:shout", "i1", input={"text": "hi"})
    app.hold("r1", "tool:shout", "i1", gate="error", reason="error", editable=True, reloadable=True, **fields)
    gates = wait_for(lambda: hub.api("GET", "/api/gates", headers=headers)[1]["gates"], 5, "the held gate")
    gate: dict[str, object] = gates[0]
    return gate


def answer_as_other_uid(script: Path, url: str) -> tuple[int, dict[str, str]]:
    proc = subprocess.run(
        [PYTHON, "-S", str(script), url], user=65534, capture_output=True, text=True, timeout=60, cwd="/"
    )
    assert proc.returncode == 0, proc.stderr
    status, body = json.loads(proc.stdout)
    return status, body


@pytest.mark.faults
def test_a_hub_without_a_token_refuses_reload_and_says_why_on_the_card(
    tmp_path: Path, home: Path, script: Path
) -> None:
    with HubProcess(tmp_path / "hub.db") as hub, FakeApp(hub.ingest_url, auto_resume=True) as app:
        gate = held(hub, app, {})
        assert gate["reloadable"] is False
        reason = str(gate["notReloadable"])
        assert "no token" in reason and "--token auto" in reason and "GRAPHMIND_ALLOW_RELOAD=1" in reason
        url = f"{hub.url}/api/gates/{gate['gateId']}"
        if AS_ROOT:
            status, body = answer_as_other_uid(script, url)
        else:
            status, body = hub.api(
                "POST", f"/api/gates/{gate['gateId']}", {"action": "retry", "reload": True}
            )
        assert status == 403 and "reload refused" in body["error"], (status, body)
        # The other answers still work; the first gate.resolve the app gets is this one (frames
        # arrive in order: a reload sent before it would come first).
        assert hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "retry"})[0] == 200
        assert "reload" not in app.expect(proto.GATE_RESOLVE)
    figure(
        "reload on a hub without a token",
        f"{'uid 65534: ' if AS_ROOT else ''}{status}, nothing sent to the app",
    )


@pytest.mark.faults
def test_reload_is_offered_with_a_token_or_when_the_app_opted_in(tmp_path: Path, home: Path) -> None:
    with HubProcess(tmp_path / "open.db") as hub, FakeApp(hub.ingest_url) as app:
        gate = held(hub, app, {}, reloadOptIn=True)
        assert gate["reloadable"] is True and gate["notReloadable"] is None
    with HubProcess(tmp_path / "token.db", args=["--token", "auto"]) as hub:
        token = proto.token_file(hub.port).read_text().strip()
        bearer = {"Authorization": f"Bearer {token}"}
        with FakeApp(hub.ingest_url, headers=bearer, auto_resume=True) as app:
            gate = held(hub, app, bearer)
            assert gate["reloadable"] is True and gate["notReloadable"] is None
            status, _ = hub.api(
                "POST", f"/api/gates/{gate['gateId']}", {"action": "retry", "reload": True}, headers=bearer
            )
            assert status == 200
            assert app.expect(proto.GATE_RESOLVE)["reload"] is True
