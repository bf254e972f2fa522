"""Fixtures: the real `mcp-server-time` server in process (mcp_time_server.py), through the SDK's
own in-memory transport (`mcp.client.Client`), a FakeHub, and a GraphMind client attached to it."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Iterator

import pytest
from mcp.client import Client

import graphmind
from graphmind.testing import FakeHub
from graphmind_server.testing.pytest_plugin import hub_process, kit_hub  # noqa: F401  (the kit on both hubs)

# mcp_time_server.py sits next to the tests; importlib mode does not put this folder on sys.path by itself.
sys.path.insert(0, os.path.dirname(__file__))
from mcp_time_server import time_server


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub(pause_on_error="off") as h:
        yield h


@pytest.fixture
def gm(hub: FakeHub) -> Iterator[graphmind.Client]:
    client = graphmind.Client(app="mcp-test", url=hub.url)
    assert client.ready(5)
    yield client
    client.dispose()


@pytest.fixture
async def time_client() -> AsyncIterator[Client]:
    """An MCP client connected in process to the real time server (local timezone UTC).

    The connection lives in a task of its own: anyio's cancel scopes must be entered and exited in
    one task, and pytest-asyncio sets a fixture up and tears it down in different ones."""
    ready: asyncio.Future[Client] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold() -> None:
        try:
            async with Client(time_server(), mode="legacy") as client:
                ready.set_result(client)
                await done.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    task = asyncio.create_task(hold())
    try:
        yield await ready
    finally:
        done.set()
        await task
