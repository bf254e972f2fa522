"""Reading a run back as a graph, and posting OTLP bodies, for the /v1/traces tests."""

from __future__ import annotations

import gzip
import json
import urllib.error
import urllib.request
from typing import Any

from graphmind_server.testing import HubProcess, wait_for


def post(
    hub: HubProcess,
    body: bytes,
    content_type: str = "application/x-protobuf",
    headers: dict[str, str] | None = None,
    gzipped: bool = False,
) -> tuple[int, bytes, dict[str, str]]:
    if gzipped:
        body = gzip.compress(body)
    request = urllib.request.Request(
        hub.url + "/v1/traces",
        data=body,
        method="POST",
        headers={
            "Content-Type": content_type,
            **({"Content-Encoding": "gzip"} if gzipped else {}),
            **(headers or {}),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


def events(hub: HubProcess, run_id: str) -> list[dict[str, Any]]:
    status, body = hub.api("GET", f"/api/runs/{run_id}/events?limit=5000")
    assert status == 200, body
    return list(body["events"])


def graph(hub: HubProcess, run_id: str) -> dict[str, Any]:
    """The run as names, kinds, parentage (by node id), inputs, outputs, tokens: what must survive."""
    evs = events(hub, run_id)
    node_of: dict[str, str] = {}
    run: dict[str, Any] = {}
    for ev in evs:
        if ev["type"] == "run.started":
            node_of[ev.get("instanceId") or run_id] = ev["nodeId"]
            run.update(name=ev["name"], agent=ev["nodeId"])
        elif ev["type"] == "node.started":
            node_of[ev["instanceId"]] = ev["nodeId"]
        elif ev["type"] == "run.finished":
            run["status"] = ev["status"]
    nodes: dict[str, dict[str, Any]] = {}
    for ev in evs:
        if ev["type"] == "node.started":
            nodes[ev["instanceId"]] = {
                "nodeId": ev["nodeId"],
                "kind": ev["kind"],
                "name": ev["name"],
                "parent": node_of.get(ev.get("parentInstanceId") or "", "<missing>"),
                "input": ev.get("input"),
            }
        elif ev["type"] in ("node.finished", "node.error"):
            node = nodes[ev["instanceId"]]
            node["output"] = ev.get("output")
            node["usage"] = ev.get("usage")
            node["error"] = (ev["error"]["name"], ev["error"]["message"]) if ev.get("error") else None
    run["nodes"] = sorted(nodes.values(), key=lambda n: json.dumps(n, sort_keys=True))
    return run


def only_run(hub: HubProcess, status: str | None = None) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        runs = hub.api("GET", "/api/runs")[1]["runs"]
        if len(runs) == 1 and (status is None or runs[0]["status"] == status):
            return dict(runs[0])
        return None

    return dict(wait_for(found, 15, f"one run ({status or 'any status'})"))


def health(hub: HubProcess) -> dict[str, Any]:
    return dict(hub.api("GET", "/api/health")[1]["otlpIngest"])
