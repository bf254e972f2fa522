"""The export file: one JSON object per line (`jsonl`) or one document (`json`).

    {"type":"graphmind.export","version":1}
    {"type":"run","run":{Run, with "nodes"}}
    {"type":"event","runId":"...","clientId":"...","event":{the event}}
    ...                                   (every event of that run, in the order the hub stored them)
    {"type":"run","run":{...}}            (the next run)

Every line is written by `encode`, so the same data always gives the same bytes: record → import →
record is byte-equal.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from .source import ExportError

FORMAT_VERSION = 1
HEADER = {"type": "graphmind.export", "version": FORMAT_VERSION}

_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_ASCII = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"))


def encode(value: Any) -> str:
    """Compact JSON, UTF-8 where it can be; a value holding a lone surrogate (legal in a JSON escape,
    not in UTF-8) is written with \\u escapes, so the file always stays valid UTF-8."""
    text = _COMPACT.encode(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _ASCII.encode(value)
    return text


def run_line(run: dict[str, Any]) -> str:
    return encode({"type": "run", "run": run})


def event_line(run_id: str, client_id: str, event: dict[str, Any]) -> str:
    return encode({"type": "event", "runId": run_id, "clientId": client_id, "event": event})


class JsonDocument:
    """The `json` format: {"graphmind.export": 1, "runs": [{Run, "nodes", "events": [{"clientId", "event"}]}]},
    written piece by piece so a large export never sits in memory."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.runs = 0
        self.events = 0
        out.write(encode(HEADER)[:-1] + ',"runs":[')

    def run(self, run: dict[str, Any]) -> None:
        if self.runs:
            self.out.write("]},")
        self.runs += 1
        self.events = 0
        self.out.write(encode(run)[:-1] + ',"events":[')

    def event(self, client_id: str, event: dict[str, Any]) -> None:
        self.out.write(("," if self.events else "") + encode({"clientId": client_id, "event": event}))
        self.events += 1

    def close(self) -> None:
        self.out.write("]}]}\n" if self.runs else "]}\n")


@dataclass
class ImportedRun:
    run: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]  # (clientId, event)


def read_jsonl(lines: IO[str], name: str) -> Iterator[ImportedRun]:
    """The runs of a JSONL export, one at a time; ExportError names the line of a malformed file."""
    current: ImportedRun | None = None
    header_seen = False
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ExportError(
                f"{name}:{number} is not JSON ({exc.msg}); pass a file written by `graphmind record`"
            ) from None
        kind = item.get("type") if isinstance(item, dict) else None
        if not header_seen:
            if kind != "graphmind.export":
                raise ExportError(
                    f"{name}:{number}: not a GraphMind JSONL export (no header line); "
                    "write one with `graphmind record --format jsonl`"
                )
            if item.get("version") != FORMAT_VERSION:
                raise ExportError(
                    f"{name}: export version {item.get('version')!r}, this graphmind reads "
                    f"version {FORMAT_VERSION}; upgrade graphmind-server"
                )
            header_seen = True
        elif kind == "run" and isinstance(item.get("run"), dict) and isinstance(item["run"].get("id"), str):
            if current is not None:
                yield current
            current = ImportedRun(item["run"], [])
        elif kind == "event" and _valid_event(item):
            if current is None or item["runId"] != current.run["id"]:
                raise ExportError(
                    f"{name}:{number}: an event of run {item['runId']!r} outside that run's lines"
                )
            current.events.append((item["clientId"], item["event"]))
        else:
            raise ExportError(f"{name}:{number}: expected a run or an event line (got {line[:80].strip()!r})")
    if not header_seen:
        raise ExportError(f"{name} is empty; write an export with `graphmind record --format jsonl`")
    if current is not None:
        yield current


def _valid_event(item: dict[str, Any]) -> bool:
    ev = item.get("event")
    return (
        isinstance(item.get("runId"), str)
        and isinstance(item.get("clientId"), str)
        and isinstance(ev, dict)
        and isinstance(ev.get("type"), str)
        and isinstance(ev.get("seq"), int)
        and ev.get("runId") == item["runId"]
    )
