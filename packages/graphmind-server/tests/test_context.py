"""Context X-ray in the hub (docs/context.md): the breakdown, diff, warnings and surgery routes over
events a frame-level fake app sends, the pure splitting and cutting rules, and the MCP read tool."""

from __future__ import annotations

import json
from typing import Any

import pytest

from graphmind_server.context.breakdown import breakdown
from graphmind_server.context.parts import split
from graphmind_server.context.surgery import SurgeryError, apply
from graphmind_server.context.tokenizer import ESTIMATE, for_model
from graphmind_server.export.source import open_readonly
from graphmind_server.mcp_server.reads import Links, ToolInputError, get_context

LONG = "Always answer in French and cite the museum's official site. " * 5  # 300 characters


def _step(
    app: Any,
    run: str,
    instance: str,
    node_input: Any,
    *,
    usage: dict[str, Any] | None = None,
    node: str = "llm:step",
    agent: str | None = None,
) -> None:
    extra = {"agent": agent, "agentPath": [agent]} if agent else {}
    app.event(
        "node.started",
        run,
        nodeId=node,
        instanceId=instance,
        kind="llm",
        name="step",
        parentInstanceId=run,
        input=node_input,
        attrs={"model": "mystery-model"},
        **extra,
    )
    app.event(
        "node.finished",
        run,
        nodeId=node,
        instanceId=instance,
        output={"content": "ok"},
        durationMs=1.0,
        heldMs=0.0,
        **({"usage": usage} if usage else {}),
    )


def _messages(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [
        {"role": "system", "content": LONG},
        {"role": "user", "content": "Plan Cairo"},
    ]
    for i in range(n):
        out.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": f"c{i}", "name": "look", "arguments": "{}"}],
            }
        )
        out.append({"role": "tool", "tool_call_id": f"c{i}", "content": f"result {i} " * 20})
    return out


@pytest.fixture
def hub_with_run(thub: Any) -> Any:
    app = thub.app(app="xray")
    app.run_started("r1", "trip")
    _step(app, "r1", "i:s1", {"model": "mystery-model", "messages": _messages(0)}, usage={"inputTokens": 100})
    _step(app, "r1", "i:s2", {"model": "mystery-model", "messages": _messages(1)}, usage={"inputTokens": 180})
    app.event(
        "node.started",
        "r1",
        nodeId="tool:look",
        instanceId="c0",
        kind="tool",
        name="look",
        parentInstanceId="r1",
        input={},
    )
    app.run_finished("r1")
    thub.wait_for(lambda: thub.api("GET", "/api/runs/r1")[1].get("status") == "finished", 5, "run stored")
    return thub


def test_the_latest_step_scales_to_its_reported_tokens_and_diffs_against_the_one_before(
    hub_with_run: Any,
) -> None:
    status, body = hub_with_run.api("GET", "/api/runs/r1/nodes/llm:step/context")
    assert status == 200, body
    assert body["instanceId"] == "i:s2" and body["estimated"] is True and body["scaledTo"] == 180
    assert body["total"] == 180 == sum(p["tokens"] for p in body["parts"])
    assert body["contextLimit"] is None and body["windowShare"] is None and body["held"] is False
    assert [p["kind"] for p in body["parts"]] == ["system", "message", "message", "tool_result"]
    diff = body["diff"]
    assert diff["previous"] == {"nodeId": "llm:step", "instanceId": "i:s1"}
    assert diff["added"] == ["p2", "p3"] and diff["removed"] == [] and diff["changed"] == []
    assert diff["delta"] == 80
    first = hub_with_run.api("GET", "/api/runs/r1/nodes/llm:step/context?instance=i:s1")[1]
    assert first["diff"]["previous"] is None and first["total"] == 100
    # Without a known window, the part warning is against the total input, and says so.
    assert any(w["code"] == "part" and "window is not known" in w["message"] for w in body["warnings"])


def test_unknown_run_node_instance_and_a_tool_node_are_one_line_errors(hub_with_run: Any) -> None:
    assert hub_with_run.api("GET", "/api/runs/nope/nodes/llm:step/context")[0] == 404
    assert hub_with_run.api("GET", "/api/runs/r1/nodes/llm:nope/context")[0] == 404
    assert hub_with_run.api("GET", "/api/runs/r1/nodes/llm:step/context?instance=x")[0] == 404
    status, body = hub_with_run.api("GET", "/api/runs/r1/nodes/tool:look/context")
    assert status == 422 and "model step" in body["error"] and "\n" not in body["error"]
    assert hub_with_run.api("GET", "/api/runs/nope/context")[0] == 404


