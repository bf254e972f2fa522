"""The byte-stream tee: the app keeps consuming the SDK's own `Stream` / helper stream /
`APIResponse`; underneath, the HTTP response's byte stream (`response.stream`) is wrapped so the
bytes pass through unchanged while a recorder reads them.

Why the byte stream: every streamed call shape ends up reading those bytes (`create(stream=True)`,
`.stream()`, `with_raw_response` + `.parse()`, `with_streaming_response` + `iter_lines()`), and
every way a stream ends calls its `close()`: `Stream.__stream__` closes the response in a `finally`
(`_streaming.py` in both SDKs), so an early `break`, `stream.close()`, a `with` block and an
abandoned generator all reach the recorder.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

from ._recorder import StreamRecorder

_TEE_CLASSES: dict[str, tuple[type, type]] = {}


def _classes(module_name: str) -> tuple[type, type]:
    """Tee classes subclassing that httpx flavour's byte-stream bases (the response checks `isinstance`)."""
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
        def __init__(self, inner: Any, recorder: StreamRecorder) -> None:
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
        def __init__(self, inner: Any, recorder: StreamRecorder) -> None:
            self._forward(inner)
            self._recorder = recorder

        async def __aiter__(self) -> AsyncIterator[bytes]:
            recorder = self._recorder
            # Closed explicitly: an async generator left to the loop's finalizer closes later, in a
            # task of its own (anthropic's AsyncSpanEndingStream closes its inner one for this too).
            chunks = self._inner.__aiter__()
            try:
                async for chunk in chunks:
                    recorder.feed(chunk)
                    yield chunk
            except Exception as exc:
                recorder.fail(exc)
                raise
            finally:
                aclose = getattr(chunks, "aclose", None)
                if aclose is not None:
                    await aclose()
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
