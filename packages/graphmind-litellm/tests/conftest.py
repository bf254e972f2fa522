"""Fixtures: an in-process hub (graphmind.testing.FakeHub), a session attached to it, the loopback
fake provider speaking the OpenAI wire format (graphmind_openai.testing.FakeOpenAI) that LiteLLM
reaches through `api_base`, and `instrument_litellm()` undone after every test."""

from __future__ import annotations

import os
import sys

# Before litellm is imported anywhere: else it fetches a model cost map from the internet at import.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from collections.abc import Iterator
from typing import Any

import litellm
import pytest

import graphmind
from graphmind_litellm import instrument_litellm, uninstrument_litellm
from graphmind_openai.testing import FakeOpenAI
from graphmind_server.testing import pytest_plugin as shared
from graphmind_server.testing.pytest_plugin import hub_process, kit_hub  # noqa: F401  (the kit on both hubs)

# The helpers module sits next to the tests; importlib mode does not put this folder on sys.path.
sys.path.insert(0, os.path.dirname(__file__))
from litellm_helpers import MESSAGES, MODEL

fakehub = shared.fakehub  # an in-process FakeHub
gm = shared.gm  # a session attached to it


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(chunks=6) as provider:
        yield provider


@pytest.fixture
def kw(fake: FakeOpenAI) -> dict[str, Any]:
    """One call's arguments: the loopback provider, and LiteLLM's and the OpenAI SDK's retries off."""
    return {
        "model": MODEL,
        "messages": MESSAGES,
        "api_base": fake.base_url,
        "api_key": "test-key",
        "num_retries": 0,
        "max_retries": 0,
    }


@pytest.fixture
def instrumented(gm: graphmind.Client) -> Iterator[graphmind.Client]:
    assert instrument_litellm(session=gm)
    yield gm
    uninstrument_litellm()


@pytest.fixture(autouse=True)
def _no_callbacks() -> Iterator[None]:
    yield
    # LiteLLM copies `litellm.callbacks` into these lists on a call's setup and skips a logger of a
    # class it already holds: a test's logger (and its session) must not outlive the test.
    for name in (
        "callbacks",
        "input_callback",
        "success_callback",
        "failure_callback",
        "_async_success_callback",
        "_async_failure_callback",
    ):
        setattr(litellm, name, [])
