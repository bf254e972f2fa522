"""The stream tee: the app keeps consuming the SDK's own `Stream` / `MessageStream` /
`APIResponse`; underneath, the HTTP response's byte stream is wrapped so the bytes pass through
unchanged while a recorder reads the Messages events off them (raw shapes), and so that every way
a stream ends reaches the recorder: `Stream.__stream__` closes the response in a `finally`
(anthropic/_streaming.py), so an early `break`, `stream.close()`, a `with` block and an abandoned
generator all call our `close()`. A stream dropped before its first read is finished by a
`weakref.finalize` on the SDK object.

`EventRecorder` assembles the reply as a `Message` body from the events (message_start,
content_block_start / _delta / _stop, message_delta, message_stop) and sends text, tool-input and
thinking deltas to the debugger as `node.token`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from graphmind.adapter import NodeExecution

from ._describe import describe_reply


class EventRecorder:
    """Reads the SSE bytes (or, for `with_streaming_response` without `stream=True`, JSON) as they
    pass; finishes the node once, however the stream ends."""

    def __init__(self, ex: NodeExecution, sse: bool) -> None:
        self.ex = ex
        self.sse = sse
        self.chunks = 0
        self.complete = False  # message_stop arrived: the reply is whole
        self.broken = False  # our parser failed: stop reading, never disturb the app
        self._buf = b""
        self._raw: list[bytes] = []
        self._head: dict[str, Any] = {}
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}
        self._stop: Any = None
        self._usage: dict[str, Any] = {}

    # ---- bytes in ------------------------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        if self.broken or self.complete or self.ex.ended:
            return
        try:
            if not self.sse:
                self._raw.append(data)
                return
            buf = self._buf + data
            if b"\r" in buf:
                buf = buf.replace(b"\r\n", b"\n")
            *blocks, self._buf = buf.split(b"\n\n")
            for block in blocks:
                lines = [line for line in block.split(b"\n") if line.startswith(b"data:")]
                if lines:
                    data_ = b"\n".join(line[6:] if line.startswith(b"data: ") else line[5:] for line in lines)
                    self.event(json.loads(data_))
        except Exception as exc:
            self._broke(exc)

    def _broke(self, exc: Exception) -> None:
        self.broken = True
        self.ex.warn(
            f"[graphmind] could not read an Anthropic stream ({type(exc).__name__}: {exc}); the app's stream is "
            "unaffected, the node shows what was read so far.",
            key="anthropic-stream-parse",
        )

    # ---- events in (dicts) ---------------------------------------------------------------------
    def event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        self.chunks += 1
        if kind == "content_block_delta":
            delta = event.get("delta") or {}
            self.delta(event.get("index", 0), delta.get("type"), delta)
        elif kind == "content_block_start":
            self.block_start(event.get("index", 0), dict(event.get("content_block") or {}))
        elif kind == "message_start":
            message = event.get("message") or {}
            self._head = {k: message.get(k) for k in ("id", "model", "role")}
            self._usage.update({k: v for k, v in (message.get("usage") or {}).items() if v is not None})
        elif kind == "message_delta":
            self._stop = (event.get("delta") or {}).get("stop_reason")
            self._usage.update({k: v for k, v in (event.get("usage") or {}).items() if v is not None})
        elif kind == "message_stop":
            self.complete = True

    def block_start(self, index: int, block: dict[str, Any]) -> None:
        self._blocks[index] = block

    def delta(self, index: int, kind: Any, delta: Any) -> None:
        """One content_block_delta; `delta` is a dict or the SDK's typed delta."""
        get: Callable[[str], Any] = (
            delta.get if isinstance(delta, dict) else lambda k: getattr(delta, k, None)
        )
        block = self._blocks.setdefault(index, {"type": "text", "text": ""})
        if kind == "text_delta":
            text = get("text") or ""
            block["text"] = (block.get("text") or "") + text
            self.ex.token(text)
        elif kind == "input_json_delta":
            part = get("partial_json") or ""
            self._json.setdefault(index, []).append(part)
            if part:
                self.ex.token(part, "tool-args", toolCallId=block.get("id"), toolName=block.get("name"))
        elif kind == "thinking_delta":
            text = get("thinking") or ""
            block["thinking"] = (block.get("thinking") or "") + text
            self.ex.token(text, "reasoning")

    # ---- what the node shows -------------------------------------------------------------------
    def body(self) -> Any:
        """The reply as a Message body assembled from what was read."""
        if not self.sse:
            try:
                return json.loads(b"".join(self._raw) or b"null")
            except ValueError:
                return None
        content = []
        for index, block in sorted(self._blocks.items()):
            parts = self._json.get(index)
            if parts is not None:
                try:
                    block = {**block, "input": json.loads("".join(parts) or "{}")}
                except ValueError:  # cut short mid-arguments: show what arrived
                    block = {**block, "input": "".join(parts)}
            content.append(block)
        return {**self._head, "content": content, "stop_reason": self._stop, "usage": self._usage or None}

    # ---- endings (each finishes the node at most once) -----------------------------------------
    def end(self) -> None:
        """The bytes ran out: the API ended the reply."""
        if not self.sse:
            self.complete = True
        self.finish_node(cut_short=False)

    def close(self) -> None:
        """The response was closed (by the SDK at the end, or by the app early)."""
        self.finish_node(cut_short=not self.complete)

    def fail(self, exc: BaseException) -> None:
        if not self.ex.ended:
            self.ex.fail(exc)

    def finish_node(self, cut_short: bool) -> None:
        if self.ex.ended:
            return
        try:
            output, usage = describe_reply(self.body())
        except Exception:  # never let bookkeeping raise into the app's stream
            output, usage = None, None
        extra: dict[str, Any] = {"streaming": True, "chunks": self.chunks} if self.sse else {}
        self.ex.finish(output, usage=usage, cut_short=cut_short, **extra)