def test_the_run_chart_lists_every_model_step_with_its_reported_tokens(hub_with_run: Any) -> None:
    status, body = hub_with_run.api("GET", "/api/runs/r1/context")
    assert status == 200
    assert [(s["instanceId"], s["inputTokens"], s["estimated"]) for s in body["steps"]] == [
        ("i:s1", 100, False),
        ("i:s2", 180, False),
    ]


def test_the_edit_route_drops_a_tool_result_with_its_call_and_truncates_by_tokens(hub_with_run: Any) -> None:
    given = {"model": "mystery-model", "messages": _messages(2)}
    url = "/api/runs/r1/nodes/llm:step/context/edit?instance=i:s2"
    status, body = hub_with_run.api(
        "POST", url, {"input": given, "ops": [{"path": "/messages/3", "op": "drop"}]}
    )
    assert status == 200, body
    sent = body["input"]["messages"]
    assert [m.get("tool_call_id") for m in sent if m["role"] == "tool"] == ["c1"]
    assert all(m.get("tool_calls", [{}])[0].get("id") != "c0" for m in sent if m["role"] == "assistant")
    assert len(sent) == 4 and len(body["breakdown"]["diff"]["removed"]) == 2
    status, body = hub_with_run.api(
        "POST",
        url,
        {"input": given, "ops": [{"path": "/messages/0", "op": "truncate", "keepFirst": 3, "keepLast": 2}]},
    )
    assert status == 200 and "tokens cut]…" in body["input"]["messages"][0]["content"]
    assert [c["id"] for c in body["breakdown"]["diff"]["changed"]] == ["p0"]
    assert hub_with_run.api("POST", url, {"input": given, "ops": [{"path": "/nope", "op": "drop"}]})[0] == 422
    assert (
        hub_with_run.api("POST", url, {"input": given, "ops": [{"path": "/messages/0", "op": "pin"}]})[0]
        == 400
    )
    assert hub_with_run.api("POST", url, {"ops": []})[0] == 400


def test_a_value_cut_at_512_kb_is_flagged_and_counted_for_its_full_size() -> None:
    marker = {"$graphmind": "truncated", "bytes": 800_000, "preview": '"' + "x" * 1000}
    node_input = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "tool", "tool_call_id": "a", "content": marker},
        ]
    }
    body, _ = breakdown(node_input, "mystery-model", None)
    cut = body["parts"][1]
    assert cut["cut"] is True and cut["tokens"] > 190_000 and body["estimated"] is True
    assert [w["code"] for w in body["warnings"]] == ["part", "cut"]
    whole, _ = breakdown(marker, "gpt-4o", None)
    assert whole["parts"][0]["cut"] is True and whole["parts"][0]["label"] == "input (cut at 512 KB)"


def test_the_same_long_text_in_two_parts_is_a_duplicate_warning() -> None:
    node_input = {"system": LONG, "messages": [{"role": "user", "content": LONG}]}
    body, _ = breakdown(node_input, "claude-sonnet-4", None)
    assert [w["parts"] for w in body["warnings"] if w["code"] == "duplicate"] == [["p0", "p1"]]


@pytest.mark.parametrize(
    ("node_input", "expected"),
    [
        (
            {
                "instructions": "Be brief.",
                "input": [
                    {"role": "user", "content": "hi"},
                    {"type": "function_call", "call_id": "f1", "name": "x", "arguments": "{}"},
                    {"type": "function_call_output", "call_id": "f1", "output": "42"},
                ],
            },
            [
                ("system", "/instructions"),
                ("message", "/input/0"),
                ("message", "/input/1"),
                ("tool_result", "/input/2"),
            ],
        ),
        (
            {"messages": [[{"type": "human", "content": "hi"}, {"type": "ai", "content": "yo"}]]},
            [("message", "/messages/0/0"), ("message", "/messages/0/1")],
        ),
        (
            {
                "messages": [
                    {
                        "role": "user",
                        "blocks": [
                            {"block_type": "text", "text": "see"},
                            {"block_type": "image", "url": "x.png"},
                        ],
                    }
                ]
            },
            [("message", "/messages/0/blocks/0"), ("attachment", "/messages/0/blocks/1")],
        ),
        ("just a prompt", [("message", "")]),
        (
            {"prompts": ["a", "b"], "tools": ["t"]},
            [("tools", "/tools"), ("message", "/prompts/0"), ("message", "/prompts/1")],
        ),
    ],
)
def test_every_adapter_shape_splits_into_parts_with_json_pointers(
    node_input: Any, expected: list[tuple[str, str]]
) -> None:
    assert [(p.kind, p.path) for p in split(node_input)] == expected


