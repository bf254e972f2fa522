"""The gate loop around one model call when the adapter must report usage or owns a stream.

`client.execute` / `NodeExecution.run_sync` finish a node without usage, and a stream cannot be
handed to them, so model calls drive the engine's gates here (core gap, reported: a
`describe_usage=` for execute/run_sync would shrink this file to the stream half).
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


def call_sync(ex: NodeExecution, call: Callable[[], T], describe: Describe, convert: Describe, usage: Describe) -> T:
    answer = ex.before(convert)
    if answer.action == "inject":
        ex.finish(answer.raw)
        return answer.value
    while True:
        try:
            with ex.active():
                result = call()
        except RunAborted as exc:
            ex.fail(exc)
            raise
        except Exception as exc:
            answer = ex.error(exc, convert)
            if answer.action == "retry":
                continue
            if answer.action == "inject":
                ex.finish(answer.raw)
                return answer.value
            ex.fail(exc)
            raise
        output = describe(result)
        answer = ex.after(output, convert)
        if answer.action == "retry":
            continue
        if answer.action == "inject":
            ex.finish(answer.raw)
            return answer.value
        ex.finish(output, usage=usage(result))
        return result


async def call_async(ex: NodeExecution, call: Callable[[], Awaitable[T]], describe: Describe, convert: Describe,
                     usage: Describe) -> T:
    answer = await ex.abefore(convert)
    if answer.action == "inject":
        ex.finish(answer.raw)
        return answer.value
    while True:
        try:
            with ex.active():
                result = await call()
        except RunAborted as exc:
            ex.fail(exc)
            raise
        except Exception as exc:
            answer = await ex.aerror(exc, convert)
            if answer.action == "retry":
                continue
            if answer.action == "inject":
                ex.finish(answer.raw)
                return answer.value
            ex.fail(exc)
            raise
        output = describe(result)
        answer = await ex.aafter(output, convert)
        if answer.action == "retry":
            continue
        if answer.action == "inject":
            ex.finish(answer.raw)
            return answer.value
        ex.finish(output, usage=usage(result))
        return result


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