def abandon(recorder: EventRecorder) -> None:
    """`weakref.finalize` callback: the SDK object was dropped, maybe never read."""
    recorder.close()


_TEE_CLASSES: dict[str, tuple[type, type]] = {}


def _classes(module_name: str) -> tuple[type, type]:
    """Tee classes subclassing the httpx2 byte-stream bases (the response checks `isinstance`)."""
    found = _TEE_CLASSES.get(module_name)
    if found is not None:
        return found
    module = sys.modules[module_name]

    class _Forward:
        # anthropic/_streaming.py `Stream._observer` reads `response.stream.stream_observer` (the
        # SDK's own OpenTelemetry spans, anthropic/_tracing.py sets it on the body before `_post`
        # returns) for every item: copied once here; any other attribute comes from the wrapped stream.
        _inner: Any
        stream_observer: Any

        def _forward(self, inner: Any) -> None:
            self._inner = inner
            self.stream_observer = getattr(inner, "stream_observer", None)

        def __getattr__(self, name: str) -> Any:
            if name == "_inner":
                raise AttributeError(name)
            return getattr(self._inner, name)

    class SyncTee(_Forward, module.SyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, recorder: EventRecorder) -> None:
            self._forward(inner)
            self._recorder = recorder

        def __iter__(self) -> Iterator[bytes]:
            recorder = self._recorder
            try:
                for chunk in self._inner:
                    recorder.feed(chunk)
                    yield chunk
            except Exception as exc:
                recorder.fail(exc)
                raise
            recorder.end()

        def close(self) -> None:
            try:
                self._inner.close()
            finally:
                self._recorder.close()

    class AsyncTee(_Forward, module.AsyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, recorder: EventRecorder) -> None:
            self._forward(inner)
            self._recorder = recorder

        async def __aiter__(self) -> AsyncIterator[bytes]:
            recorder = self._recorder
            try:
                async for chunk in self._inner:
                    recorder.feed(chunk)
                    yield chunk
            except Exception as exc:
                recorder.fail(exc)
                raise
            recorder.end()

        async def aclose(self) -> None:
            try:
                await self._inner.aclose()
            finally:
                self._recorder.close()

    _TEE_CLASSES[module_name] = (SyncTee, AsyncTee)
    return SyncTee, AsyncTee


def tee(response: Any, recorder: EventRecorder, is_async: bool) -> None:
    """Wraps `response.stream` in place."""
    if response.is_stream_consumed:
        # A transport that hands over a body already in memory (httpx2.MockTransport, a `content=`
        # response): `iter_bytes()` serves `response.content` and never touches `.stream`.
        recorder.feed(response.content)
        recorder.feed(b"\n\n")
        recorder.end()
        return
    sync_cls, async_cls = _classes(type(response).__module__.split(".")[0])
    response.stream = (async_cls if is_async else sync_cls)(response.stream, recorder)
