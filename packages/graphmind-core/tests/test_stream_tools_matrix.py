"""The shared gate matrix (graphmind.testing.gate_matrix) on core's streaming tools: a generator and
an async-generator method gated with `wrap_method`, under asyncio and trio. A call is the stream
read to its end; the injected value is one chunk."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
import trio

import graphmind
from graphmind.testing.gate_matrix import CASES, GateSubject, run_case


class SearchError(Exception):
    pass


class Searcher:
    """The tool: `search` and `asearch` stream three chunks; `fail` makes the next attempt raise
    before its first chunk."""

    def __init__(self) -> None:
        self.calls = 0
        self.fail: SearchError | None = None

    def _attempt(self) -> None:
        self.calls += 1
        if self.fail is not None:
            error, self.fail = self.fail, None
            raise error

    def search(self, query: str) -> Iterator[str]:
        self._attempt()
        yield from ("real", "chunks", query)

    async def asearch(self, query: str) -> AsyncIterator[str]:
        self._attempt()
        for chunk in ("real", "chunks", query):
            yield chunk


class StreamingToolSubject(GateSubject):
    node_id = "tool:search"
    injected = "from the debugger"
    error_type = SearchError
    streams = True

    def __init__(self) -> None:
        self.searchers: list[Searcher] = []
        self.session: graphmind.Client | None = None

    @property
    def real_calls(self) -> int:
        return sum(s.calls for s in self.searchers)

    def make(self) -> Searcher:
        self.searchers.append(Searcher())
        return self.searchers[-1]

    def instrument(self, thing: Searcher, session: graphmind.Client | None) -> Searcher:
        self.session = session
        wrap_method = session.wrap_method if session is not None else graphmind.wrap_method
        wrap_method(thing, "search")
        return wrap_method(thing, "asearch", name="search")  # type: ignore[no-any-return]

    def undo(self, thing: Searcher) -> Searcher:
        assert self.session is not None
        self.session.unwrap_method(thing, "search")
        return self.session.unwrap_method(thing, "asearch")  # type: ignore[no-any-return]

    def call(self, thing: Searcher) -> list[str]:
        return list(thing.search("hi"))

    async def acall(self, thing: Searcher) -> list[str]:
        return [chunk async for chunk in thing.asearch("hi")]

    def stream(self, thing: Searcher) -> Iterator[str]:
        return thing.search("hi")

    def astream(self, thing: Searcher) -> AsyncIterator[str]:
        return thing.asearch("hi")

    def fail_next(self) -> None:
        self.raised = SearchError("the search backend said no")
        for searcher in self.searchers:
            searcher.fail = self.raised

    def check_real(self, result: Any) -> None:
        assert result == ["real", "chunks", "hi"]

    def check_injected(self, result: Any, value: Any) -> None:
        assert result == [value]  # anything but a list is one chunk

    def check_stream(self, items: list[Any]) -> None:
        self.check_real(items)

    def edit(self, original: Any) -> Any:
        assert original == {"query": "hi"}
        return {"query": "edited"}

    def check_edited(self, result: Any, edited: Any) -> None:
        assert result == ["real", "chunks", edited["query"]]


@pytest.mark.parametrize("case", CASES)
async def test_gate_matrix_on_streaming_tools(case: str) -> None:
    await run_case(case, StreamingToolSubject())


@pytest.mark.parametrize("case", CASES)
def test_gate_matrix_on_streaming_tools_under_trio(case: str) -> None:
    trio.run(run_case, case, StreamingToolSubject())
