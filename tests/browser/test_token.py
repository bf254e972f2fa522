"""The viewer against a hub started with `--token auto` (issue 28): the printed link names a page
only this user can read, which carries the browser on with a one-time code, never the token (Chromium writes the URL to History when the page commits, before
any script runs); the page trades the code for the token, keeps it in this tab's sessionStorage
and takes the code out of the address; so Chromium's History holds no token and only a spent code;
no cookie is set, so another server on 127.0.0.1 receives the token in no header; the viewer works
(runs listed, a gate answered)."""

from __future__ import annotations

import http.server
import shutil
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from _apps import AgentThread, CountingTool
from playwright.sync_api import expect

import graphmind
from conftest import CHROMIUM, CHROMIUM_ARGS
from graphmind import protocol as proto
from graphmind_server.access.viewer_codes import viewer_file
from graphmind_server.testing import HubProcess, wait_for

pytestmark = pytest.mark.browser


@pytest.fixture
def token_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubProcess]:
    monkeypatch.setenv("GRAPHMIND_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    with HubProcess(tmp_path / "hub.db", args=["--token", "auto"]) as hub:
        yield hub


class Recorder(http.server.BaseHTTPRequestHandler):
    """Another user's web server on another port of 127.0.0.1: keeps every request's headers."""

    seen: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        Recorder.seen.append(f"{self.requestline}\n{self.headers}")
        body = b"ok"
        self.send_response(200)
        self.send_header("content-length", str(len(body)))
        self.send_header("access-control-allow-origin", "*")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def other_server() -> Iterator[int]:
    Recorder.seen = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_the_printed_url_leaves_no_token_in_history_nor_at_another_port_and_the_viewer_works(
    token_hub: HubProcess, other_server: int, tmp_path: Path, browser: Any
) -> None:
    printed = wait_for(
        lambda: next((line for line in token_hub.stdout_lines if line.startswith("Open the viewer")), None),
        5,
        "the printed viewer link",
    )
    viewer_url = printed.rsplit(": ", 1)[1].strip()
    token = proto.token_file(token_hub.port).read_text().strip()
    # The link names a page only this user can read (no code on a command line or in a log); the
    # page sends the browser on to the hub with a one-time code.
    assert viewer_url == viewer_file(token_hub.port).as_uri() and "code" not in viewer_url
    code = viewer_file(token_hub.port).read_text().split("#code=", 1)[1].split('"', 1)[0]
    assert not [line for line in token_hub.stdout_lines if token in line]
    profile = tmp_path / "profile"  # a fresh user-data-dir: its History starts empty
    client = graphmind.Client(app="token-app", url=token_hub.ingest_url)  # finds the token file itself
    agent = None
    try:
        assert client.ready(5)
        with client.run("with-a-token"):
            client.wrap(lambda q: q, name="search")("lisbon")
        assert (
            token_hub.api(
                "PUT",
                "/api/debug",
                {"breakpoints": [{"nodeId": "tool:hold", "gate": "before"}]},
                headers={"Authorization": f"Bearer {token}"},
            )[0]
            == 200
        )
        # A persistent context (a profile on disk, with its History), from the session's Playwright.
        ctx = browser.browser_type.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            args=CHROMIUM_ARGS,
            viewport={"width": 1600, "height": 900},
        )
        try:
            page = ctx.pages[0] if ctx.pages else ctx.new_page()
            page.goto(viewer_url)
            expect(page.locator("#conn")).to_have_text("live")
            assert page.url.startswith(token_hub.url) and "code" not in page.url  # taken out first thing
            expect(page.locator(".run-item")).to_have_count(1)
            assert page.evaluate("() => document.cookie") == ""
            assert ctx.cookies() == []
            # Live feed (a WebSocket carrying the token as a subprotocol) and a gate answered.
            tool = CountingTool({"hits": 1})
            held = client.wrap(tool, name="hold")

            def body() -> Any:
                with client.run("held-run"):
                    return held(q="porto")

            agent = AgentThread(body)
            card = page.locator(".gate-card")
            expect(card).to_have_count(1)
            card.get_by_role("button", name="Continue").click()
            assert agent.wait_pumping(page)
            assert agent.join().error is None and tool.calls == [{"q": "porto"}]
            expect(page.locator(".run-item")).to_have_count(2)
            # The page is made to request another server on 127.0.0.1: a fetch, an image, a frame.
            other = f"http://127.0.0.1:{other_server}"
            page.evaluate(
                """(other) => Promise.all([
                    fetch(other + "/fetch", {mode: "no-cors", credentials: "include"}),
                    new Promise((done) => { const i = new Image(); i.onload = i.onerror = done; i.src = other + "/img"; }),
                    new Promise((done) => { const f = document.createElement("iframe"); f.onload = done;
                                            f.src = other + "/frame"; document.body.appendChild(f); }),
                ])""",
                other,
            )
            page.reload()  # the token stays for this tab (sessionStorage) without coming back to the URL
            expect(page.locator("#conn")).to_have_text("live")
            assert "code" not in page.url
            # A second tab opened from the first shares its sessionStorage; a fresh link for
            # another browser comes from `graphmind viewer-url`.
        finally:
            ctx.close()  # writes History to disk
    finally:
        if agent is not None:
            agent.join()
        client.dispose()
    assert len(Recorder.seen) >= 3, Recorder.seen
    for request in Recorder.seen:
        assert token not in request and "graphmind_token" not in request, request
    history = profile / "Default" / "History"
    assert history.is_file()
    copy = tmp_path / "History.copy"
    shutil.copy(history, copy)
    with sqlite3.connect(copy) as db:
        urls = [row[0] for row in db.execute("SELECT url FROM urls")]
        visits = db.execute("SELECT count(*) FROM visits").fetchone()[0]
    assert urls and visits, "Chromium recorded no visit at all: the check below would prove nothing"
    assert any(u.startswith(token_hub.url) for u in urls), urls
    assert not [u for u in urls if token in u], urls
    # History may keep the link (Chromium records it at commit): its code is spent.
    status, body = token_hub.api("POST", "/api/viewer/redeem", {"code": code})
    assert status == 403 and "already used" in body["error"], (status, body)
    raw = history.read_bytes()
    assert token.encode() not in raw
    for companion in profile.glob("Default/History-*"):
        assert token.encode() not in companion.read_bytes(), companion


def test_the_viewer_without_the_token_says_where_to_find_it(token_hub: HubProcess, make_page: Any) -> None:
    page = make_page(token_hub.url, allow_console_errors=True)  # the 401s it meets are the point
    page.goto(token_hub.url)  # the page loads (no data in it); the API refuses
    status = page.evaluate("() => fetch('/api/runs').then(r => r.status)")
    assert status == 401
    body = page.evaluate("() => fetch('/api/runs').then(r => r.json())")
    assert "viewer-<port>.html" in body["error"] and "graphmind viewer-url" in body["error"]
