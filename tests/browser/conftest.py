"""Shared fixtures for the viewer's browser tests: real headless Chromium (Debian's `chromium`)
driven by Playwright for Python, a real hub (`graphmind_server.testing.HubProcess`), and an
in-memory stand-in for the hub's read API where a test needs exact frames."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the _helpers beside this file

CHROMIUM = os.environ.get("GRAPHMIND_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Playwright's sync API leaves an event loop marked running in the main thread while the
    # session-scoped browser lives; every asyncio.run() or async test after it would fail. So the
    # browser tests run last.
    items.sort(key=lambda item: "browser" in item.keywords)
    if Path(CHROMIUM).exists():
        return
    missing = f"{CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) to run the browser tests"
    if os.environ.get("CI") == "true":
        return  # under CI a missing browser fails each browser test (the browser fixture says why)
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=missing))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call":
        item.rep_call = rep  # type: ignore[attr-defined]


@pytest.fixture(scope="session", autouse=True)
def _expect_timeout() -> None:
    # The machine is shared: a loaded CPU can stretch the app → hub → page path past 5 s.
    from playwright.sync_api import expect

    expect.set_options(timeout=10_000)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():  # only reached under CI=true (else these tests are skipped)
        pytest.fail(
            f"CI=true and {CHROMIUM} is missing: the browser tests must run in CI (apt-get install -y chromium)"
        )

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class PageProblems:
    """Everything a page did wrong: uncaught errors, console errors, 4xx/5xx, foreign hosts."""

    def __init__(self) -> None:
        self.items: list[str] = []


@pytest.fixture
def make_page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """`make_page(base_url)` → a fresh page (own context, 1600×900) that fails the test on page
    errors, console errors, HTTP errors or any request to a host other than the hub."""
    contexts: list[Any] = []
    problems = PageProblems()

    def make(base_url: str, *, allow_console_errors: bool = False) -> Any:
        host = urlparse(base_url).netloc
        ctx = browser.new_context(viewport={"width": 1600, "height": 900})
        contexts.append(ctx)
        page = ctx.new_page()

        def on_console(msg: Any) -> None:
            if msg.type == "error" and not allow_console_errors:
                problems.items.append(f"console error: {msg.text}")

        def on_response(res: Any) -> None:
            # API errors are answers the page shows; a missing file (favicon, module) is a bug.
            if res.status >= 400 and not res.url.startswith(f"{base_url}/api/"):
                problems.items.append(f"HTTP {res.status} {res.url}")

        page.on("pageerror", lambda e: problems.items.append(f"page error: {e}"))
        page.on("console", on_console)
        page.on("response", on_response)

        def only_the_hub(route: Any) -> None:
            netloc = urlparse(route.request.url).netloc
            if netloc and netloc != host:
                problems.items.append(f"request to another host: {route.request.url}")
                route.abort()
            else:
                route.continue_()

        page.route("**/*", only_the_hub)
        page.set_default_timeout(10_000)
        return page

    yield make
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        for ctx in contexts:
            for page in ctx.pages:
                with contextlib.suppress(Exception):
                    state = page.evaluate("""() => { const s = window.graphmindViewer.store; return JSON.stringify({
                        conn: s.conn, runId: s.runId, runs: [...s.runs.values()].map(r => [r.name, r.status, r.heldCount]),
                        gates: s.gates.map(g => [g.gateId, g.nodeId, g.gate, g.reason]), debug: s.debug}); }""")
                    print(f"page state at failure ({page.url}): {state}")
    for ctx in contexts:
        ctx.close()
    assert not problems.items, "\n".join(problems.items)


@pytest.fixture
def stub_hub() -> Iterator[Any]:
    from _stub_hub import StubHub

    hub = StubHub().start()
    try:
        yield hub
    finally:
        hub.stop()


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Any]:
    """The real hub in a subprocess, on an ephemeral port, with its own database."""
    from graphmind_server.testing import HubProcess

    with HubProcess(tmp_path / "hub.db") as h:
        yield h


@pytest.fixture
def shoot(tmp_path: Path) -> Any:
    """`shoot(page, "name")` saves a screenshot to $GRAPHMIND_TEST_SHOTS (to look at), else tmp_path."""
    where = Path(os.environ.get("GRAPHMIND_TEST_SHOTS") or tmp_path)
    where.mkdir(parents=True, exist_ok=True)

    def take(page: Any, name: str) -> Path:
        path = where / f"{name}.png"
        page.screenshot(path=str(path))
        return path

    return take
