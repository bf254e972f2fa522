"""`POST /v1/traces`: OTLP/HTTP traces (protobuf or JSON, gzip or not) stored as observe-only runs.

The Guard (access/guard.py) has already checked the token and the Host; this route also refuses every
browser `Origin` not listed in GRAPHMIND_ALLOWED_ORIGINS (the viewer never posts traces). Bounds:
a body over MAX_BODY is a 413 (read and dropped up to DRAIN_MAX so the client reads the answer),
a connection over RATE requests/s a 429, an unreadable body a 400 with the reason; the parse runs
on one worker thread, never on the event loop. Every answer is counted in `GET /api/health`.
Events go through the store's one writer as the client `otlp`, with a hub-wide `seq`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter, OrderedDict
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

# The protocol's one 512 KB rule (docs/protocol.md, "Oversized payloads"), as the SDKs apply it: spans
# from other SDKs are cut the same way here, since no GraphMind client built them.
from graphmind import protocol as proto

from ..base.jsontext import JSON, dumps
from ..ingest.lane import BACKLOG_LOW_BYTES
from ..store import Store, reads
from . import decode, spans

CLIENT_ID = "otlp"  # the clientId of every run that came in over OTLP: observe-only
MAX_BODY = 20 * 1024 * 1024  # as the OpenTelemetry Collector's default max_request_body_size
DRAIN_MAX = 64 * 1024 * 1024
RATE = 100.0  # requests per second per connection, in bursts of up to BURST
BURST = 200.0
# A request's spans are mapped and stored this many at a time, and the next chunk waits until the
# writer's queue is below CHUNK_BACKLOG events: the memory a request costs is bounded by its body
# and its decoded spans, not by the events it makes (0.5 MB of gzip made 100,000 events, ~290 MB).
CHUNK_SPANS = 1000
CHUNK_BACKLOG = 5000
# Bodies decoded and stored at once: the parse runs on one thread anyway, so more would only hold
# more decoded spans in memory. The others wait their turn (up to IN_FLIGHT_MAX in all, then 503).
WORK_MAX = 1
WORK_WAIT_S = 5.0
WORK_RETRY_AFTER = 2
BUCKETS_MAX = 1024
IN_FLIGHT_MAX = 8  # requests read or parsed at once (each body up to MAX_BODY in memory); more: 503
CONTENT_TYPES = {"application/x-protobuf": "protobuf", "application/json": "json"}
PAYLOAD_FIELDS = ("input", "output", "attrs", "meta")


def max_seq(conn: Any) -> int:
    return reads.max_seq(conn, CLIENT_ID)


class _Refused(Exception):
    def __init__(self, status: int, reason: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.headers = headers or {}


class OtlpIngest:
    def __init__(self, store: Store, allowed_origins: list[str] | None, seq: int) -> None:
        self.store = store
        self.allowed = allowed_origins
        self.seq = seq
        self.work = asyncio.Semaphore(WORK_MAX)
        self.buckets: OrderedDict[tuple[Any, ...], list[float]] = OrderedDict()
        self.parser = ThreadPoolExecutor(1, thread_name_prefix="graphmind-otlp-parse")
        self.counts: Counter[str] = Counter()
        self.last_error: str | None = None
        self.in_flight = 0

    def stats(self) -> dict[str, Any]:
        c = self.counts
        skipped = self.store.once_skipped
        return {
            "requests": c["requests"],
            "inFlight": self.in_flight,
            "accepted": c["accepted"],
            "spans": c["spans"],
            # A retried request's, stored once: its spans, and all its events.
            "duplicateSpans": skipped.get("span", 0),
            "duplicateEvents": sum(skipped.values()),
            "rejectedSpans": c["rejected"],
            "refused": {k[8:]: v for k, v in sorted(c.items()) if k.startswith("refused:")},
            "lastError": self.last_error,
        }

    def close(self) -> None:
        self.parser.shutdown(wait=False, cancel_futures=True)

    # -- the route -------------------------------------------------------------------------------

    async def __call__(self, request: Request) -> Response:
        self.counts["requests"] += 1
        kind = "json"
        try:
            self._check_origin(request)
            kind = self._content_type(request)
            self._rate(request)
            if self.in_flight >= IN_FLIGHT_MAX:
                raise _Refused(
                    503, f"{IN_FLIGHT_MAX} requests are being read already; retry later", {"Retry-After": "1"}
                )
            self.in_flight += 1
            try:
                body = await self._body(request)
                encoding = request.headers.get("content-encoding", "")
                await self._take_work_slot()
                try:
                    decoded = await self._ingest(body, encoding, kind)
                finally:
                    self.work.release()
            finally:
                self.in_flight -= 1
        except _Refused as exc:
            return self._refuse(exc.status, str(exc), exc.headers)
        except decode.TooLarge as exc:
            return self._refuse(413, str(exc))
        except decode.BadPayload as exc:
            return self._refuse(400, str(exc))
        except ClientDisconnect:
            self.counts["refused:disconnect"] += 1
            return Response(status_code=400)
        self.counts["accepted"] += 1
        self.counts["spans"] += len(decoded.spans)
        self.counts["rejected"] += decoded.rejected
        if decoded.rejected:
            self.last_error = "; ".join(decoded.reasons)
        return _answer(kind, decoded)

    def _refuse(self, status: int, reason: str, headers: dict[str, str] | None = None) -> Response:
        self.counts[f"refused:{status}"] += 1
        self.last_error = f"{status}: {reason}"
        return JSON({"error": reason}, status_code=status, headers=headers)

    def _check_origin(self, request: Request) -> None:
        origin = request.headers.get("origin")
        if origin is None or self.allowed is None or origin.rstrip("/") in self.allowed:
            return
        raise _Refused(
            403,
            f"Origin {origin!r} may not post traces: /v1/traces takes OTLP exporters (no browser pages); "
            f"set GRAPHMIND_ALLOWED_ORIGINS={origin} to allow that page",
        )

    @staticmethod
    def _content_type(request: Request) -> str:
        given = request.headers.get("content-type", "")
        kind = CONTENT_TYPES.get(given.split(";", 1)[0].strip().lower())
        if kind is None:
            raise _Refused(
                415,
                f"Content-Type {given or '(none)'!r} is not OTLP/HTTP: send application/x-protobuf or "
                "application/json (OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf or http/json)",
            )
        return "application/json" if kind == "json" else "application/x-protobuf"

    def _rate(self, request: Request) -> None:
        key = tuple(request.scope.get("client") or ("?",))
        now = time.monotonic()
        bucket = self.buckets.pop(key, None) or [BURST, now]
        bucket[0] = min(BURST, bucket[0] + (now - bucket[1]) * RATE)
        bucket[1] = now
        self.buckets[key] = bucket
        while len(self.buckets) > BUCKETS_MAX:
            self.buckets.popitem(last=False)
        if bucket[0] < 1:
            raise _Refused(
                429,
                f"more than {RATE:.0f} requests a second on one connection; retry later",
                {"Retry-After": "1"},
            )
        bucket[0] -= 1

    @staticmethod
    async def _body(request: Request) -> bytes:
        length = request.headers.get("content-length")
        too_big = f"the body is over {MAX_BODY // (1024 * 1024)} MiB; export smaller batches (OTEL_BSP_MAX_EXPORT_BATCH_SIZE)"
        if length is not None and length.isdigit() and int(length) > DRAIN_MAX:
            raise _Refused(413, too_big, {"Connection": "close"})
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size <= MAX_BODY:
                chunks.append(chunk)
            elif size > DRAIN_MAX:
                break
        if size > MAX_BODY:
            raise _Refused(413, too_big, {"Connection": "close"})
        return b"".join(chunks)

    async def _take_work_slot(self) -> None:
        """Waits for the one decoding slot; past WORK_WAIT_S a 503 the exporter retries (its own
        timeout is 10 s by default: better a clear retry than a request it gave up on)."""
        try:
            await asyncio.wait_for(self.work.acquire(), WORK_WAIT_S)
        except TimeoutError:
            raise _Refused(
                503,
                "busy storing other OTLP requests; retry later (or export smaller batches)",
                {"Retry-After": str(WORK_RETRY_AFTER)},
            ) from None

    async def _ingest(self, body: bytes, encoding: str, kind: str) -> decode.Decoded:
        """Decodes the body, then maps and stores its spans CHUNK_SPANS at a time, waiting for the
        writer between chunks: a request's events are never all in memory (nor all queued) at once."""
        loop = asyncio.get_running_loop()
        decoded = await loop.run_in_executor(self.parser, decode_body, body, encoding, kind)
        del body
        ordered = decoded.spans
        ends: list[tuple[str, dict[str, Any], str]] = []  # a run's end after all its request's spans
        for start in range(0, len(ordered), CHUNK_SPANS):
            chunk = ordered[start : start + CHUNK_SPANS]
            items = await loop.run_in_executor(self.parser, map_spans, chunk, decoded)
            ends += [item for item in items if item[1]["type"] == "run.finished"]
            await self._store([item for item in items if item[1]["type"] != "run.finished"])
        await self._store(ends)
        return decoded

    # -- on the loop ---------------------------------------------------------------------------------

    async def _store(self, items: list[tuple[str, dict[str, Any], str]]) -> None:
        for service, event, text in items:
            self.seq += 1
            raw, once = numbered(event, text, self.seq)
            self.store.put_event(CLIENT_ID, service, event, raw, float(event["ts"]), once=once)
        store = self.store
        if store.backlog > CHUNK_BACKLOG or store.backlog_bytes > BACKLOG_LOW_BYTES:
            await store.wait_backlog_below(CHUNK_BACKLOG, BACKLOG_LOW_BYTES)


