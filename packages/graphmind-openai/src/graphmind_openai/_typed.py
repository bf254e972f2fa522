"""The cheaper tee for the SDK's own `Stream` / `AsyncStream` (create(stream=True) and the
`.stream()` helpers, which iterate one): read the typed chunks the SDK already decoded instead of
decoding the SSE bytes a second time.

`stream._iterator` (openai/_streaming.py `Stream.__init__`: `self._iterator = self.__stream__()`,
which `__iter__` / `__next__` read) is replaced by a generator that hands on the very same items.
How the stream ends still comes from the byte stream (`_stream.tee` with this recorder): the SDK
closes the response in `__stream__`'s `finally`, so a close while our generator is inside
`next()` is the SDK finishing, and a close while it is suspended is the app closing early.
Raw shapes (`with_raw_response`, `with_streaming_response`) keep the byte-level recorder.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from graphmind.adapter import Engine

from ._apis import Api
from ._stream import StreamRecorder


class TypedRecorder(StreamRecorder):
    def __init__(self, api: Api, ex: Any, engine: Engine) -> None:
        super().__init__(api, ex, sse=True, engine=engine)
        self.reading = False  # inside the SDK's next(): a close now is the SDK's own end-of-stream close

    # Bytes pass untouched; only the ending is taken from the byte stream.
    def feed(self, data: bytes) -> None:
        return None

    def end(self) -> None:
        if not self.reading:
            self._finish_node(cut_short=False)

    def close(self) -> None:
        if not self.reading:
            self._finish_node(cut_short=not self.complete)

    # ---- typed items ---------------------------------------------------------------------------
    def item(self, obj: Any) -> None:
        if self.broken:
            return
        try:
            self.chunks += 1
            self.api.on_item(self.state, obj, self.ex)
        except Exception as exc:
            self.broken = True
            self.ex.warn(
                f"[graphmind] could not read an OpenAI stream item ({type(exc).__name__}: {exc}); the app's stream "
                "is unaffected, the node shows what was read so far.",
                key="openai-stream-item",
            )

    def body(self) -> Any:
        return self.api.typed_body(self.state)


def record_sync(inner: Iterator[Any], recorder: TypedRecorder) -> Iterator[Any]:
    try:
        while True:
            recorder.reading = True
            try:
                item = next(inner)
            except StopIteration:
                recorder.reading = False
                recorder.end()
                return
            except Exception as exc:
                recorder.reading = False
                recorder.fail(exc)
                raise
            recorder.reading = False
            recorder.item(item)
            yield item
    finally:
        if not recorder.ex.ended:  # closed or dropped while suspended: the app stopped reading
            recorder.close()
            close = getattr(inner, "close", None)
            if close is not None:
                close()


async def record_async(inner: AsyncIterator[Any], recorder: TypedRecorder) -> AsyncIterator[Any]:
    try:
        while True:
            recorder.reading = True
            try:
                item = await inner.__anext__()
            except StopAsyncIteration:
                recorder.reading = False
                recorder.end()
                return
            except Exception as exc:
                recorder.reading = False
                recorder.fail(exc)
                raise
            recorder.reading = False
            recorder.item(item)
            yield item
    finally:
        if not recorder.ex.ended:
            recorder.close()
            aclose = getattr(inner, "aclose", None)
            if aclose is not None:
                await aclose()


def tee_stream(stream: Any, recorder: TypedRecorder, is_async: bool) -> None:
    """Replaces `stream._iterator` with a recording generator over the same items."""
    inner = stream._iterator
    stream._iterator = record_async(inner, recorder) if is_async else record_sync(inner, recorder)
