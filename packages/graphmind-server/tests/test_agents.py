"""Teams of agents in the hub (docs/protocol.md, "Agents"; docs/api.md): each agent's share of a
run, the status rule over a group, `agent=` filters, compare aligned by agent, pause on handoff."""

from __future__ import annotations

from typing import Any

from graphmind_server.cli import main


def _team(app: Any, run_id: str, refund_output: str, *, hold: bool = False) -> None:
    app.run_started(run_id, name="triage")
    a = {"agent": "triage", "agentPath": ["triage"]}
    b = {"agent": "billing", "agentPath": ["triage", "billing"]}
    usage = {"inputTokens": 100, "outputTokens": 20}
    app.node_started(run_id, "llm:step", f"{run_id}-1", input={"m": 1}, attrs={"model": "gpt-4o-mini"}, **a)
    app.node_finished(run_id, "llm:step", f"{run_id}-1", output={"text": "go"}, usage=usage)
    app.node_started(run_id, "tool:lookup", f"{run_id}-2", input={"q": "order"}, **a)  # a tool both call
    app.node_finished(run_id, "tool:lookup", f"{run_id}-2", output="order 7")
    app.node_started(run_id, "handoff:triage->billing", f"{run_id}-3", input={"input": []}, **a)
    app.node_finished(run_id, "handoff:triage->billing", f"{run_id}-3", output={"input": []})
    app.node_started(
        run_id, "llm:step@billing", f"{run_id}-4", input={"m": 2}, attrs={"model": "gpt-4o-mini"}, **b
    )
    app.node_finished(run_id, "llm:step@billing", f"{run_id}-4", output={"text": "ok"}, usage=usage)
    app.node_started(run_id, "tool:lookup", f"{run_id}-5", input={"q": "refund"}, **b)
    if hold:
        app.hold(run_id, "tool:lookup", f"{run_id}-5")
        return
    app.node_finished(run_id, "tool:lookup", f"{run_id}-5", output=refund_output)
    app.run_finished(run_id)


def test_a_run_reports_each_agents_share_and_status(thub: Any) -> None:
    app = thub.app(app="team")
    _team(app, "r1", "refunded")
    _team(app, "r2", "refunded", hold=True)
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r1")[1].get("status") == "finished", what="r1")
    run = thub.api("GET", "/api/runs/r1")[1]
    agents = {a["agent"]: a for a in run["agents"]}
    assert list(agents) == ["triage", "billing"]
    assert agents["billing"]["agentPath"] == ["triage", "billing"]
    assert (agents["triage"]["calls"], agents["billing"]["calls"]) == (3, 2)
    assert agents["triage"]["usage"]["totalTokens"] == agents["billing"]["usage"]["totalTokens"] == 120
    assert agents["billing"]["usage"]["costUsd"] is not None  # priced from the table
    assert {a["status"] for a in agents.values()} == {"ok"}
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r2")[1].get("agents"), what="r2's agents")
    held = {a["agent"]: a["status"] for a in thub.api("GET", "/api/runs/r2")[1]["agents"]}
    assert held == {"triage": "ok", "billing": "held"}  # the node rule over the group
    # A run of no agent says nothing about agents.
    app.run_started("solo")
    app.node_started("solo", "llm:step", "solo-1")
    app.run_finished("solo")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/solo")[1].get("status") == "finished", what="solo")
    assert "agents" not in thub.api("GET", "/api/runs/solo")[1]


def test_runs_and_search_filter_by_agent(thub: Any) -> None:
    app = thub.app(app="team")
    _team(app, "r1", "refunded")
    app.run_started("solo")
    app.node_started("solo", "tool:lookup", "solo-1", input={"q": "refund"})
    app.run_finished("solo")
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs")[1]["runs"]) == 2, what="2 runs")
    assert [r["id"] for r in thub.api("GET", "/api/runs?agent=billing")[1]["runs"]] == ["r1"]
    assert thub.api("GET", "/api/runs?agent=nobody")[1]["runs"] == []
    hits = thub.api("GET", "/api/search?q=refund&agent=billing")[1]["hits"]
    assert [(h["runId"], h["instanceId"]) for h in hits] == [("r1", "r1-5")]
    everyone = thub.api("GET", "/api/search?q=refund")[1]["hits"]
    assert {h["runId"] for h in everyone} == {"r1", "solo"}


def test_compare_aligns_a_shared_tool_by_agent(thub: Any, capsys: Any) -> None:
    app = thub.app(app="team")
    _team(app, "a1", "refunded")
    _team(app, "b1", "declined")
    thub.wait_for(
        lambda: all(thub.api("GET", f"/api/runs/{r}")[1].get("status") == "finished" for r in ("a1", "b1")),
        what="2 runs",
    )
    body = thub.api("GET", "/api/compare?a=a1&b=b1")[1]
    rows = [(s["nodeId"], s.get("agent"), s["status"]) for s in body["steps"]]
    assert rows == [
        ("llm:step", "triage", "equal"),
        ("tool:lookup", "triage", "equal"),
        ("handoff:triage->billing", "triage", "equal"),
        ("llm:step@billing", "billing", "equal"),
        ("tool:lookup", "billing", "changed"),
    ]
    assert main(["diff", "a1", "b1", "--db", str(thub.db)]) == 1
    out = capsys.readouterr().out
    assert "= tool:lookup #1 (triage)" in out and "~ tool:lookup #1 (billing)  output differ" in out


def test_pause_on_handoff_is_part_of_the_debug_state(thub: Any) -> None:
    status, body = thub.api("PUT", "/api/debug", {"pauseOnHandoff": "on"})
    assert status == 200 and body["pauseOnHandoff"] == "on"
    assert thub.api("GET", "/api/debug")[1]["pauseOnHandoff"] == "on"
    status, body = thub.api("PUT", "/api/debug", {"pauseOnHandoff": "maybe"})
    assert status == 400 and "pauseOnHandoff must be 'on' or 'off'" in str(body)
    status, body = thub.api("PUT", "/api/debug", {"breakpoints": [{"nodeId": "handoff:*", "gate": "before"}]})
    assert status == 200
