"""The team run on the real hub process: what the hub stores and serves about its agents
(docs/api.md: the run's `agents`, the runs list's and search's `agent=`)."""

from __future__ import annotations

from typing import Any

from test_team import REFUNDED, Team

import graphmind
from graphmind_server.testing import HubProcess, wait_for


async def _team_run(hub_process: HubProcess) -> tuple[str, Any]:
    client = graphmind.Client(app="team", url=hub_process.ingest_url, retry_interval=0.2)
    assert client.ready(5)
    team = Team()
    thing = team.instrument(team.make(), client)
    try:
        result = await team.acall_team(thing)
    finally:
        team.undo(thing)
        client.dispose()
    assert result.final_output == REFUNDED

    def finished() -> str | None:
        status, body = hub_process.api("GET", "/api/runs?app=team")
        runs = [r for r in body["runs"] if r["status"] == "finished"] if status == 200 else []
        return runs[0]["id"] if runs else None

    run_id = wait_for(finished, what="the team run to finish")
    status, run = hub_process.api("GET", f"/api/runs/{run_id}")
    assert status == 200
    return run_id, run


async def test_the_hub_serves_each_agents_share_and_filters_by_agent(hub_process: HubProcess) -> None:
    run_id, run = await _team_run(hub_process)
    agents = {a["agent"]: a for a in run["agents"]}
    assert list(agents) == ["triage", "billing"]
    assert agents["billing"]["agentPath"] == ["triage", "billing"]
    assert (agents["triage"]["steps"], agents["billing"]["steps"]) == (1, 2)
    assert agents["billing"]["calls"] == 3  # two model steps and the refund tool
    assert agents["triage"]["calls"] == 2  # its model step and the handoff
    assert all(a["status"] == "ok" for a in agents.values())
    assert agents["billing"]["usage"]["totalTokens"] > 0 and agents["billing"]["durationMs"] is not None
    assert {n["nodeId"] for n in run["nodes"]} >= {
        "llm:step",
        "llm:step@billing",
        "handoff:triage->billing",
        "tool:refund",
    }

    _, listed = hub_process.api("GET", "/api/runs?agent=billing")
    assert [r["id"] for r in listed["runs"]] == [run_id]
    _, none = hub_process.api("GET", "/api/runs?agent=nobody")
    assert none["runs"] == []
    _, hits = hub_process.api("GET", f"/api/search?q=refunded&run={run_id}&agent=billing")
    assert hits["hits"] and {h["nodeId"] for h in hits["hits"]} <= {"tool:refund", "llm:step@billing"}
    _, triage_hits = hub_process.api("GET", f"/api/search?q=refunded&run={run_id}&agent=triage")
    assert triage_hits["hits"] == []
