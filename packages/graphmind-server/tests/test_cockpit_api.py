"""The cockpit's API (docs/api.md): search, the run list's filters, tokens and cost, compare, export,
and `graphmind diff` — against an in-process hub and frame-level fake apps."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from graphmind_server.cli import main
from graphmind_server.store import prices
from graphmind_server.store.schema import MIGRATIONS, migrate


def agent_run(
    app: Any,
    run_id: str,
    *,
    city: str = "lisbon",
    weather: str = "sunny",
    extra: bool = False,
    fail: bool = False,
    model: str = "gpt-4o-mini",
    cost: float | None = None,
) -> None:
    app.run_started(run_id, name=f"trip-{run_id}")
    usage: dict[str, Any] = {
        "inputTokens": 1000,
        "outputTokens": 200,
        "totalTokens": 1200,
        "cacheReadTokens": 400,
    }
    if cost is not None:
        usage["costUsd"] = cost
    app.node_started(
        run_id,
        "llm:step",
        f"{run_id}-s1",
        input={"messages": [{"role": "user", "content": "go"}]},
        attrs={"model": model},
    )
    app.node_finished(run_id, "llm:step", f"{run_id}-s1", output={"text": "", "toolCalls": 1}, usage=usage)
    app.node_started(run_id, "tool:search", f"{run_id}-t1", input={"city": city})
    app.node_finished(run_id, "tool:search", f"{run_id}-t1", output={"hits": 3})
    if extra:
        app.node_started(run_id, "tool:extra", f"{run_id}-t9", input={})
        app.node_finished(run_id, "tool:extra", f"{run_id}-t9", output=1)
    app.node_started(run_id, "tool:weather", f"{run_id}-t2", input={"city": city})
    if fail:
        app.event(
            "node.error",
            run_id,
            nodeId="tool:weather",
            instanceId=f"{run_id}-t2",
            error={"name": "E", "message": "down"},
            durationMs=1.0,
        )
    else:
        app.node_finished(run_id, "tool:weather", f"{run_id}-t2", output={"sky": weather})
    app.run_finished(run_id, status="error" if fail else "finished")


def test_search_finds_a_tool_argument_and_filters_narrow_the_list(thub: Any) -> None:
    app = thub.app(app="trips")
    agent_run(app, "r1", city="lisbon")
    agent_run(app, "r2", city="porto-azul", fail=True)
    agent_run(app, "r3", city="faro")
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs")[1]["runs"]) == 3, what="3 runs")
    ids = lambda q: [r["id"] for r in thub.api("GET", f"/api/runs?{q}")[1]["runs"]]  # noqa: E731
    assert ids("q=porto-azul") == ["r2"]
    assert ids("q=PORTO") == ["r2"]  # any case; words, not substrings
    assert ids("q=faro%20sunny") == ["r3"]  # every word must appear
    assert ids('q="unbalanced') == []  # taken literally: never an FTS syntax error
    assert ids("error=1") == ["r2"]
    assert ids("tool=weather&status=finished") == ["r3", "r1"]
    assert ids("tool=nope") == []
    assert ids("model=gpt-4o-mini&kind=llm") == ["r3", "r2", "r1"]
    status, body = thub.api("GET", "/api/runs?error=maybe")
    assert status == 400 and "error must be 1 or 0" in body["error"]
    status, body = thub.api("GET", "/api/search?q=porto-azul")
    assert status == 200
    assert {(h["runId"], h["nodeId"]) for h in body["hits"]} == {
        ("r2", "tool:search"),
        ("r2", "tool:weather"),
    }
    assert "«porto-azul»" in body["hits"][0]["snippet"]
    status, body = thub.api("GET", "/api/search?q=lisbon&run=r3")
    assert body["hits"] == []
    assert thub.api("GET", "/api/search?q=%20")[0] == 400
    # A deleted run leaves nothing in the index.
    assert thub.api("DELETE", "/api/runs/r2")[0] == 200
    assert thub.api("GET", "/api/search?q=porto")[1]["hits"] == []


def test_a_redacted_value_is_indexed_as_the_placeholder_only(thub: Any) -> None:
    app = thub.app(app="secrets")
    app.run_started("s1")
    # What an app sends after core's redaction pass: the secret never leaves it.
    app.node_started(
        "s1",
        "tool:login",
        "i1",
        input={"user": "ana", "password": "__REDACTED__"},
        redaction={"keys": ["password"]},
    )
    app.node_finished("s1", "tool:login", "i1", output={"ok": True})
    thub.wait_for(lambda: thub.api("GET", "/api/search?q=ana")[1]["hits"], what="indexed")
    hits = thub.api("GET", "/api/search?q=REDACTED")[1]["hits"]
    assert [h["nodeId"] for h in hits] == ["tool:login"]


def test_tokens_and_cost_per_run_reported_or_priced(thub: Any) -> None:
    app = thub.app(app="cost")
    agent_run(app, "p1", model="gpt-4o-mini")  # priced from the table
    agent_run(app, "p2", model="openai/gpt-4o-mini", cost=0.0123)  # LiteLLM reported it
    agent_run(app, "p3", model="my-own-model")
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs")[1]["runs"]) == 3, what="3 runs")
    runs = {r["id"]: r for r in thub.api("GET", "/api/runs")[1]["runs"]}
    u1 = runs["p1"]["usage"]
    assert (u1["inputTokens"], u1["outputTokens"], u1["cachedTokens"], u1["totalTokens"]) == (
        1000,
        200,
        400,
        1200,
    )
    assert u1["costSource"] == "price table"
    assert abs(u1["costUsd"] - (600 * 0.15 + 400 * 0.075 + 200 * 0.6) / 1e6) < 1e-12
    assert runs["p2"]["usage"]["costUsd"] == 0.0123 and runs["p2"]["usage"]["costSource"] == "reported"
    assert runs["p3"]["usage"]["costUsd"] is None and runs["p3"]["usage"]["unpricedModels"] is True
    assert runs["p1"]["heldMs"] == 0


def test_a_model_step_is_priced_by_the_one_rule_for_where_its_model_is_named(thub: Any) -> None:
    """attrs.model, else (a model step) input.model, else output.model (docs/protocol.md)."""
    app = thub.app(app="model-rule")
    usage = {"inputTokens": 1000, "outputTokens": 100}
    steps: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
        "attrs": ({"model": "gpt-4o-mini"}, {"model": "gpt-4o", "messages": []}, {"model": "gpt-4.1"}),
        "input": ({"framework": "x"}, {"model": "gpt-4o", "messages": []}, {"model": "gpt-4.1"}),
        "output": ({}, {"messages": []}, {"model": "gpt-4.1", "text": "hi"}),
    }
    for run_id, (attrs, node_input, output) in steps.items():
        app.run_started(run_id)
        app.node_started(run_id, "llm:step", f"{run_id}-1", input=node_input, attrs=attrs)
        app.node_finished(run_id, "llm:step", f"{run_id}-1", output=output, usage=usage)
        app.run_finished(run_id)
    # a tool's argument named "model" names no model: its tokens stay unpriced
    app.run_started("tool")
    app.node_started("tool", "tool:pick", "tool-1", input={"model": "gpt-4o"})
    app.node_finished("tool", "tool:pick", "tool-1", output={}, usage=usage)
    app.run_finished("tool")
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs")[1]["runs"]) == 4, what="4 runs")
    runs = {r["id"]: r["usage"] for r in thub.api("GET", "/api/runs")[1]["runs"]}
    assert {k: list(runs[k]["models"]) for k in runs} == {
        "attrs": ["gpt-4o-mini"],
        "input": ["gpt-4o"],
        "output": ["gpt-4.1"],
        "tool": ["unknown"],
    }
    for run_id in steps:
        assert runs[run_id]["costUsd"] > 0 and runs[run_id]["costSource"] == "price table", run_id
    assert runs["tool"]["costUsd"] is None and runs["tool"]["unpricedModels"] is True
    facets = thub.api("GET", "/api/runs?model=gpt-4o")[1]["runs"]
    assert [r["id"] for r in facets] == ["input"]
    # compare's per-step cost reads the model by the same rule
    step = thub.api("GET", "/api/compare?a=input&b=output")[1]["steps"][0]
    assert (step["a"]["model"], step["b"]["model"]) == ("gpt-4o", "gpt-4.1")
    assert step["a"]["costUsd"] > 0 and step["b"]["costUsd"] > 0


def test_a_price_file_overrides_the_shipped_table(tmp_path: Path, monkeypatch: Any) -> None:
    own = tmp_path / "prices.json"
    own.write_text(json.dumps({"models": {"my-own-model": {"input": 1.0, "output": 2.0}}}))
    monkeypatch.setenv(prices.ENV, str(own))
    assert prices.price("my-own-model-v2") == (1.0, 2.0, 1.0)
    assert prices.price("gpt-4o-2024-08-06") == (2.5, 10.0, 1.25)  # the longest matching row
    assert prices.price("gpt-4o-mini-2024-07-18")[0] == 0.15
    own.write_text("{")
    prices.table.cache_clear()
    try:
        prices.check_env()
    except prices.PriceTableError as exc:
        assert "not JSON" in str(exc)
    else:
        raise AssertionError("a broken price file must stop the hub")
    finally:
        prices.table.cache_clear()


def test_compare_aligns_an_inserted_step_and_marks_the_changed_one(
    thub: Any, tmp_path: Path, capsys: Any
) -> None:
    app = thub.app(app="cmp")
    agent_run(app, "a1", weather="sunny")
    agent_run(app, "b1", weather="rain", extra=True)
    agent_run(app, "c1", weather="sunny")
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs")[1]["runs"]) == 3, what="3 runs")
    status, body = thub.api("GET", "/api/compare?a=a1&b=b1")
    assert status == 200, body
    assert [(s["nodeId"], s["status"]) for s in body["steps"]] == [
        ("llm:step", "equal"),
        ("tool:search", "equal"),
        ("tool:extra", "added"),
        ("tool:weather", "changed"),
    ]
    assert body["steps"][3]["changed"] == ["output"] and body["same"] is False
    assert body["counts"] == {"equal": 2, "changed": 1, "added": 1, "removed": 0}
    assert thub.api("GET", "/api/compare?a=a1&b=c1")[1]["same"] is True
    assert thub.api("GET", "/api/compare?a=a1&b=nope")[0] == 404
    assert thub.api("GET", "/api/compare?a=a1")[0] == 400
    # graphmind diff reads the same database read-only.
    db = str(thub.db)
    assert main(["diff", "a1", "b1", "--db", db]) == 1
    out = capsys.readouterr().out
    assert "~ tool:weather #1  output differ" in out and '"rain"' in out and "+ tool:extra #1" in out
    assert main(["diff", "a1", "c1", "--db", db]) == 0
    assert "the runs match" in capsys.readouterr().out
    assert main(["diff", "a1", "zzz", "--db", db]) == 2


def _transcript_run(app: Any, run_id: str, word: str, request_id: str) -> None:
    """A model step whose 45-message transcript differs (between runs) only at one word of the
    40th message, 300 characters into it, and in a volatile request id."""
    filler = "lorem ipsum dolor sit amet " * 12
    messages = [{"role": "user", "content": f"{i}: {filler}"} for i in range(45)]
    messages[39]["content"] = f"{filler}the city is {word}; {filler}"
    app.run_started(run_id, name="transcript")
    app.node_started(run_id, "llm:step", f"{run_id}-1", input={"requestId": request_id, "messages": messages})
    app.node_finished(run_id, "llm:step", f"{run_id}-1", output={"text": "ok", "requestId": request_id})
    app.run_finished(run_id)


def test_diff_names_the_differing_path_and_shows_both_values_around_the_difference(
    thub: Any, capsys: Any
) -> None:
    app = thub.app(app="transcripts")
    _transcript_run(app, "t1", "Lisbon", "req-1")
    _transcript_run(app, "t2", "Porto", "req-2")
    thub.wait_for(
        lambda: all(thub.api("GET", f"/api/runs/{r}")[1].get("status") == "finished" for r in ("t1", "t2")),
        what="2 runs",
    )
    db = str(thub.db)
    assert main(["diff", "t1", "t2", "--db", db]) == 1
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert "~ llm:step #1  input, output differ" in lines
    where = lines.index("    at input.messages[39].content (first difference: character 337 of 668 / 667):")
    a, b = lines[where + 1], lines[where + 2]
    assert a.startswith('      A: "…') and "the city is Lisbon; lorem" in a
    assert b.startswith('      B: "…') and "the city is Porto; lorem" in b
    assert "    at input.requestId:" in lines and '      A: "req-1"' in lines
    assert "    at output.requestId:" in lines
    # the volatile id ignored: only the transcript's word differs, and the output is the same
    assert main(["diff", "t1", "t2", "--db", db, "--ignore-keys", "requestId, other"]) == 1
    out = capsys.readouterr().out
    assert "~ llm:step #1  input differ" in out and "requestId:" not in out
    assert "(keys ignored at every depth: other, requestId)" in out
    body = thub.api("GET", "/api/compare?a=t1&b=t2&ignore=requestId")[1]
    assert body["steps"][0]["changed"] == ["input"] and body["ignoredKeys"] == ["requestId"]


def test_export_from_the_page_in_record_and_otlp_format(thub: Any) -> None:
    app = thub.app(app="exp")
    agent_run(app, "e1", cost=0.5, model="x-model")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/e1")[1].get("status") == "finished", what="e1")
    status, text = thub.api("GET", "/api/runs/e1/export?format=jsonl")
    assert status == 200
    lines = [json.loads(x) for x in text.splitlines()]
    assert lines[1]["run"]["id"] == "e1" and len(lines) == 2 + 8
    status, doc = thub.api("GET", "/api/runs/e1/export?format=otlp")
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    llm = next(s for s in spans if s["name"] == "step")
    attrs = {a["key"]: a["value"] for a in llm["attributes"]}
    assert attrs["llm.token_count.prompt"] == {"intValue": "1000"}
    assert attrs["llm.token_count.prompt_details.cache_read"] == {"intValue": "400"}
    assert attrs["llm.cost.total"] == {"doubleValue": 0.5}
    # A cost the framework did not report is priced from the table, as the run list shows it.
    agent_run(app, "e2", model="gpt-4o")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/e2")[1].get("status") == "finished", what="e2")
    doc = thub.api("GET", "/api/runs/e2/export?format=otlp")[1]
    llm = next(s for s in doc["resourceSpans"][0]["scopeSpans"][0]["spans"] if s["name"] == "step")
    attrs = {a["key"]: a["value"] for a in llm["attributes"]}
    assert abs(attrs["llm.cost.total"]["doubleValue"] - (600 * 2.5 + 400 * 1.25 + 200 * 10) / 1e6) < 1e-12
    assert thub.api("GET", "/api/runs/nope/export")[0] == 404
    assert thub.api("GET", "/api/runs/e1/export?format=csv")[0] == 400


def test_migration_4_indexes_and_prices_runs_stored_before(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "old.db", isolation_level=None)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute("INSERT INTO schema_version VALUES (3)")
    for steps in MIGRATIONS[:3]:
        for statement in steps:
            conn.execute(statement)  # type: ignore[arg-type]
    conn.execute(
        "INSERT INTO runs (id, app, name, status, started_at, client_id) VALUES ('o1','a','n','finished',1,'c')"
    )
    conn.execute(
        "INSERT INTO nodes (run_id, node_id, kind, name, executions, status, position)"
        " VALUES ('o1','tool:search','tool','search',1,'ok',0)"
    )
    events = [
        {
            "type": "node.started",
            "nodeId": "llm:step",
            "instanceId": "s",
            "attrs": {"model": "gpt-4o"},
            "input": {},
        },
        {
            "type": "node.finished",
            "nodeId": "llm:step",
            "instanceId": "s",
            "usage": {"inputTokens": 10, "outputTokens": 5},
        },
        {"type": "node.started", "nodeId": "tool:search", "instanceId": "t", "input": {"city": "evora"}},
        # a model step that named its model in its input only (the rule's fallback, docs/protocol.md)
        {
            "type": "node.started",
            "nodeId": "llm:step",
            "instanceId": "s2",
            "kind": "llm",
            "input": {"model": "gpt-4.1"},
        },
        {"type": "node.finished", "nodeId": "llm:step", "instanceId": "s2", "usage": {"inputTokens": 7}},
    ]
    for i, ev in enumerate(events, 1):
        conn.execute(
            "INSERT INTO events (cursor, run_id, client_id, seq, type, body) VALUES (?,?,?,?,?,?)",
            (i, "o1", "c", i, ev["type"], json.dumps(ev)),
        )
    migrate(conn, tmp_path / "old.db")
    assert conn.execute("SELECT run_id FROM search WHERE search MATCH 'evora'").fetchall() == [("o1",)]
    facets = {r[0] for r in conn.execute("SELECT facet FROM facets WHERE run_id = 'o1'")}
    assert {"tool:search", "kind:tool", "model:gpt-4o"} <= facets
    usage = json.loads(conn.execute("SELECT usage FROM runs").fetchone()[0])
    assert usage["models"]["gpt-4o"]["inputTokens"] == 10
    assert usage["models"]["gpt-4.1"]["inputTokens"] == 7
    # The writer goes on from the last event the migration indexed, even after a restart.
    assert conn.execute("SELECT value FROM settings WHERE key = 'search_indexed'").fetchone()[0] == "5"


def test_a_cost_that_came_in_over_otlp_counts_as_reported(thub: Any) -> None:
    app = thub.app(app="otlp-like")
    app.run_started("o1")
    app.node_started("o1", "llm:chat", "s1", input={}, attrs={"model": "gpt-4o"})
    app.node_finished(
        "o1", "llm:chat", "s1", output={}, usage={"inputTokens": 5, "outputTokens": 1}, cost={"total": 0.25}
    )
    thub.wait_for(lambda: thub.api("GET", "/api/runs/o1")[1]["usage"]["costUsd"] == 0.25, what="the cost")
    assert thub.api("GET", "/api/runs/o1")[1]["usage"]["costSource"] == "reported"


def test_the_hub_will_not_start_with_a_broken_price_file(
    tmp_path: Path, monkeypatch: Any, capsys: Any
) -> None:
    bad = tmp_path / "prices.json"
    bad.write_text('{"models": {"m": {"input": "cheap"}}}')
    monkeypatch.setenv(prices.ENV, str(bad))
    prices.table.cache_clear()
    try:
        assert main(["serve", "--port", "0", "--db", str(tmp_path / "h.db")]) == 2
    finally:
        prices.table.cache_clear()
    err = capsys.readouterr().err
    assert "GRAPHMIND_PRICES" in err and "'m'" in err and len(err.strip().splitlines()) == 1


def test_the_hub_writer_indexes_in_its_idle_time(tmp_path: Path) -> None:
    """A busy writer stores first; once its queue is empty it indexes what it stored."""
    import threading

    from graphmind_server.store.items import EventItem
    from graphmind_server.store.schema import open_database
    from graphmind_server.store.writer import Writer

    conn = open_database(tmp_path / "w.db")
    done = threading.Event()
    writer = Writer(conn, lambda c: done.set() if c.last_cursor >= 50 else None)
    writer.lazy_index = True
    writer.start()
    try:
        for i in range(1, 51):
            ev = {
                "type": "node.started",
                "seq": i,
                "ts": 1.0,
                "runId": "w1",
                "nodeId": "tool:t",
                "instanceId": f"i{i}",
                "input": {"word": f"needle{i}"},
            }
            writer.queue.put(EventItem("c1", "a", ev, json.dumps(ev), 1.0))
        assert done.wait(10)
        from graphmind_server.testing import wait_for

        wait_for(lambda: writer.indexed == 50, 10, "the idle index")
    finally:
        writer.stop()
    rows = conn.execute("SELECT count(*) FROM search WHERE search MATCH 'needle50'").fetchone()[0]
    assert rows == 1
    assert conn.execute("SELECT value FROM settings WHERE key = 'search_indexed'").fetchone()[0] == "50"


def test_a_word_in_many_events_filters_the_runs_list_run_by_run_with_the_same_answer(
    thub: Any, monkeypatch
) -> None:
    """A word in more events than search.RARE_WORD_EVENTS is looked for run by run, in the range of each
    run's cursors (a year of runs: bench/year_of_runs.py); the list is the same as the set's."""
    from graphmind_server.store import search

    app = thub.app(app="trips")
    agent_run(app, "r1", city="lisbon")
    agent_run(app, "r2", city="porto-azul", fail=True)
    agent_run(app, "r3", city="faro", weather="lisbon")
    agent_run(app, "r4", city="braga")
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs")[1]["runs"]) == 4, what="4 runs")
    ids = lambda q: [r["id"] for r in thub.api("GET", f"/api/runs?{q}")[1]["runs"]]  # noqa: E731
    queries = [
        "q=lisbon",
        "q=lisbon&status=finished",
        "q=porto-azul",
        "q=faro%20sunny",
        "q=nothing",
        "q=go&limit=2",
    ]
    as_a_set = [ids(q) for q in queries]
    assert as_a_set[0] == ["r3", "r1"] and as_a_set[-1] == ["r4", "r3"]
    monkeypatch.setattr(search, "RARE_WORD_EVENTS", 1)  # every word is common: run by run
    assert [ids(q) for q in queries] == as_a_set
    hits = thub.api("GET", "/api/search?q=lisbon&run=r3")[1]["hits"]
    assert [(h["runId"], h["nodeId"]) for h in hits] == [("r3", "tool:weather")]  # within the run's range


def test_compare_and_diff_see_an_input_edited_at_a_gate(thub: Any, capsys: Any) -> None:
    # a person edited the held call's input: the call ran with another input than it started with
    app = thub.app(app="edit")
    for run_id, edited in (("e1", None), ("e2", {"flight": "LH-99"})):
        app.run_started(run_id, name="trip")
        app.node_started(run_id, "tool:book", f"{run_id}-b", input={"flight": "TP-544"})
        extra = {"edited": True, "input": edited, "originalInput": {"flight": "TP-544"}} if edited else {}
        app.node_finished(run_id, "tool:book", f"{run_id}-b", output="booked", **extra)
        app.run_finished(run_id)
    thub.wait_for(
        lambda: all(thub.api("GET", f"/api/runs/{r}")[1].get("status") == "finished" for r in ("e1", "e2")),
        what="2 runs",
    )
    body = thub.api("GET", "/api/compare?a=e1&b=e2")[1]
    assert body["steps"][0]["changed"] == ["input"], body["steps"][0]
    assert main(["diff", "e1", "e2", "--db", str(thub.db)]) == 1
    out = capsys.readouterr().out
    assert "~ tool:book #1  input differ" in out and '"LH-99"' in out


def test_the_command_line_takes_the_viewers_short_run_id(thub: Any, tmp_path: Path, capsys: Any) -> None:
    app = thub.app(app="short")
    for run_id in ("1f3a9c2e77aa", "1f3a0000bbbb", "9c9c9c9c0000"):
        agent_run(app, run_id)
    thub.wait_for(lambda: len(thub.api("GET", "/api/runs?app=short")[1]["runs"]) == 3, what="3 runs")
    db = str(thub.db)
    # the short id the viewer shows (`#1f3a9c2e`), with or without its `#`
    assert main(["diff", "1f3a9c2e", "#9c9c9c9c", "--db", db]) == 0
    assert "A 1f3a9c2e77aa" in capsys.readouterr().out
    assert main(["effects", "#1f3a9c2e", "--db", db]) == 0
    assert main(["record", "9c9c9c9c", "--db", db, "--out", str(tmp_path / "r.jsonl")]) == 0
    assert '"id":"9c9c9c9c0000"' in (tmp_path / "r.jsonl").read_text().replace(" ", "")
    capsys.readouterr()
    # two runs start with it: one line asking for more; too short to be taken as a start: no run
    assert main(["diff", "1f3a", "9c9c9c9c", "--db", db]) == 2
    assert "'1f3a' starts more than one run id (1f3a0000bbbb, 1f3a9c2e77aa, …)" in capsys.readouterr().err
    assert main(["effects", "1f3", "--db", db]) == 2
    assert "no run '1f3'" in capsys.readouterr().err


def test_a_fork_selector_error_names_the_run_given_and_the_selector_to_write(thub: Any, capsys: Any) -> None:
    agent_run(thub.app(app="forks"), "fk1")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/fk1")[1].get("status") == "finished", what="the run")
    args = ["replay", "fk1", "--db", str(thub.db), "--fork", "tool:search", "--output", "1", "--", "true"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert (
        err
        == "graphmind: run fk1: no recorded node 'tool:search' (tool:search ran once: write tool:search#1)\n"
    )
