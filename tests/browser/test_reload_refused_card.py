"""The card of a gate whose reload a hub without a token refuses (docs/security.md, "Reload"):
no reload button, no "reload the code first" box, and one line saying why and what to change."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from graphmind_server.testing import FakeApp

pytestmark = pytest.mark.browser


@pytest.fixture
def app(hub: Any) -> Iterator[FakeApp]:
    with FakeApp(hub.ingest_url, auto_resume=True) as fake:
        yield fake


def test_a_refused_reload_says_why_on_the_card(hub: Any, app: FakeApp, make_page: Any) -> None:
    app.run_started("r1", name="no-token")
    app.node_started("r1", "tool:search", "c1", input={"q": "porto"})
    app.hold(
        "r1",
        "tool:search",
        "c1",
        input={"q": "porto"},
        gate="error",
        reason="error",
        error={"name": "NameError", "message": "name 'x' is not defined"},
        editable=True,
        reloadable=True,
    )
    page = make_page(hub.url)
    page.goto(hub.url)
    card = page.locator(".gate-card")
    # folded to one line (it is on every tool's card of a hub without a token); the reason a click away
    folded = card.locator(".gate-not-reloadable")
    expect(folded.locator("summary")).to_have_text("Reload code: off on a hub without a token")
    expect(folded.locator("span")).not_to_be_visible()
    folded.locator("summary").click()
    expect(card.locator(".gate-not-reloadable")).to_contain_text("Reload refused: this hub has no token")
    expect(card.locator(".gate-not-reloadable")).to_contain_text("GRAPHMIND_ALLOW_RELOAD=1")
    expect(card.get_by_role("button", name="Reload code and retry")).to_have_count(0)
    card.get_by_role("button", name="Retry with…").click()
    expect(card.locator(".answer-reload")).to_have_count(0)