def numbered(event: dict[str, Any], text: str, seq: int) -> tuple[str, str]:
    """Gives `event` its hub-wide `seq`: (its stored text, its once key). `graphmind import` of an
    OTLP file stores a trace the same way (export/import_otlp.py)."""
    event["seq"] = seq
    raw = f'{text[:-1]},"seq":{seq}}}'  # the text ends with the object's "}"
    # An exporter retries a request the hub took when the answer came late: the writer stores each
    # (run, event type, span) of OTLP once, checked in the database itself.
    kind, instance = event["type"], event.get("instanceId")
    # "span:" marks the event that starts a span (health counts those as duplicateSpans).
    starts = kind == "node.started" or (kind == "run.started" and instance != event["runId"])
    return raw, f"{'span:' if starts else ''}{kind}:{instance}"


# -- on the parser thread ------------------------------------------------------------------------------


def decode_body(body: bytes, encoding: str, content_type: str) -> decode.Decoded:
    """The request's spans, oldest start first (so a run's root is usually stored first)."""
    decoded = decode.decode(decode.inflate(body, encoding), content_type)
    decoded.spans.sort(key=lambda s: s.start_ns)
    return decoded


def map_spans(chunk: list[decode.Span], decoded: decode.Decoded) -> list[tuple[str, dict[str, Any], str]]:
    """A chunk of spans as events in time order, each with its text but for `seq` (given on the
    loop, in order)."""
    timed: list[tuple[float, int, int, str, dict[str, Any]]] = []
    for i, span in enumerate(chunk):
        try:
            mapped = spans.events(span)
        except Exception as exc:  # a shape the mapping did not foresee: that span only, named
            decoded.reject(f"span {span.span_id} could not be read ({type(exc).__name__}: {exc})"[:300])
            continue
        for ts, order, event in mapped:
            for key in PAYLOAD_FIELDS:
                if key in event:
                    event[key] = proto.shrink_oversized(event[key])
            timed.append((ts, order, i, span.service, event))
    timed.sort(key=lambda t: t[:3])
    return [(service, event, _text(event)) for _, _, _, service, event in timed]


def _text(event: dict[str, Any]) -> str:
    raw = dumps(event)
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate in a key: kept as its escape
        raw = json.dumps(event, separators=(",", ":"))
    return raw


def _answer(content_type: str, decoded: decode.Decoded) -> Response:
    """ExportTraceServiceResponse: empty, or partialSuccess naming the spans not taken."""
    message = "; ".join(decoded.reasons)
    if content_type == "application/json":
        body: dict[str, Any] = {}
        if decoded.rejected:
            body["partialSuccess"] = {"rejectedSpans": str(decoded.rejected), "errorMessage": message}
        return JSON(body)
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    answer = ExportTraceServiceResponse()
    if decoded.rejected:
        answer.partial_success.rejected_spans = decoded.rejected
        answer.partial_success.error_message = message
    return Response(answer.SerializeToString(), media_type="application/x-protobuf")
