"""A live app cannot take a clientId that is not its own: the hub's `otlp` (the runs that come in
over OTLP, with the hub's own seqs) or the import namespace. Before, an app whose `clientId` was
`"otlp"` made the hub drop OTLP spans silently: `POST /v1/traces` answered 200 "10 accepted" and
stored none (the app's seqs were taken for the spans' duplicates)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

from graphmind_server.export.namespace import HUB_CLIENTS
from graphmind_server.otlp.route import CLIENT_ID as OTLP_CLIENT
from graphmind_server.testing import FakeApp, HubProcess, wait_for

from .conftest import figure

TRACE = "5b8efff798038103d269b633813fc60c"
SPANS = 10


def _span(n: int) -> dict[str, Any]:
    start = 1_767_225_600_000_000_000 + n * 1_000_000
    return {
        "traceId": TRACE,
        "spanId": f"{n + 1:016x}",
        "name": f"step-{n}",
        "kind": 1,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 500_000),
        "attributes": [{"key": "openinference.span.kind", "value": {"stringValue": "TOOL"}}],
        "status": {"code": 1},
    }


def _post_spans(hub: HubProcess) -> tuple[int, Any]:
    body = {
        "resourceSpans": [
            {
                "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "shop"}}]},
                "scopeSpans": [{"scope": {"name": "hand.built"}, "spans": [_span(n) for n in range(SPANS)]}],
            }
        ]
    }
    request = urllib.request.Request(
        hub.url + "/v1/traces",
        data=json.dumps(body).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.read()


def test_an_app_whose_client_id_is_otlp_does_not_drop_otlp_spans(hub: HubProcess) -> None:
    assert OTLP_CLIENT in HUB_CLIENTS  # the name ingest keeps apps off is the one OTLP runs use
    app = FakeApp(hub.ingest_url, app="squatting-otlp", client_id="otlp")
    try:
        app.run_started("app-run")
        for n in range(50):  # seqs 2..101: over every seq the spans will get
            app.node_started("app-run", "tool:t", f"i{n}", input=n)
        app.run_finished("app-run")
        wait_for(
            lambda: hub.api("GET", "/api/runs/app-run")[1].get("status") == "finished", 10, "the app's run"
        )
        status, _ = _post_spans(hub)
        assert status == 200
        otlp_run = wait_for(
            lambda: hub.api("GET", f"/api/runs/otlp-{TRACE}")[1].get("eventCount"), 15, "the OTLP run stored"
        )
        app_run = hub.api("GET", "/api/runs/app-run")[1]
    finally:
        app.close()
    # The app's run keeps its own events, under its clientId moved out of the hub's.
    figure("OTLP spans stored beside an app whose clientId is otlp", f"{otlp_run} of {2 + 2 * SPANS} events")
    assert otlp_run == 2 + 2 * SPANS  # run.started and .finished, a node.started and .finished per span
    assert app_run["clientId"] == "app:otlp" and app_run["eventCount"] == 52
    run = hub.api("GET", f"/api/runs/otlp-{TRACE}")[1]
    assert run["clientId"] == OTLP_CLIENT
