"""`/api/proposals` on the hub with a fake app (docs/api.md, "Proposals"): the checks before a
proposal is kept, a proposal lapsing when its gate is answered otherwise, and a hub restart."""

from __future__ import annotations

from typing import Any


def _held(thub: Any) -> tuple[Any, dict[str, Any]]:
    app = thub.app()
    app.run_started("r1", "refund")
    app.node_started("r1", "tool:issue_refund", "c1", {"order_id": "A1", "amount": 40})
    app.hold("r1", "tool:issue_refund", "c1", input={"order_id": "A1", "amount": 40})
    [gate] = thub.wait_for(lambda: thub.gates(), what="the hold")
    return app, gate


def test_a_proposal_is_checked_before_it_is_kept(thub: Any) -> None:
    _, gate = _held(thub)
    post = lambda body: thub.api("POST", "/api/proposals", body)  # noqa: E731
    assert post({"gateId": "nope", "action": "retry", "why": "x"})[0] == 404
    assert post({"gateId": gate["gateId"], "action": "abort", "why": "x"})[0] == 400  # not a proposal
    assert post({"gateId": gate["gateId"], "action": "continue", "why": " "})[0] == 400
    assert post({"gateId": gate["gateId"], "action": "inject", "why": "x"})[0] == 400  # no value
    status, body = post({"gateId": gate["gateId"], "action": "retry", "why": "x"})
    assert status == 422 and "does not take 'retry'" in body["error"]  # a before gate
    status, body = post({"gateId": gate["gateId"], "action": "inject", "value": "__REDACTED__", "why": "x"})
    assert status == 422 and "__REDACTED__" in body["error"]
    status, body = post({"gateId": gate["gateId"], "action": "edit", "value": {"amount": 1}, "why": "x"})
    assert status == 422 and "cannot be edited" in body["error"]  # the app did not say editable
    assert thub.api("GET", "/api/proposals")[1]["proposals"] == []
    assert thub.api("GET", "/api/proposals?status=maybe")[0] == 400


def test_a_pending_proposal_lapses_when_its_gate_is_answered_otherwise(thub: Any) -> None:
    app, gate = _held(thub)
    status, body = thub.api(
        "POST", "/api/proposals", {"gateId": gate["gateId"], "action": "continue", "why": "Looks right."}
    )
    assert status == 200 and body["proposal"]["answer"] == {"action": "continue"}
    [card] = thub.gates()
    assert [p["id"] for p in card["proposals"]] == [body["proposal"]["id"]]
    app.resume(next(iter(app.held.values())), "abort")  # answered in the app itself
    thub.wait_for(lambda: not thub.gates(), what="the release")
    lapsed = thub.wait_for(
        lambda: [
            p for p in thub.api("GET", "/api/proposals?runId=r1")[1]["proposals"] if p["status"] == "lapsed"
        ],
        what="the lapse",
    )
    assert lapsed[0]["id"] == body["proposal"]["id"]
    assert thub.api("POST", f"/api/proposals/{body['proposal']['id']}/accept", {})[0] == 404
    status, ledger = thub.api("GET", "/api/runs/r1/effects")
    assert status == 200 and [(p["action"], p["status"]) for p in ledger["proposals"]] == [
        ("continue", "lapsed")
    ]
