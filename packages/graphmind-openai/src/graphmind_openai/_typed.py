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

from ._describe import CHAT
from ._stream import StreamRecorder


class TypedRecorder(StreamRecorder):
    def __init__(self, api: str, ex: Any) -> None:
        super().__init__(api, ex, sse=True)
        self.reading = False  # inside the SDK's next(): a close now is the SDK's own end-of-stream close
        self._status: Any = None
        self._model: Any = None
        self._out_calls: list[dict[str, Any]] = []

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
            if self.api == CHAT:
                self._chat_item(obj)
            else:
                self._responses_item(obj)
        except Exception as exc:
            self.broken = True
            self.ex.warn(
                f"[graphmind] could not read an OpenAI stream item ({type(exc).__name__}: {exc}); the app's stream "
                "is unaffected, the node shows what was read so far.",
                key="openai-stream-item",
            )

    def _chat_item(self, chunk: Any) -> None:
        if not self._head:
            self._head = {"id": chunk.id, "model": chunk.model, "created": chunk.created}
        usage = chunk.usage
        if usage is not None:
            self._usage = {
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.total_tokens,
            }
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            delta = choice.delta
            content = delta.content
            if content:
                self._text.append(content)
                self.ex.token(content)
            calls = delta.tool_calls
            if calls:
                for call in calls:
                    slot = self._calls.setdefault(call.index, {"id": None, "name": None, "arguments": ""})
                    if call.id:
                        slot["id"] = call.id
                    fn = call.function
                    if fn is not None:
                        if fn.name:
                            slot["name"] = fn.name
                        if fn.arguments:
                            slot["arguments"] += fn.arguments
                            self.ex.token(
                                fn.arguments, "tool-args", toolCallId=slot["id"], toolName=slot["name"]
                            )
            if choice.finish_reason:
                self._finish = choice.finish_reason
                self.complete = True

    def _responses_item(self, event: Any) -> None:
        kind = event.type
        if kind == "response.output_text.delta":
            self._text.append(event.delta)
            self.ex.token(event.delta)
        elif kind == "response.function_call_arguments.delta":
            item = self._items.get(event.item_id, {})
            self.ex.token(event.delta, "tool-args", toolCallId=item.get("call_id"), toolName=item.get("name"))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            self.ex.token(event.delta, "reasoning")
        elif kind in ("response.output_item.added", "response.output_item.done"):
            item = event.item
            if item.type == "function_call":
                entry = {
                    "type": "function_call",
                    "call_id": item.call_id,
                    "name": item.name,
                    "arguments": item.arguments,
                }
                if item.id:
                    self._items[item.id] = entry
                if kind == "response.output_item.done":
                    self._out_calls.append(entry)
        elif kind in ("response.completed", "response.failed", "response.incomplete"):
            response = event.response
            self._status, self._model = response.status, response.model
            usage = response.usage
            if usage is not None:
                self._usage = {
                    "input_tokens": usage.input_tokens,
                    "output_tokens": usage.output_tokens,
                    "total_tokens": usage.total_tokens,
                }
            self.complete = True

    def body(self) -> Any:
        if self.api == CHAT:
            return super().body()
        output: list[dict[str, Any]] = []
        if self._text:
            output.append(
                {"type": "message", "content": [{"type": "output_text", "text": "".join(self._text)}]}
            )
        output.extend(self._out_calls)
        return {"output": output, "status": self._status, "model": self._model, "usage": self._usage}


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
