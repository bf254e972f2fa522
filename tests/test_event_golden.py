"""The wire bytes of a fixed call sequence, against a golden capture (issue 17: "no behaviour change").

A performance change to the event path (snapshot, redaction, size rules, encoding) must not change
what the hub stores. This test drives a fixed sequence of calls (core-gated tools with awkward
payloads, a run, an error, redaction switches, graphmind-openai plain and streamed calls over a mock
transport), takes the JSON text the transport thread writes for each event (`Transport._encode`, the
same function the writer uses before `ws.send`), and compares it byte for byte with
tests/fixtures/event-golden.jsonl. Only what differs per process is normalised first: random ids
(hex runs, in order of first appearance), timestamps and durations.

The fixture was captured on the commit before issue 17's changes. To re-capture after an intended
protocol change: `GRAPHMIND_GOLDEN_WRITE=1 uv run pytest tests/test_event_golden.py`.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from openai import OpenAI
from pydantic import BaseModel

import graphmind
from graphmind_openai import instrument_openai
from graphmind_openai._inject import chat_sse

FIXTURE = Path(__file__).parent / "fixtures" / "event-golden.jsonl"

_HEX = re.compile(r"(?<![0-9a-zA-Z])([0-9a-f]{8,})(?![0-9a-zA-Z])")
_TIMES = re.compile(r'"(ts|durationMs|heldMs|started_ms|startedMs)":-?[0-9.e+-]+')
# A traceback names engine files and line numbers, which any refactor moves.
_STACK = re.compile(r'"stack":"(?:[^"\\]|\\.)*"')
# The command line a run records in its meta (issue 31): this process's, wherever it runs.
_ARGV = re.compile(r'"argv":\[(?:[^\]"]|"(?:[^"\\]|\\.)*")*\]')
_CWD = re.compile(r'"cwd":"(?:[^"\\]|\\.)*"')
_EXE = re.compile(r'"executable":"(?:[^"\\]|\\.)*"')


def _normalise(lines: list[str]) -> list[str]:
    ids: dict[str, str] = {}

    def hex_id(m: re.Match[str]) -> str:
        return ids.setdefault(m.group(1), f"ID{len(ids):03d}")

    out = []
    for line in lines:
        line = _TIMES.sub(lambda m: f'"{m.group(1)}":0', line)
        line = _STACK.sub('"stack":"<stack>"', line)
        line = _CWD.sub('"cwd":"<cwd>"', _ARGV.sub('"argv":["<argv>"]', line))
        line = _EXE.sub('"executable":"<executable>"', line)
        out.append(_HEX.sub(hex_id, line))
    return out


class Colour(enum.Enum):
    RED = "red"


class Order(BaseModel):
    item: str
    qty: int
    notes: list[str]


@dataclasses.dataclass
class Point:
    x: float
    y: float


class Opaque:
    def __init__(self) -> None:
        self.visible = {"k": (1, 2.5, None)}
        self._hidden = "never"


BODY = {
    "id": "chatcmpl-golden",
    "object": "chat.completion",
    "created": 1_767_225_600,
    "model": "gpt-golden",
    "choices": [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Visit Giza — then the museum ☀."},
            "finish_reason": "stop",
            "logprobs": None,
        }
    ],
    "usage": {"prompt_tokens": 12, "completion_tokens": 18, "total_tokens": 30},
}
SSE_EVENTS = [e + b"\n\n" for e in chat_sse(BODY, pieces=5, usage=False).split(b"\n\n") if e]


class _Chunks(httpx2.SyncByteStream):
    def __iter__(self) -> Iterator[bytes]:
        yield from SSE_EVENTS


def _handler(request: httpx2.Request) -> httpx2.Response:
    if json.loads(request.content).get("stream"):
        return httpx2.Response(200, stream=_Chunks(), headers={"content-type": "text/event-stream"})
    return httpx2.Response(
        200, content=json.dumps(BODY).encode(), headers={"content-type": "application/json"}
    )


def _sequence(client: graphmind.Client) -> None:
    @client.tool
    def search(query: str, limit: int, fuzzy: bool, extra: Any = None) -> Any:
        return {"hits": [query] * limit, "fuzzy": fuzzy, "extra": extra}

    @client.tool
    def fail(x: int) -> int:
        raise ValueError(f"bad x: {x}")

    oa = instrument_openai(
        OpenAI(
            api_key="golden",
            base_url="http://golden.invalid/v1",
            max_retries=0,
            http_client=httpx2.Client(transport=httpx2.MockTransport(_handler)),
        ),
        session=client,
    )
    messages = [
        {"role": "system", "content": "You plan trips."},
        {"role": "user", "content": "Plan a day in Cairo ☀"},
    ]
    with client.run("golden", meta={"case": 1}):
        search("q", 2, True)
        search(
            "naïve ☃ \ud800 \x00",
            1,
            False,
            extra={"nan": float("nan"), "inf": float("-inf"), 3: b"\xff\x00bytes"},
        )
        search(
            "models", 1, True, extra=[Order(item="tea", qty=2, notes=["hot"]), Point(1.5, -2.0), Colour.RED]
        )
        search("objects", 0, False, extra={"set": {3, 1, 2}, "opaque": Opaque(), "tuple": (1, "a")})
        search("big", 1, True, extra="x" * 600_000)
        with pytest.raises(ValueError):
            fail(7)
        oa.chat.completions.create(model="gpt-golden", messages=messages)
        for _ in oa.chat.completions.create(model="gpt-golden", messages=messages, stream=True):
            pass
    search("implicit run", 1, True)


def _capture(**options: Any) -> list[str]:
    graphmind._base.ids._rng.seed(17)  # type: ignore[attr-defined]
    # A long flush interval: token batches are cut by the stream itself, never by the clock.
    client = graphmind.Client(
        app="golden", url="ws://127.0.0.1:9/ingest", retry_interval=3600, token_flush_interval=60, **options
    )
    try:
        _sequence(client)
        transport = client._transport
        assert transport is not None
        texts = []
        for entry in list(transport._ring):
            text = transport._encode(entry) if type(entry[0]) is not str else entry[0]
            assert text
            texts.append(text)
    finally:
        client.dispose()
    return _normalise(texts)


CASES = {
    "plain": {},
    "hide-inputs": {"hide_inputs": True},
    "hide-tool-results": {"hide_tool_results": True},
}


def test_the_wire_bytes_of_a_fixed_call_sequence_match_the_golden_capture() -> None:
    lines = []
    for case, options in CASES.items():
        lines.append(f"# {case}")
        lines.extend(_capture(**options))
    text = "\n".join(lines) + "\n"
    if os.environ.get("GRAPHMIND_GOLDEN_WRITE") == "1" or not FIXTURE.exists():
        FIXTURE.write_text(text, encoding="utf-8")
        pytest.skip("golden capture written")
    expected = FIXTURE.read_text(encoding="utf-8").splitlines()
    got = text.splitlines()
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected, strict=True)):
        assert g == e, f"event {i} differs"
