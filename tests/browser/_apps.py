"""A real instrumented app for the browser tests: the core SDK's Client, in a thread of the test."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import graphmind


class AgentThread:
    """Runs `body()` in a thread; keeps its result or the exception it raised."""

    def __init__(self, body: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()

        def run() -> None:
            try:
                self.result = body()
            except BaseException as exc:  # the test asserts on it (RunAborted, …)
                self.error = exc
            finally:
                self.done.set()

        self.thread = threading.Thread(target=run, name="agent", daemon=True)
        self.thread.start()

    def join(self, timeout: float = 10.0) -> AgentThread:
        assert self.done.wait(timeout), "the agent did not finish"
        self.thread.join(timeout)
        return self

    def wait_pumping(self, page: Any, timeout: float = 10.0) -> bool:
        """Wait for the agent while Playwright keeps serving the page.

        Every page routes its requests through a Python handler (conftest's `only_the_hub`), and
        Playwright's sync API runs those handlers only while the main thread is inside one of its
        calls. A plain `done.wait()` right after a click would hold the page's answer to the hub
        (the fetch the click started) until the next Playwright call: the agent waits for an
        answer the test itself is holding back.
        """
        deadline = time.monotonic() + timeout
        while not self.done.is_set():
            if time.monotonic() >= deadline:
                return False
            page.wait_for_timeout(20)
        return True


def attached_client(hub: Any, app: str, **options: Any) -> graphmind.Client:
    client = graphmind.Client(app=app, url=hub.ingest_url, **options)
    assert client.ready(5.0), "the client did not attach to the hub"
    return client


class CountingTool:
    """A tool body that counts its calls; `fail_first` makes the first n calls raise."""

    def __init__(self, result: Any, fail_first: int = 0) -> None:
        self.result = result
        self.fail_first = fail_first
        self.calls: list[dict[str, Any]] = []

    def __call__(self, q: str) -> Any:
        self.calls.append({"q": q})
        if len(self.calls) <= self.fail_first:
            raise ValueError("search backend is down")
        return self.result
