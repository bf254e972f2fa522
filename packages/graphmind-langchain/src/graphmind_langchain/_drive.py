"""The gate loop around a streamed model call: a stream cannot be handed to the engine's
`run_sync` / `run_async` (the chunks reach the app while the node is open), so it drives the
engine's gates itself. Plain calls use `NodeExecution.run_sync` / `run_async`.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, TypeVar

from langchain_core.outputs import ChatGenerationChunk

from graphmind import NodeExecution, RunAborted

from ._describe import chunks_json, chunks_usage, to_chunk

T = TypeVar("T")
Describe = Callable[[Any], Any]


# ---- streams ---------------------------------------------------------------------------------
# Before: inject yields one chunk and skips the model. After: only when the after gate would
# hold at the start (a breakpoint or step mode) is the stream buffered, so it can be replaced or
# re-run; otherwise chunks pass straight through. Error: retry/inject only while nothing has
# reached the app. A stream closed early still finishes its node (cutShort).

def stream_sync(ex: NodeExecution, open_stream: Callable[[], Iterator[ChatGenerationChunk]],
                step: Callable[[Iterator[ChatGenerationChunk]], ChatGenerationChunk | None],
                tee: Callable[[ChatGenerationChunk], None]) -> Iterator[ChatGenerationChunk]:
    answer = ex.before(to_chunk)
    if answer.action == "inject":
        ex.finish(answer.raw)
        yield answer.value
        return
    while True:
        buffered = ex.wants_hold("after")
        chunks: list[ChatGenerationChunk] = []
        sent = False
        try:
            it = open_stream()
            while True:
                with ex.active():
                    chunk = step(it)
                if chunk is None:
                    break
                tee(chunk)
                chunks.append(chunk)
                if not buffered:
                    sent = True
                    yield chunk
        except GeneratorExit:
            ex.finish(chunks_json(chunks), usage=chunks_usage(chunks), cut_short=True)
            raise
        except RunAborted as exc:
            ex.fail(exc)
            raise
        except Exception as exc:
            if sent:
                ex.fail(exc)
                raise
            answer = ex.error(exc, to_chunk)
            if answer.action == "retry":
                continue
            if answer.action == "inject":
                ex.finish(answer.raw)
                yield answer.value
                return
            ex.fail(exc)
            raise
        output = chunks_json(chunks)
        if buffered:
            answer = ex.after(output, to_chunk)
            if answer.action == "retry":
                continue
            if answer.action == "inject":
                ex.finish(answer.raw)
                yield answer.value
                return
        ex.finish(output, usage=chunks_usage(chunks))
        if buffered:
            yield from chunks
        return


async def stream_async(ex: NodeExecution, open_stream: Callable[[], AsyncIterator[ChatGenerationChunk]],
                       step: Callable[[AsyncIterator[ChatGenerationChunk]], Awaitable[ChatGenerationChunk | None]],
                       tee: Callable[[ChatGenerationChunk], None]) -> AsyncIterator[ChatGenerationChunk]:
    answer = await ex.abefore(to_chunk)
    if answer.action == "inject":
        ex.finish(answer.raw)
        yield answer.value
        return
    while True:
        buffered = ex.wants_hold("after")
        chunks: list[ChatGenerationChunk] = []
        sent = False
        try:
            it = open_stream()
            while True:
                with ex.active():
                    chunk = await step(it)
                if chunk is None:
                    break
                tee(chunk)
                chunks.append(chunk)
                if not buffered:
                    sent = True
                    yield chunk
        except (GeneratorExit, asyncio.CancelledError):  # closed early or its task cancelled
            ex.finish(chunks_json(chunks), usage=chunks_usage(chunks), cut_short=True)
            raise
        except RunAborted as exc:
            ex.fail(exc)
            raise
        except Exception as exc:
            if sent:
                ex.fail(exc)
                raise
            answer = await ex.aerror(exc, to_chunk)
            if answer.action == "retry":
                continue
            if answer.action == "inject":
                ex.finish(answer.raw)
                yield answer.value
                return
            ex.fail(exc)
            raise
        output = chunks_json(chunks)
        if buffered:
            answer = await ex.aafter(output, to_chunk)
            if answer.action == "retry":
                continue
            if answer.action == "inject":
                ex.finish(answer.raw)
                yield answer.value
                return
        ex.finish(output, usage=chunks_usage(chunks))
        if buffered:
            for chunk in chunks:
                yield chunk
        return
