"""Every tool finds the hub's token the same ways (issue 28; `graphmind.protocol.find_token`):
a command's `--token-file PATH`, GRAPHMIND_TOKEN, GRAPHMIND_TOKEN_FILE, or the token file a hub of
the same user wrote for its port; never a value on a command line."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import graphmind
from graphmind import protocol as proto
from graphmind_server.mcp_server.hubapi import HubApi, HubUnreachable
from graphmind_server.testing import HubProcess

TOKEN = "kept-in-a-file-not-on-argv-42"


@pytest.fixture
def kept(tmp_path: Path) -> Path:
    path = tmp_path / "token"
    path.write_text(TOKEN + "\n")
    path.chmod(0o600)
    return path


@pytest.fixture
def token_hub(tmp_path: Path, kept: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubProcess]:
    # The hub writes its per-port token file in its own home; the tools below look in another
    # one, so only the source under test can give them the token.
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    monkeypatch.delenv("GRAPHMIND_TOKEN_FILE", raising=False)
    with HubProcess(
        tmp_path / "hub.db",
        args=["--token-file", str(kept)],
        env={"GRAPHMIND_HOME": str(tmp_path / "hub-home")},
    ) as hub:
        monkeypatch.setenv("GRAPHMIND_HOME", str(tmp_path / "tools-home"))
        yield hub


def test_find_token_order(tmp_path: Path, kept: Path) -> None:
    other = tmp_path / "other"
    other.write_text("from-the-variable-file-xx")
    url = "ws://127.0.0.1:4747/ingest"
    env = {"GRAPHMIND_TOKEN": "from-the-variable-xxxxx", "GRAPHMIND_TOKEN_FILE": str(other)}
    assert proto.find_token(url, env, token_file_path=kept) == TOKEN
    assert proto.find_token(url, env) == "from-the-variable-xxxxx"
    assert proto.find_token(url, {"GRAPHMIND_TOKEN_FILE": str(other)}) == "from-the-variable-file-xx"
    home = tmp_path / "home"
    home.mkdir()
    (home / "token-4747").write_text("from-the-hubs-file-xxxx")
    assert proto.find_token(url, {"GRAPHMIND_HOME": str(home)}) == "from-the-hubs-file-xxxx"
    assert proto.find_token("ws://example.com:4747/ingest", {"GRAPHMIND_HOME": str(home)}) is None
    with pytest.raises(proto.TokenError, match="GRAPHMIND_TOKEN_FILE"):
        proto.find_token(url, {"GRAPHMIND_TOKEN_FILE": str(tmp_path / "missing")})


@pytest.mark.parametrize("source", ["GRAPHMIND_TOKEN", "GRAPHMIND_TOKEN_FILE"])
def test_an_app_attaches_with_either_variable(
    token_hub: HubProcess, kept: Path, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    monkeypatch.setenv(source, TOKEN if source == "GRAPHMIND_TOKEN" else str(kept))
    client = graphmind.Client(app="sources", url=token_hub.ingest_url)
    try:
        assert client.ready(5)
    finally:
        client.dispose()
    nobody = graphmind.Client(app="none", url=token_hub.ingest_url)
    monkeypatch.delenv(source)
    try:
        assert not nobody.ready(2)  # the tools' home has no token file: nothing else gives it away
    finally:
        nobody.dispose()


def test_graphmind_mcp_sends_the_token_it_finds(token_hub: HubProcess, kept: Path) -> None:
    assert HubApi(token_hub.port, token_file=str(kept)).gates() == []
    with pytest.raises(HubUnreachable, match="401"):
        HubApi(token_hub.port).gates()


def test_viewer_url_makes_a_new_one_time_link(token_hub: HubProcess, kept: Path, tmp_path: Path) -> None:
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphmind_server",
            "viewer-url",
            "--port",
            str(token_hub.port),
            "--token-file",
            str(kept),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "GRAPHMIND_TELEMETRY": "off"},
    )
    assert proc.returncode == 0, proc.stderr
    url = proc.stdout.strip()
    page = tmp_path / "hub-home" / f"viewer-{token_hub.port}.html"  # the hub's home, not the tool's
    assert url == page.as_uri() and TOKEN not in url and "code" not in url
    code = page.read_text().split("#code=", 1)[1].split('"', 1)[0]
    assert TOKEN not in page.read_text()
    assert token_hub.api("POST", "/api/viewer/redeem", {"code": code}) == (200, {"token": TOKEN})
    link = subprocess.run(
        [sys.executable, "-m", "graphmind_server", "viewer-url", "--link", "--port", str(token_hub.port)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "GRAPHMIND_TELEMETRY": "off", "GRAPHMIND_TOKEN_FILE": str(kept)},
    )
    assert link.returncode == 0, link.stderr
    assert link.stdout.strip().startswith(f"{token_hub.url}/#code=")
    code = link.stdout.strip().split("#code=", 1)[1]
    assert token_hub.api("POST", "/api/viewer/redeem", {"code": code}) == (200, {"token": TOKEN})
    missing = subprocess.run(
        [sys.executable, "-m", "graphmind_server", "viewer-url", "--port", str(token_hub.port)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1 and "no token" in missing.stderr


def test_mcp_proxy_refuses_an_unreadable_token_file_with_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "graphmind_mcp", "--token-file", str(tmp_path / "missing"), "--", "true"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "cannot read the token file" in proc.stderr
