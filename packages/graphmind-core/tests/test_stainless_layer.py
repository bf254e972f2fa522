"""graphmind.adapter.stainless on its own: it imports no SDK and no httpx, and its SSE recorder reads
what a Stainless SDK's provider sends (graphmind-openai's and graphmind-anthropic's suites run the
whole call path against the real SDKs)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from graphmind.adapter.stainless import Api, Sdk, split, sse
from graphmind.adapter.stainless._recorder import StreamRecorder, TypedRecorder, record_sync


def test_importing_the_layer_imports_no_sdk_and_no_httpx() -> None:
    code = (
        "import sys, graphmind.adapter.stainless\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('openai', 'anthropic', 'httpx', 'httpx2')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"


def test_import_graphmind_does_not_import_the_layer() -> None:
    code = "import sys, graphmind\nprint('graphmind.adapter.stainless' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "False"


class Node:
    """The part of a NodeExecution the recorders use."""

    def __init__(self) -> None:
        self.ended = False
        self.tokens: list[str] = []
        self.warnings: list[tuple[str, str | None]] = []
        self.finished: dict[str, Any] | None = None

    def token(self, text: str, *args: Any, **kwargs: Any) -> None:
        self.tokens.append(text)

    def warn(self, message: str, key: str | None = None) -> None:
        self.warnings.append((message, key))

    def finish(self, output: Any, **kwargs: Any) -> None:
        self.ended = True
        self.finished = {"output": output, **kwargs}

    def fail(self, exc: BaseException) -> None:
        self.ended = True


class Reader:
    def __init__(self, ex: Any, engine: Any) -> None:
        self.ex = ex
        self.complete = False
        self.text: list[str] = []

    def event(self, event: dict[str, Any]) -> None:
        if event.get("type") == "stop":
            self.complete = True
        elif "text" in event:
            self.text.append(event["text"])
            self.ex.token(event["text"])

    def item(self, item: Any) -> None:
        self.text.append(item.text)

    def body(self) -> Any:
        return {"text": "".join(self.text)}

    typed_body = body


def _body(data: Any) -> tuple[Any, dict[str, Any] | None]:
    return data, None


def _to_body(value: Any, request: Mapping[str, Any]) -> dict[str, Any]:
    return {"text": value}


API = Api("toy", lambda body: ({}, "", 0), lambda obj: None, _body, _to_body, lambda body: b"", Reader)
SDK = Sdk("Example", "example", ())


def _recorder(node: Node) -> StreamRecorder:
    return StreamRecorder(SDK, API, node, True, None)  # type: ignore[arg-type]


def test_the_recorder_reads_sse_as_providers_send_it() -> None:
    node = Node()
    recorder = _recorder(node)
    stream = sse([("delta", {"text": "Hel"}), (None, {"text": "lo"})]) + b": keep-alive\r\n\r\n"
    stream += b'event: delta\ndata: {"text":\ndata: " there"}\n\n' + sse([("stop", {"type": "stop"})])
    for i in range(0, len(stream), 7):  # bytes arrive cut anywhere, as from a socket
        recorder.feed(stream[i : i + 7])
    recorder.close()
    assert node.tokens == ["Hel", "lo", " there"]
    assert node.finished == {
        "output": {"text": "Hello there"},
        "usage": None,
        "cut_short": False,
        "streaming": True,
        "chunks": 4,
    }


def test_done_marks_the_reply_whole_and_a_close_before_it_is_cut_short() -> None:
    node = Node()
    recorder = _recorder(node)
    recorder.feed(b'data: {"text": "a"}\n\n')
    recorder.close()
    assert node.finished is not None and node.finished["cut_short"] is True
    node = Node()
    recorder = _recorder(node)
    recorder.feed(b'data: {"text": "a"}\n\ndata: [DONE]\n\n')
    recorder.close()
    assert node.finished is not None and node.finished["cut_short"] is False


def test_a_parse_failure_warns_once_and_keeps_what_was_read() -> None:
    node = Node()
    recorder = _recorder(node)
    recorder.feed(b'data: {"text": "ok"}\n\ndata: {not json\n\n')
    recorder.feed(b'data: {"text": "ignored"}\n\n')
    recorder.end()
    assert [key for _, key in node.warnings] == ["example-stream-parse"]
    assert "could not read an Example stream" in node.warnings[0][0]
    assert node.finished is not None and node.finished["output"] == {"text": "ok"}


def test_the_typed_recorder_reads_the_sdk_items_and_ends_on_the_sdk_close() -> None:
    node = Node()
    recorder = TypedRecorder(SDK, API, node, None)  # type: ignore[arg-type]
    recorder.feed(b'data: {"text": "bytes are not read"}\n\n')

    class Item:
        text = "typed"

    def sdk_items() -> Iterator[Any]:
        yield Item()
        recorder.close()  # inside the SDK's next(): its own end-of-stream close, not the app's
        assert node.finished is None
        yield object()  # a shape the reader does not know: one warning, the app unaffected
        yield Item()

    items = list(record_sync(sdk_items(), recorder))
    assert len(items) == 3 and isinstance(items[1], object)
    assert node.finished is not None and node.finished["output"] == {"text": "typed"}
    assert node.finished["cut_short"] is False
    assert [key for _, key in node.warnings] == ["example-stream-item"]


def test_an_app_that_stops_reading_finishes_the_node_cut_short() -> None:
    node = Node()
    recorder = TypedRecorder(SDK, API, node, None)  # type: ignore[arg-type]

    class Item:
        text = "x"

    stream = record_sync(iter([Item(), Item(), Item()]), recorder)
    next(stream)
    stream.close()
    assert node.finished is not None and node.finished["cut_short"] is True
    assert node.finished["output"] == {"text": "x"}


def test_split_and_sse_render_what_the_providers_send() -> None:
    assert split("abcdefg", 3) == ["abc", "def", "g"]
    assert split("a", 5) == ["a"]
    assert sse([("x", {"a": 1}), (None, "[DONE]")]) == b'event: x\ndata: {"a":1}\n\ndata: [DONE]\n\n'
    assert json.loads(sse([(None, {"b": [1, 2]})])[6:]) == {"b": [1, 2]}


def test_the_async_byte_tee_closes_the_body_iterator_when_the_app_stops_early() -> None:
    # Left to the event loop's async-generator finalizer, the body's iterator would close later,
    # in a task of its own; the tee closes it when its own iteration ends.
    import asyncio

    import httpx2  # noqa: F401  (the flavour the tee subclasses)

    from graphmind.adapter.stainless._tee import _classes

    closed: list[bool] = []

    class Body:
        async def __aiter__(self) -> Any:
            try:
                for i in range(10):
                    yield b"data: %d\n\n" % i
            finally:
                closed.append(True)

        async def aclose(self) -> None:
            pass

    class Recorder:
        def feed(self, data: bytes) -> None:
            pass

        def fail(self, exc: BaseException) -> None: ...
        def end(self) -> None: ...
        def close(self) -> None: ...

    _, async_tee = _classes("httpx2")

    async def main() -> None:
        stream = async_tee(Body(), Recorder())
        chunks = stream.__aiter__()
        assert await chunks.__anext__() == b"data: 0\n\n"
        await chunks.aclose()  # the app stopped after one chunk
        assert closed == [True]

    asyncio.run(main())