def test_anthropic_surgery_drops_the_tool_use_with_its_result() -> None:
    node_input = {
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "s", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "big"}]},
        ]
    }
    assert apply(node_input, [{"path": "/messages/2/content/0", "op": "drop"}], ESTIMATE) == {
        "messages": [{"role": "user", "content": "go"}]
    }
    with pytest.raises(SurgeryError):
        apply(node_input, [{"path": "", "op": "drop"}], ESTIMATE)


def test_truncation_keeps_the_first_and_last_tokens_with_the_models_tokenizer() -> None:
    tokenizer = for_model("gpt-4o")
    text = " ".join(f"word{i}" for i in range(500))
    out = apply(
        {"messages": [{"role": "user", "content": text}]},
        [{"path": "/messages/0", "op": "truncate", "keepFirst": 10, "keepLast": 5}],
        tokenizer,
    )
    cut = out["messages"][0]["content"]
    assert cut.startswith("word0 word1") and cut.endswith("word499") and "tokens cut]…" in cut
    assert tokenizer.count(cut) < 40


def test_the_mcp_read_tool_answers_the_same_breakdown_within_its_budget(hub_with_run: Any) -> None:
    conn = open_readonly(hub_with_run.db)
    try:
        text = get_context(conn, Links(4747), "r1", "llm:step", None, 40_000)
        body = json.loads(text)
        assert body["total"] == 180 and body["link"].endswith("/node/llm%3Astep")
        small_text = get_context(conn, Links(4747), "r1", "llm:step", None, 2_000)
        small = json.loads(small_text)
        assert len(small_text) <= 2_000 and small["total"] == 180
        with pytest.raises(ToolInputError, match="no node"):
            get_context(conn, Links(4747), "r1", "llm:nope", None, 40_000)
    finally:
        conn.close()


def test_without_an_encoding_file_on_disk_counts_are_estimated_and_nothing_is_fetched(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    import tiktoken.load

    from graphmind_server.context import tokenizer

    def no_network(blobpath: str) -> bytes:
        raise AssertionError(f"tried to fetch {blobpath}")

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    monkeypatch.setattr(tokenizer, "_search_dirs", lambda: [tmp_path])
    tokenizer._tiktoken.cache_clear()
    try:
        found = for_model("gpt-4o")
        assert found.exact is False and found.name == "estimated (characters / 4)"
        body, _ = breakdown({"messages": [{"role": "user", "content": "hello there"}]}, "gpt-4o", 20)
        assert body["estimated"] is True and body["scaledTo"] == 20 and body["total"] == 20
    finally:
        tokenizer._tiktoken.cache_clear()


def test_a_large_new_input_is_counted_once_on_two_threads_with_the_same_counts() -> None:
    import threading

    from graphmind_server.context.tokenizer import PARALLEL_CHARS, _CountCache

    threads: list[str] = []

    def count(text: str) -> int:
        threads.append(threading.current_thread().name)
        return len(text.split())

    cache = _CountCache(count)
    texts = [f"message {i} " + "word " * 2_000 for i in range(PARALLEL_CHARS // 10_000 + 2)]
    cache.prime([*texts, "short"])
    assert len(threads) == len(texts) and "graphmind-tokens" in threads
    assert {t for t in threads if t != "graphmind-tokens"} == {threading.current_thread().name}
    assert [cache(t) for t in texts] == [len(t.split()) for t in texts]
    assert len(threads) == len(texts)  # every count came from the cache
    cache.prime(texts[:3])  # below the threshold, or counted already: nothing to do ahead
    assert len(threads) == len(texts)
