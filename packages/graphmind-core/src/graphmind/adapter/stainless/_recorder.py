"""The stream recorders: the node's side of a stream the app reads.

`StreamRecorder` reads the SSE bytes (or, for `with_streaming_response` without `stream=True`, JSON)
as they pass the byte-stream tee (`_tee.py`) and hands each event to the API's `StreamReader`.
`TypedRecorder` is the cheaper one for the SDK's own `Stream` / `AsyncStream` (`create(stream=True)`
and the `.stream()` helpers, which iterate one): it reads the items the SDK already decoded instead
of decoding the bytes a second time. `stream._iterator` (`_streaming.py` in both SDKs: `__iter__` /
`__next__` read it) is replaced by a generator that hands on the very same items. How the stream
ends still comes from the byte stream: the SDK closes the response in `__stream__`'s `finally`, so
a close while our generator is inside `next()` is the SDK finishing, and a close while it is
suspended is the app closing early. Either recorder finishes the node once, however the stream ends;
a stream dropped before its first read is finished by a `weakref.finalize` on the SDK object.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from .. import Owned
from ._api import Api
from ._exchange import Sdk

if TYPE_CHECKING:
    from .. import Engine, NodeExecution


class StreamRecorder:
    """Reads SSE (or JSON) bytes as they pass; never disturbs the app's stream."""

    def __init__(self, sdk: Sdk, api: Api, ex: NodeExecution, sse: bool, engine: Engine) -> None:
        self.sdk = sdk
        self.api = api
        self.ex = ex
        self.sse = sse
        self.chunks = 0
        self.broken = False  # our parser failed: stop reading, never disturb the app
        self.reader = reader = api.reader(ex, engine)
        self._event = reader.event
        self._buf = b""
        self._raw: list[bytes] = []

    @property
    def complete(self) -> bool:
        """The provider said the reply is whole."""
        return self.reader.complete

    # ---- bytes in ------------------------------------------------------------------------------
    def feed(self, data: bytes) -> None:
        if self.broken or self.reader.complete or self.ex.ended:
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
            self.broke(exc, "stream", "stream-parse")

    def _block(self, block: bytes) -> None:
        # Fast path: what the providers send, one `data:` line, after an optional `event:` line.
        if block.startswith(b"data: ") and b"\n" not in block:
            data = block[6:]
        elif block.startswith(b"event: ") and block.count(b"\n") == 1 and b"\ndata: " in block:
            data = block[block.index(b"\ndata: ") + 7 :]
        else:
            lines = [line for line in block.split(b"\n") if line.startswith(b"data:")]
            if not lines:
                return  # a comment, a bare event name, a keep-alive
            data = b"\n".join(line[6:] if line.startswith(b"data: ") else line[5:] for line in lines)
        if data.startswith(b"[DONE]"):  # OpenAI's end marker (openai/_streaming.py Stream.__stream__)
            self.reader.complete = True
            return
        self.chunks += 1
        self._event(json.loads(data))

    def broke(self, exc: Exception, what: str, key: str) -> None:
        self.broken = True
        name = self.sdk.name
        article = "an" if name[:1].upper() in "AEIOU" else "a"
        self.ex.warn(
            f"[graphmind] could not read {article} {name} {what} ({type(exc).__name__}: {exc}); the app's stream "
            "is unaffected, the node shows what was read so far.",
            key=f"{self.sdk.key}-{key}",
        )

    # ---- what the node shows -------------------------------------------------------------------
    def body(self) -> Any:
        """The reply as a response body assembled from what was read."""
        if not self.sse:
            try:
                return json.loads(b"".join(self._raw) or b"null")
            except ValueError:
                return None
        return self.reader.body()

    # ---- endings (each finishes the node at most once) -----------------------------------------
    def end(self) -> None:
        """The bytes ran out: the provider ended the reply."""
        if not self.sse:
            self.reader.complete = True
        self.finish_node(cut_short=False)

    def close(self) -> None:
        """The response was closed (by the SDK at the end, or by the app early)."""
        self.finish_node(cut_short=not self.reader.complete)

    def fail(self, exc: BaseException) -> None:
        if not self.ex.ended:
            self.ex.fail(exc)

    def finish_node(self, cut_short: bool) -> None:
        if self.ex.ended:
            return
        try:
            described = self.api.describe_body(self.body())
        except Exception:  # never let bookkeeping raise into the app's stream
            described = (None, None)
        extra: dict[str, Any] = {"streaming": True, "chunks": self.chunks} if self.sse else {}
        if type(described) is Owned:
            extra["owned"] = True
        self.ex.finish(described[0], usage=described[1], cut_short=cut_short, **extra)


class TypedRecorder(StreamRecorder):
    """Reads the SDK's decoded items; only the ending is taken from the byte stream."""

    def __init__(self, sdk: Sdk, api: Api, ex: NodeExecution, engine: Engine) -> None:
        super().__init__(sdk, api, ex, True, engine)
        self.reading = False  # inside the SDK's next(): a close now is the SDK's own end-of-stream close

    def feed(self, data: bytes) -> None:  # bytes pass untouched
        return None

    def end(self) -> None:
        if not self.reading:
            self.finish_node(cut_short=False)

    def close(self) -> None:
        if not self.reading:
            self.finish_node(cut_short=not self.reader.complete)

    def item_failed(self, exc: Exception) -> None:
        self.broke(exc, "stream item", "stream-item")

    def body(self) -> Any:
        return self.reader.typed_body()


def record_sync(inner: Iterator[Any], recorder: TypedRecorder) -> Iterator[Any]:
    read = recorder.reader.item
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
            if not recorder.broken:  # the reader is called from here, not through a method: once per item
                try:
                    recorder.chunks += 1
                    read(item)
                except Exception as exc:
                    recorder.item_failed(exc)
            yield item
    finally:
        # Not inside next() any more, whatever ended it: a KeyboardInterrupt / CancelledError raised
        # there (neither is an Exception) must not leave `reading` set, or close() would skip the node.
        recorder.reading = False
        if not recorder.ex.ended:  # closed or dropped while suspended: the app stopped reading
            recorder.close()
            close = getattr(inner, "close", None)
            if close is not None:
                close()


async def record_async(inner: AsyncIterator[Any], recorder: TypedRecorder) -> AsyncIterator[Any]:
    read = recorder.reader.item
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
            if not recorder.broken:
                try:
                    recorder.chunks += 1
                    read(item)
                except Exception as exc:
                    recorder.item_failed(exc)
            yield item
    finally:
        recorder.reading = False  # as in record_sync: a cancelled task ends inside __anext__
        if not recorder.ex.ended:
            recorder.close()
            aclose = getattr(inner, "aclose", None)
            if aclose is not None:
                await aclose()


def tee_stream(stream: Any, recorder: TypedRecorder, is_async: bool) -> None:
    """Replaces `stream._iterator` with a recording generator over the same items."""
    inner = stream._iterator
    stream._iterator = record_async(inner, recorder) if is_async else record_sync(inner, recorder)


def abandon(recorder: StreamRecorder) -> None:
    """`weakref.finalize` callback: the SDK object was dropped, maybe never read."""
    recorder.close()


def keep_alive(result: Any, recorder: StreamRecorder) -> None:
    try:
        weakref.finalize(result, abandon, recorder)
    except TypeError:  # an object without weakref support: its stream still ends through close()
        pass
