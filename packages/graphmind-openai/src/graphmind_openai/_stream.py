"""The stream tee: the app keeps consuming the SDK's own `Stream` / `ChatCompletionStream` /
`APIResponse`; underneath, the HTTP response's byte stream is wrapped so the bytes pass through
unchanged while a recorder reads the SSE events off them.

Why the byte stream (`httpx2.Response.stream`) and not the SDK's `Stream._iterator`: every streamed
call shape ends up reading those bytes (`create(stream=True)`, `.stream()`, `with_raw_response`
+ `.parse()`, `with_streaming_response` + `iter_lines()`), and every way a stream ends calls its
`close()`: `Stream.__stream__` closes the response in a `finally` (openai/_streaming.py), so an
early `break`, `stream.close()`, a `with` block and an abandoned generator all reach us. A stream
that is dropped before its first read is finished by a `weakref.finalize` on the SDK object.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

from graphmind.adapter import Engine, NodeExecution

from ._apis import Api
from ._common import StreamState


class StreamRecorder:
    """Reads SSE (or, for `with_streaming_response` without `stream=True`, JSON) bytes as they pass;
    sends text / tool-argument deltas as `node.token`; finishes the node once, however the stream ends."""

    def __init__(self, api: Api, ex: NodeExecution, sse: bool, engine: Engine) -> None:
        self.api = api
        self.ex = ex
        self.sse = sse
        self.chunks = 0
        self.broken = False  # our parser failed: stop reading, never disturb the app
        self.state = StreamState(engine=engine)
        self._buf = b""
        self._raw: list[bytes] = []

    @property
    def complete(self) -> bool:
        """The provider said the reply is whole ([DONE] / response.completed)."""
        return self.state.complete

    @complete.setter
    def complete(self, value: bool) -> None:
        self.state.complete = value

    # ---- bytes in ------------------------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        if self.broken or self.complete or self.ex.ended:
            return  # complete: the SDK may drain the rest (openai/_streaming_cleanup.py drain_response_async)
        try:
            if not self.sse:
                self._raw.append(data)
                return
            buf = self._buf + data
            if b"\r" in buf:
                buf = buf.replace(b"\r\n", b"\n")
            *blocks, self._buf = buf.split(b"\n\n")
            for block in blocks:
                self._block(block)
        except Exception as exc:
            self.broken = True
            self.ex.warn(
                f"[graphmind] could not read an OpenAI stream ({type(exc).__name__}: {exc}); the app's stream is "
                "unaffected, the node shows what was read so far.",
                key="openai-stream-parse",
            )

    def _block(self, block: bytes) -> None:
        # Fast path: what OpenAI sends, one `data:` line, after an optional `event:` line.
        if block.startswith(b"data: ") and b"\n" not in block:
            data = block[6:]
        elif block.startswith(b"event: ") and block.count(b"\n") == 1 and b"\ndata: " in block:
            data = block[block.index(b"\ndata: ") + 7 :]
        else:
            lines = [line for line in block.split(b"\n") if line.startswith(b"data:")]
            if not lines:
                return  # a comment, a bare event name, a keep-alive
            data = b"\n".join(line[6:] if line.startswith(b"data: ") else line[5:] for line in lines)
        if data.startswith(b"[DONE]"):
            self.complete = True
            return
        self.chunks += 1
        self.api.on_sse(self.state, json.loads(data), self.ex)

    # ---- what the node shows -------------------------------------------------------------------
    def body(self) -> Any:
        """The reply as a response body assembled from what was read."""
        if not self.sse:
            try:
                return json.loads(b"".join(self._raw) or b"null")
            except ValueError:
                return None
        return self.api.stream_body(self.state)

    # ---- endings (each finishes the node at most once) -----------------------------------------
    def end(self) -> None:
        """The bytes ran out: the provider ended the reply."""
        if not self.sse:
            self.complete = True
        self._finish_node(cut_short=False)

    def close(self) -> None:
        """The response was closed (by the SDK at the end, or by the app early)."""
        self._finish_node(cut_short=not self.complete)

    def fail(self, exc: BaseException) -> None:
        if not self.ex.ended:
            self.ex.fail(exc)

    def _finish_node(self, cut_short: bool) -> None:
        if self.ex.ended:
            return
        try:
            output, usage = self.api.describe_reply(self.body())
        except Exception:  # never let bookkeeping raise into the app's stream
            output, usage = None, None
        extra: dict[str, Any] = {"streaming": True, "chunks": self.chunks} if self.sse else {}
        self.ex.finish(output, usage=usage, cut_short=cut_short, **extra)


def abandon(recorder: StreamRecorder) -> None:
    """`weakref.finalize` callback: the SDK object was dropped, maybe never read."""
    recorder.close()


_TEE_CLASSES: dict[str, tuple[type, type]] = {}


def _classes(module_name: str) -> tuple[type, type]:
    """Tee classes subclassing that httpx flavour's byte-stream bases (the response checks `isinstance`)."""
    found = _TEE_CLASSES.get(module_name)
    if found is not None:
        return found
    module = sys.modules[module_name]

    class SyncTee(module.SyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, recorder: StreamRecorder) -> None:
            self._inner = inner
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

    class AsyncTee(module.AsyncByteStream):  # type: ignore[name-defined,misc]
        def __init__(self, inner: Any, recorder: StreamRecorder) -> None:
            self._inner = inner
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


def tee(response: Any, recorder: StreamRecorder, is_async: bool) -> None:
    """Wraps `response.stream` in place (httpx2, or legacy httpx when the app passed its own client)."""
    if response.is_stream_consumed:
        # A transport that hands over a body already in memory (httpx2.MockTransport, a `content=`
        # response): `iter_bytes()` serves `response.content` and never touches `.stream`.
        recorder.feed(response.content)
        recorder.feed(b"\n\n")
        recorder.end()
        return
    sync_cls, async_cls = _classes(type(response).__module__.split(".")[0])
    response.stream = (async_cls if is_async else sync_cls)(response.stream, recorder)
