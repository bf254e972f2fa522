"""`graphmind import FILE` of an OTLP trace file: stored exactly as `POST /v1/traces` stores it.

What is read, told from the content (never the name): a collector's file exporter (`format: json`,
one `ExportTraceServiceRequest` in OTLP/JSON a line; `format: proto`, length-prefixed protobuf
messages), a backend's export (one JSON document: a request, or a list of them), or one protobuf
request (`.pb`); any of them gzipped. Each request goes through the route's own decoder and
mapping (otlp/decode.py, otlp/spans.py), and every event gets the hub-wide `seq` and once key of
the `otlp` client (`route.numbered`), so an imported trace is the run `otlp-<traceId>` a received
one is, replays the same way, and a second import (or the same trace received live) stores nothing
new. The whole file is decoded before anything is written, then written in one transaction.
"""

from __future__ import annotations

import json
import sqlite3
import struct
from pathlib import Path
from typing import Any

from ..otlp import decode, route
from ..store import StoreError, reads
from ..store.importing import Import
from ..store.items import EventItem
from .source import ExportError

GZIP = b"\x1f\x8b"
MAX_FILE = 512 * 1024 * 1024
NOT_OTLP = (
    "is neither a GraphMind export (jsonl, from `graphmind record`) nor an OTLP trace file "
    "(OTLP/JSON ExportTraceServiceRequest, one a line or one document, or protobuf)"
)


def is_otlp(head: bytes) -> bool:
    """Whether a file that starts with `head` is read as an OTLP trace: gzip, binary (protobuf: a
    trace id's 16 bytes are never all text), or JSON naming `resourceSpans`. Anything else goes to
    the JSONL importer, whose errors name the line."""
    if head[:2] == GZIP:
        return True
    if any(b < 9 or 13 < b < 32 for b in head[:4096]):
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 4:  # not just a character cut at the end of the head
            return True
    return b'"resourceSpans"' in head or b'"resource_spans"' in head


def read_requests(path: Path) -> list[decode.Decoded]:
    """Every request of the file, decoded; ExportError (one line) for anything else."""
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_FILE + 1)
    except OSError as exc:
        raise ExportError(f"cannot read {path} ({exc.strerror or exc}); check the FILE argument") from None
    if len(data) > MAX_FILE:
        raise ExportError(f"{path} is over {MAX_FILE // (1024 * 1024)} MiB; split it")
    if data[:2] == GZIP:
        try:
            data = decode.inflate(data, "gzip")
        except decode.BadPayload as exc:
            raise ExportError(f"{path}: {exc}") from None
    text = data.lstrip()
    if text[:1] in (b"{", b"["):
        return _json_requests(path, data)
    return _protobuf_requests(path, data)


def _json_requests(path: Path, data: bytes) -> list[decode.Decoded]:
    try:
        whole: Any = json.loads(data)
    except ValueError:
        whole = None  # one request a line (a collector's file exporter)
    except RecursionError:
        raise ExportError(f"{path}: nested too deeply to read") from None
    if isinstance(whole, list):
        bodies = [json.dumps(item).encode() for item in whole]
        where = [f"{path}: item {i + 1}" for i in range(len(whole))]
    elif whole is not None:
        bodies, where = [data], [str(path)]
    else:
        lines = [(i + 1, line) for i, line in enumerate(data.split(b"\n")) if line.strip()]
        bodies, where = [line for _, line in lines], [f"{path}:{i}" for i, _ in lines]
    out = []
    for body, at in zip(bodies, where, strict=True):
        try:
            out.append(decode.decode(body, "application/json"))
        except decode.BadPayload as exc:
            raise ExportError(f"{at}: not an OTLP trace request ({exc}); {path} {NOT_OTLP}") from None
    return out


def _protobuf_requests(path: Path, data: bytes) -> list[decode.Decoded]:
    try:
        one = decode.decode(data, "application/x-protobuf")
        if one.spans:
            return [one]
    except decode.BadPayload:
        pass
    frames = _frames(data)
    if frames:
        try:
            decoded = [decode.decode(frame, "application/x-protobuf") for frame in frames]
        except decode.BadPayload:
            decoded = []
        if any(d.spans for d in decoded):
            return decoded
    raise ExportError(f"{path} {NOT_OTLP}")


def _frames(data: bytes) -> list[bytes] | None:
    """Messages each after its 4-byte big-endian length (the collector's `format: proto`), or None."""
    frames, at = [], 0
    while at < len(data):
        if at + 4 > len(data):
            return None
        (size,) = struct.unpack(">I", data[at : at + 4])
        at += 4
        if size == 0 or at + size > len(data):
            return None
        frames.append(data[at : at + size])
        at += size
    return frames or None


def import_otlp(path: Path, db: Path) -> tuple[list[str], int, int]:
    """(run ids in the file, events newly stored, spans not taken), all or nothing."""
    requests = read_requests(path)
    ordered = sorted((s for d in requests for s in d.spans), key=lambda s: s.start_ns)
    if not ordered:
        raise ExportError(f"{path} holds no span with a trace and span id; nothing was imported")
    mapped = []
    for start in range(0, len(ordered), route.CHUNK_SPANS):
        mapped += route.map_spans(ordered[start : start + route.CHUNK_SPANS], requests[0])
    rejected = sum(d.rejected for d in requests)  # spans without ids, and any the mapping could not read
    # A run's end after all its spans, as the route stores a request's.
    mapped.sort(key=lambda item: item[1]["type"] == "run.finished")
    run_ids = list(dict.fromkeys(event["runId"] for _, event, _ in mapped))
    try:
        into = Import(db)
    except StoreError as exc:
        raise ExportError(str(exc)) from None
    except sqlite3.Error as exc:
        raise ExportError(f"cannot write to {db} ({exc}); nothing was imported") from None
    try:
        with into.transaction():
            seq = reads.max_seq(into.conn, route.CLIENT_ID)
            items = []
            for service, event, text in mapped:
                seq += 1
                raw, once = route.numbered(event, text, seq)
                items.append(EventItem(route.CLIENT_ID, service, event, raw, float(event["ts"]), once))
            stored = into.write(items)
    except sqlite3.Error as exc:
        raise ExportError(f"cannot write to {db} ({exc}); nothing was imported") from None
    finally:
        into.close()
    return run_ids, stored, rejected
