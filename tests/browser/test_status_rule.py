"""One status rule, seen from the page: every case of tests/fixtures/status-golden.json (an ended, an
errored, an aborted, a held, an abandoned, a retried and an injected run, node ids without a colon,
parallel executions), sent by a frame-level app to the real hub, shows the same run status and the
same kind, name and status for every node in GET /api/runs/{id} and in the viewer's graph: folded
live as the events arrive, and again folded from the stored events after a reload. The hub's side
of the same file: packages/graphmind-server/tests/test_status_rule.py."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import expect

from graphmind_server.testing import FakeApp, HubProcess, wait_for

pytestmark = pytest.mark.browser

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "status-golden.json"
CASES = json.loads(FIXTURE.read_text())["cases"]
GRACE_MS = 300  # the abandoned case's app goes away; the hub marks its run abandoned after this

# What the graph shows for each node (the words a person reads), as {nodeId: {kind, name, status}}.
SHOWN = """() => Object.fromEntries([...document.querySelectorAll('.gnode')].map((el) => [el.dataset.nodeId,
  {kind: el.querySelector('.g-kind').textContent, name: el.querySelector('.g-name').textContent,
   status: el.querySelector('.g-state').textContent}]))"""


@pytest.fixture
def status_hub(tmp_path: Path) -> Iterator[HubProcess]:
    with HubProcess(tmp_path / "hub.db", env={"GRAPHMIND_ABANDON_GRACE_MS": str(GRACE_MS)}) as h:
        yield h


def events_of(case: dict[str, Any]) -> list[dict[str, Any]]:
    text = json.dumps(case["events"]).replace('"$run"', json.dumps(case["runId"]))
    return json.loads(text)  # type: ignore[no-any-return]


def send(app: FakeApp, run_id: str, events: list[dict[str, Any]]) -> None:
    for ev in events:
        app.event(ev["type"], run_id, **{k: v for k, v in ev.items() if k != "type"})


def hub_view(hub: HubProcess, run_id: str) -> tuple[str, dict[str, dict[str, Any]]]:
    status, run = hub.api("GET", f"/api/runs/{run_id}")
    assert status == 200, run
    return run["status"], {n["nodeId"]: {k: n[k] for k in ("kind", "name", "status")} for n in run["nodes"]}


def page_view(page: Any, want: dict[str, Any], how: str) -> dict[str, Any]:
    """The graph's nodes once they match `want` (the page redraws once per frame), else as they are.
    The page's nodes come in the graph's order, `want` in sorted order: compared sorted, or every
    wait would run out its 10 s and only the assertion below would pass."""
    try:
        page.wait_for_function(
            f"(want) => {{ const sorted = (o) => Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))); return JSON.stringify(sorted(({SHOWN})())) === JSON.stringify(want); }}",
            arg=want,
        )
    except PlaywrightError:
        pass  # the assertion below says what differs
    shown = page.evaluate(SHOWN)
    assert shown == want, f"{how}: the viewer shows {shown}"
    return shown  # type: ignore[no-any-return]


def in_fixture_order(case: dict[str, Any], nodes: dict[str, Any]) -> dict[str, Any]:
    """Node maps compare as dicts; JSON.stringify compares in key order, so sort both alike."""
    return {k: nodes[k] for k in sorted(nodes)}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_the_hub_and_the_viewer_show_the_same_statuses(
    status_hub: HubProcess, make_page: Any, case: dict[str, Any]
) -> None:
    run_id, events = case["runId"], events_of(case)
    want = in_fixture_order(case, case["nodes"])
    app = FakeApp(status_hub.ingest_url, app="status-golden")
    try:
        send(app, run_id, events[:1])
        wait_for(lambda: status_hub.api("GET", f"/api/runs/{run_id}")[0] == 200, 10, "the run")
        page = make_page(status_hub.url)
        page.goto(f"{status_hub.url}/#/run/{run_id}")
        page.wait_for_selector("body[data-run-loaded=true]")

        # Live: the page folds each event as the hub sends it.
        send(app, run_id, events[1:])
        if case.get("abandon"):
            app.drop()
        page.wait_for_function("(n) => window.graphmindViewer.store.model?.eventCount === n", arg=len(events))

        def settled() -> bool:
            status, run = status_hub.api("GET", f"/api/runs/{run_id}")
            return status == 200 and run["eventCount"] == len(events) and run["status"] == case["run"]

        wait_for(settled, 10, f"the hub to store {len(events)} events and say {case['run']}")
        run_status, nodes = hub_view(status_hub, run_id)
        assert (run_status, in_fixture_order(case, nodes)) == (case["run"], want), "GET /api/runs/{id}"
        page_view(page, want, "folded live")
        expect(page.locator(".run-head .status")).to_have_text(case["run"])

        # Stored: a fresh page draws the hub's summary, then folds the stored events.
        page.reload()
        page.wait_for_selector("body[data-run-loaded=true]")
        page_view(page, want, "folded from the stored events")
        expect(page.locator(".run-head .status")).to_have_text(case["run"])
    finally:
        app.close()


def test_a_run_abandoned_while_its_events_load_shows_it_from_the_summary_on(
    status_hub: HubProcess, make_page: Any
) -> None:
    # The page draws the hub's node summary first and folds the events behind it; the run's status
    # the hub sends meanwhile (a `run` frame) changes what the summary shows too.
    case = next(c for c in CASES if c.get("abandon"))
    run_id, events = case["runId"], events_of(case)
    want = in_fixture_order(case, case["nodes"])
    app = FakeApp(status_hub.ingest_url, app="status-golden")
    try:
        send(app, run_id, events)
        wait_for(
            lambda: status_hub.api("GET", f"/api/runs/{run_id}")[1].get("eventCount") == len(events),
            10,
            "stored",
        )
        before = in_fixture_order(case, hub_view(status_hub, run_id)[1])
        assert before != want  # still running: nothing shows abandoned yet
        page = make_page(status_hub.url)
        pages: list[Any] = []
        pattern = f"**/api/runs/{run_id}/events*"

        def hold(route: Any) -> None:  # the events wait until the run is abandoned
            pages.append(route)

        page.route(pattern, hold)
        page.goto(f"{status_hub.url}/#/run/{run_id}")
        page.wait_for_selector("body[data-graph-drawn=true]")
        page_view(page, before, "the summary")
        app.drop()
        wait_for(lambda: hub_view(status_hub, run_id)[0] == "abandoned", 10, "the run abandoned")
        assert in_fixture_order(case, hub_view(status_hub, run_id)[1]) == want
        page_view(page, want, "the summary, once the run is abandoned")
        page.unroute(pattern, hold)
        for route in pages:
            route.continue_()
        page.wait_for_selector("body[data-run-loaded=true]")
        page_view(page, want, "folded from the stored events")
    finally:
        app.close()
