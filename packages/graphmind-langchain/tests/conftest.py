"""FakeHub fixtures and LangChain fakes for the adapter's unit tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel

import graphmind
from graphmind.testing import FakeHub
from graphmind_server.testing.pytest_plugin import hub_process, kit_hub  # noqa: F401  (the kit on both hubs)


class ToolCallingFakeModel(FakeMessagesListChatModel):
    """FakeMessagesListChatModel with bind_tools (none of langchain-core's fakes has it)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[{"type": "function", "function": {"name": t.name}} for t in tools], **kwargs)


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub(pause_on_error="off") as h:
        yield h


@pytest.fixture
def client(hub: FakeHub) -> Iterator[graphmind.Client]:
    c = graphmind.Client(app="lc", url=hub.url, retry_interval=0.2)
    assert c.ready(5)
    yield c
    c.dispose()


@pytest.fixture
def fake_model() -> type[ToolCallingFakeModel]:
    return ToolCallingFakeModel
