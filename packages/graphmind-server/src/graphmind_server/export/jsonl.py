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

from ..store.derive import RUN_STATUSES
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


class _NotFinite(ValueError):
    pass


def _refuse_constant(text: str) -> None:
    raise _NotFinite(f"{text} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if value - value != 0:
        raise _NotFinite(f"the number {text[:40]} is out of range")
    return value


# NaN / Infinity (Python's json writes them) and 1e400 are refused: the API would hand them back as
# non-standard JSON that no viewer can parse.
_STRICT = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite)
MAX_SEQ = 2**63 - 1  # SQLite's INTEGER
# A run line's fields the import writes into the run's row: (type check, what it must be).
_RUN_FIELDS: dict[str, tuple[Any, str]] = {
    "app": (lambda v: isinstance(v, str), "a string"),
    "name": (lambda v: isinstance(v, str), "a string"),
    "status": (lambda v: v in RUN_STATUSES, "one of " + ", ".join(RUN_STATUSES)),
    "startedAt": (lambda v: _number(v), "a number (epoch ms)"),
    "endedAt": (lambda v: v is None or _number(v), "a number (epoch ms) or null"),
    "clientId": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "meta": (lambda v: isinstance(v, dict), "an object"),
    "effects": (lambda v: isinstance(v, list), "a list (the effects ledger)"),
}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) < 2**63


def _bad_field(name: str, number: int, field: str, value: Any, must: str) -> ExportError:
    shown = json.dumps(value)[:40] if not isinstance(value, float) else repr(value)
    return ExportError(
        f"{name}:{number}: {field} must be {must} (got {shown}); nothing was imported. "
        "Pass a file written by `graphmind record`"
    )


def _check_run(run: dict[str, Any], name: str, number: int) -> None:
    if not isinstance(run.get("id"), str) or not run["id"]:
        raise _bad_field(name, number, "run.id", run.get("id"), "a non-empty string")
    for key, (ok, must) in _RUN_FIELDS.items():
        if key in run and not ok(run[key]):
            raise _bad_field(name, number, f"run.{key}", run[key], must)


def _check_event(item: dict[str, Any], name: str, number: int) -> None:
    ev = item["event"]
    seq = ev["seq"]
    if isinstance(seq, bool) or not 0 <= seq <= MAX_SEQ:
        raise _bad_field(name, number, "event.seq", seq, "an integer from 0 to 2**63-1")
    if not item["clientId"]:
        raise _bad_field(name, number, "clientId", item["clientId"], "a non-empty string")
    if "ts" in ev and ev["ts"] is not None and not _number(ev["ts"]):
        raise _bad_field(name, number, "event.ts", ev["ts"], "a number (epoch ms)")


def read_jsonl(lines: IO[str], name: str) -> Iterator[ImportedRun]:
    """The runs of a JSONL export, one at a time; ExportError names the line (and the field) of a
    malformed file. Every field the import writes is checked here, so a file that reads to its end
    imports without an error."""
    current: ImportedRun | None = None
    header_seen = False
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = _STRICT.decode(line)
        except _NotFinite as exc:
            raise ExportError(
                f"{name}:{number}: {exc} (JSON has no NaN or Infinity); nothing was imported"
            ) from None
        except (ValueError, RecursionError) as exc:
            msg = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)[:80]
            raise ExportError(
                f"{name}:{number} is not JSON ({msg}); pass a file written by `graphmind record`"
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
        elif kind == "run" and isinstance(item.get("run"), dict):
            _check_run(item["run"], name, number)
            if current is not None:
                yield current
            current = ImportedRun(item["run"], [])
        elif kind == "event" and _valid_event(item):
            _check_event(item, name, number)
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
