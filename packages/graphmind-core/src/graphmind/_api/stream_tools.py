"""Streaming tools: a generator or async-generator function wrapped by `tool` / `wrap` / `wrap_tools` /
`wrap_method` (the AI SDK page: a tool declared `async function*` streams).

The wrapper is a generator function of the same kind, so the caller (and any framework that asks
`inspect.isgeneratorfunction` / `isasyncgenfunction`) still sees a streaming tool. Its node starts
when the caller first iterates it, like the tool's own body, and runs on core's stream loop
(`_node/stream_loop.py`): each chunk reaches the caller as it is produced and is observed as a
`node.token` delta; the node finishes with `streaming: true`, `chunks` and the list of chunks as
its output. The gates are the stream loop's; what an injected value yields is `injected_chunks`.
Which functions stream is decided once, at wrap time (`_wrappers.gate_callable`).
"""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import AsyncGenerator, Callable, Generator
from typing import TYPE_CHECKING, Any

from .._events.jsonsafe import to_jsonable
from .._node.spec import NodeSpec
from .._node.stream_loop import Items

if TYPE_CHECKING:
    from .._node.engine import Engine, NodeExecution
    from .call_target import CallTarget

SpecFor = Callable[[tuple[Any, ...], dict[str, Any]], NodeSpec]


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
# What `_ENCODER.encode` does for a non-str, without its two Python frames per chunk: the C encoder
# built as `JSONEncoder.iterencode(o, _one_shot=True)` builds it (fresh circular-reference markers).
# https://github.com/python/cpython/blob/v3.11.7/Lib/json/encoder.py#L183-L258
_C_MAKE = getattr(json.encoder, "c_make_encoder", None)
_ESCAPE = json.encoder.encode_basestring


def _encode(chunk: Any) -> str:
    if _C_MAKE is None:
        return _ENCODER.encode(chunk)
    return "".join(_C_MAKE({}, _ENCODER.default, _ESCAPE, None, ":", ",", False, False, False)(chunk, 0))


def chunk_text(chunk: Any) -> str:
    """A chunk's `node.token` text: a `str` as it is (the viewer joins deltas, as for a model's
    text); anything else as its compact JSON and a newline, one JSON line per chunk."""
    if isinstance(chunk, str):
        return chunk
    try:  # plain JSON data (most chunks): encoded as it is
        return _encode(chunk) + "\n"
    except (TypeError, ValueError):  # objects, NaN, cycles: the payload rules (_events/jsonsafe.py) first
        return _ENCODER.encode(to_jsonable(chunk)) + "\n"


def injected_chunks(value: Any) -> Any:
    """What an injected JSON value yields: a list is the chunks, one per element, in order (`[]`:
    none); any other value (object, string, number, `null`) is one chunk."""
    return Items(tuple(value)) if isinstance(value, list) else value


def _observer(node: NodeExecution) -> Callable[[Any], None]:
    """Each chunk as `node.token`. Bookkeeping: a chunk GraphMind cannot render (an int past
    Python's digit limit, …) is left out of the tokens, never the tool's error."""

    def observe(chunk: Any) -> None:
        try:  # not contextlib.suppress: that builds an object and two Python calls per chunk
            node.token(chunk_text(chunk))
        except Exception:
            pass

    return observe


def gate_generator(find: Callable[[], Engine], target: CallTarget, spec_for: SpecFor) -> Any:
    """A generator function that runs its target's generator as one streamed `tool` node per call
    (`target.fn`: the function now, a reload swaps it)."""

    @functools.wraps(target.fn)
    def streamed(*args: Any, **kwargs: Any) -> Generator[Any, Any, Any]:
        engine = find()  # the client's, or the default session's now (_api/default.py)
        if not engine.live:
            return (yield from target.fn(*args, **kwargs))  # detached: send, throw and return pass through
        node = engine.start_node(spec_for(args, kwargs))

        observe = _observer(node)

        yield from node.stream_sync(
            lambda: target.fn(*args, **kwargs),
            on_item=observe,
            from_injected=injected_chunks,
            mark_chunks=True,
        )
        return None

    return streamed


def gate_async_generator(find: Callable[[], Engine], target: CallTarget, spec_for: SpecFor) -> Any:
    """An async generator function that runs its target's as one streamed `tool` node per call."""

    @functools.wraps(target.fn)
    async def astreamed(*args: Any, **kwargs: Any) -> AsyncGenerator[Any, None]:
        engine = find()
        if not engine.live:
            # aclosing: the caller's aclose() (or a cancelled task) closes the tool's generator at once.
            async with contextlib.aclosing(target.fn(*args, **kwargs)) as own:
                async for chunk in own:
                    yield chunk
            return
        node = await engine.astart_node(spec_for(args, kwargs))

        observe = _observer(node)

        chunks = node.stream_async(
            lambda: target.fn(*args, **kwargs),
            on_item=observe,
            from_injected=injected_chunks,
            mark_chunks=True,
        )
        async with contextlib.aclosing(chunks):
            async for chunk in chunks:
                yield chunk

    return astreamed
