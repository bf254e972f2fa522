"""The viewer against a hub started with `--token auto`: the printed URL carries the token once, the
page keeps it in a cookie, and every fetch and the live feed work without anything else."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

import graphmind
from graphmind import protocol as proto
from graphmind_server.testing import HubProcess, wait_for

pytestmark = pytest.mark.browser


@pytest.fixture
def token_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubProcess]:
    monkeypatch.setenv("GRAPHMIND_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    with HubProcess(tmp_path / "hub.db", args=["--token", "auto"]) as hub:
        yield hub


def test_the_viewer_opened_from_the_printed_url_works_with_a_token(
    token_hub: HubProcess, make_page: Any
) -> None:
    # The viewer URL is the line after the listening line: it may still be on its way through the pipe.
    printed = wait_for(
        lambda: next((line for line in token_hub.stdout_lines if "?token=" in line), None),
        5,
        "the printed viewer URL",
    )
    viewer_url = printed.split(": ", 1)[1].strip()
    client = graphmind.Client(app="token-app", url=token_hub.ingest_url)  # finds the token file itself
    try:
        assert client.ready(5)
        with client.run("with-a-token"):
            client.wrap(lambda q: q, name="search")("lisbon")
        page = make_page(token_hub.url)
        page.goto(viewer_url)
        assert "token=" not in page.url  # the address bar lost it; the cookie keeps it
        expect(page.locator("#conn")).to_have_text("live")
        expect(page.locator(".run-item")).to_have_count(1)
        with client.run("live-after-load"):
            client.wrap(lambda q: q, name="search")("porto")
        expect(page.locator(".run-item")).to_have_count(
            2
        )  # the live feed (a WebSocket) carries the cookie too
        assert page.evaluate("() => fetch('/api/debug').then(r => r.status)") == 200
    finally:
        client.dispose()
    token = proto.token_file(token_hub.port).read_text().strip()
    assert token in viewer_url
