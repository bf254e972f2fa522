"""A LiteLLM stream the app reads, recorded as it is read: tokens reach the hub chunk by chunk, and
the node finishes when the stream ends, fails, is closed, or is dropped half read (cut short).

The app keeps LiteLLM's own `CustomStreamWrapper`: the instance's class is swapped for a subclass
that records each chunk its `__next__` / `__anext__` returns
(litellm/litellm_core_utils/streaming_handler.py: `CustomStreamWrapper.__next__` line 2327,
`__anext__` line 2533, `close` 626, `aclose` 640 in litellm 1.110.2), so `isinstance` and every
attribute the app uses still hold. A stream dropped without `close()` finishes through a
`weakref.finalize`.
"""

from __future__ import annotations

import asyncio
import weakref
from typing import Any, cast

from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper

from graphmind.adapter import NodeExecution

from ._describe import usage_of


class StreamRecorder:
    """The reply so far: text, tool calls by index, finish reason, usage. Ends its node once."""

    __slots__ = ("calls", "ex", "finish_reason", "model", "text", "usage")

    def __init__(self, ex: NodeExecution) -> None:
        self.ex = ex
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: Any = None
        self.usage: Any = None
        self.model: Any = None

    def feed(self, chunk: Any) -> None:
        choices = getattr(chunk, "choices", None) or ()
        usage = getattr(chunk, "usage", None)
        if usage is not None:
            self.usage = usage
        if self.model is None:
            self.model = getattr(chunk, "model", None)
        for choice in choices[:1]:
            delta = choice.delta
            content = delta.content
            if content:
                self.text.append(content)
                self.ex.token(content)
            if delta.tool_calls:
                for call in delta.tool_calls:
                    slot = self.calls.setdefault(call.index or 0, {"id": None, "name": None, "arguments": ""})
                    if call.id:
                        slot["id"] = call.id
                    function = call.function
                    if function is not None:
                        if function.name:
                            slot["name"] = function.name
                        if function.arguments:
                            slot["arguments"] += function.arguments
                            self.ex.token(function.arguments, "tool_args", id=slot["id"] or slot["name"])
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason

    def output(self) -> tuple[dict[str, Any], dict[str, Any] | None]:
        out: dict[str, Any] = {"role": "assistant", "content": "".join(self.text) if self.text else None}
        if self.calls:
            out["tool_calls"] = [self.calls[i] for i in sorted(self.calls)]
        out["finish_reason"] = self.finish_reason
        if self.model:
            out["model"] = self.model
        return out, usage_of(self.usage)

    def end(self, cut_short: bool = False) -> None:
        if not self.ex.ended:
            output, usage = self.output()
            self.ex.finish(output, usage=usage, cut_short=cut_short)

    def fail(self, exc: BaseException) -> None:
        if not self.ex.ended:
            self.ex.fail(exc)


def _abandon(recorder: StreamRecorder) -> None:
    try:
        recorder.end(cut_short=True)
    except Exception:  # a finalizer must never raise (it may run at interpreter exit)
        pass


class TeedStream(CustomStreamWrapper):
    """`CustomStreamWrapper` whose chunks are recorded (never constructed: instances are swapped in).

    LiteLLM closes the stream itself from inside `__next__` / `__anext__` when it ends or fails
    (streaming_handler.py:2419, :2480, :2514, :2625-2641): only a close from outside, by the app
    (or `with` / `async with`, :554 / :560), cuts the node short.
    """

    _gm_recorder: StreamRecorder
    _gm_reading: bool

    def __next__(self) -> Any:
        recorder = self._gm_recorder
        self._gm_reading = True
        try:
            chunk = super().__next__()
        except StopIteration:
            recorder.end()
            raise
        except BaseException as exc:
            recorder.fail(exc)
            raise
        finally:
            self._gm_reading = False
        recorder.feed(chunk)
        return chunk

    async def __anext__(self) -> Any:
        recorder = self._gm_recorder
        self._gm_reading = True
        try:
            chunk = await super().__anext__()
        except StopAsyncIteration:
            recorder.end()
            raise
        except asyncio.CancelledError:  # the reading task was cancelled: what was read stays
            recorder.end(cut_short=True)
            raise
        except BaseException as exc:
            recorder.fail(exc)
            raise
        finally:
            self._gm_reading = False
        recorder.feed(chunk)
        return chunk

    def close(self) -> None:
        if not self._gm_reading:
            self._gm_recorder.end(cut_short=True)
        super().close()

    async def aclose(self) -> Any:
        if not self._gm_reading:
            self._gm_recorder.end(cut_short=True)
        return await super().aclose()  # type: ignore[no-untyped-call]


def tee(stream: Any, ex: NodeExecution) -> Any:
    """Records `stream` into `ex` as the app reads it; returns the same object."""
    recorder = StreamRecorder(ex)
    if type(stream) is CustomStreamWrapper:
        stream.__class__ = TeedStream
        teed = cast(TeedStream, stream)  # (its class was just swapped)
        teed._gm_recorder = recorder
        teed._gm_reading = False
        weakref.finalize(teed, _abandon, recorder)
    else:  # a subclass, or a type this version does not have: end the node now, the app reads it untouched
        ex.finish({"stream": type(stream).__name__})
    return stream
