"""The cheaper tee for the SDK's own `Stream` / `AsyncStream` (`create(stream=True)` and the
`messages.stream()` helper, which iterates one): read the typed events the SDK already decoded
instead of decoding the SSE bytes a second time.

`stream._iterator` (anthropic/_streaming.py `Stream._iterator`, a cached_property that `__iter__` /
`__next__` read) is set on the instance to a generator that hands on the very same items. How the
stream ends still comes from the byte stream (`_stream.tee` with this recorder): the SDK closes the
response in `__stream__`'s `finally`, so a close while our generator is inside `next()` is the SDK
finishing, and a close while it is suspended is the app closing early. Raw shapes
(`with_raw_response`, `with_streaming_response`) keep the byte-level recorder.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from ._stream import EventRecorder


def _usage(usage: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"):
        value = getattr(usage, key, None)
        if value is not None:
            out[key] = value
    return out


class TypedRecorder(EventRecorder):
    def __init__(self, ex: Any) -> None:
        super().__init__(ex, sse=True)
        self.reading = False  # inside the SDK's next(): a close now is the SDK's own end-of-stream close

    # Bytes pass untouched; only the ending is taken from the byte stream.
    def feed(self, data: bytes) -> None:
        return None

    def end(self) -> None:
        if not self.reading:
            self.finish_node(cut_short=False)

    def close(self) -> None:
        if not self.reading:
            self.finish_node(cut_short=not self.complete)

    def item(self, event: Any) -> None:
        if self.broken:
            return
        try:
            self.chunks += 1
            kind = event.type
            if kind == "content_block_delta":
                delta = event.delta
                self.delta(event.index, delta.type, delta)
            elif kind == "content_block_start":
                block = event.content_block
                entry: dict[str, Any] = {"type": block.type}
                if block.type in ("tool_use", "server_tool_use"):
                    entry.update(id=block.id, name=block.name, input={})
                elif block.type == "text":
                    entry["text"] = block.text
                elif block.type == "thinking":
                    entry["thinking"] = block.thinking
                self.block_start(event.index, entry)
            elif kind == "message_start":
                message = event.message
                self._head = {"id": message.id, "model": message.model, "role": message.role}
                self._usage.update(_usage(message.usage))
            elif kind == "message_delta":
                self._stop = event.delta.stop_reason
                self._usage.update(_usage(event.usage))
            elif kind == "message_stop":
                self.complete = True
        except Exception as exc:
            self._broke(exc)


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
    """Sets `stream._iterator` to a recording generator over the same items."""
    inner = stream._iterator
    stream._iterator = record_async(inner, recorder) if is_async else record_sync(inner, recorder)
