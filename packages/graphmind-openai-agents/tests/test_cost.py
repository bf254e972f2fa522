"""An agent run's cost, as the real hub shows it: the model steps name their model where the hub
reads it (`attrs.model`, docs/protocol.md "The model of a model step"), so their tokens are priced
from the hub's table. On the SDK's own models against the loopback fake provider, which reports
token usage as OpenAI does."""

from __future__ import annotations

from typing import Any

import pytest
from agents import Agent, Runner
from agents_helpers import PROMPT, REPLY, Tool, model_for, tool_then_text

import graphmind
from graphmind_openai.testing import FakeOpenAI
from graphmind_openai_agents import instrument_openai_agents
from graphmind_server.testing import HubProcess, wait_for


@pytest.mark.parametrize("api", ["chat", "responses"])
async def test_an_agent_run_shows_its_cost_on_the_hub(hub_process: HubProcess, api: str) -> None:
    client = graphmind.Client(app=f"agents-cost-{api}", url=hub_process.ingest_url, retry_interval=0.2)
    try:
        assert client.ready(10)
        assert instrument_openai_agents(session=client)
        with FakeOpenAI(default_reply=tool_then_text) as fake:
            agent = Agent(
                name="planner", instructions="Plan.", tools=[Tool().tool], model=model_for(fake, api)
            )
            with client.run(f"cost-{api}") as run:
                result = await Runner.run(agent, PROMPT)
        assert result.final_output == REPLY
    finally:
        client.dispose()

    def priced() -> dict[str, Any] | None:
        status, body = hub_process.api("GET", f"/api/runs/{run.run_id}")
        usage = body.get("usage") if status == 200 else None
        return usage if usage and usage.get("costUsd") else None

    usage = wait_for(priced, 10.0, "the run's cost")
    assert list(usage["models"]) == ["gpt-4o-mini"], usage
    assert usage["models"]["gpt-4o-mini"]["calls"] == 2  # the tool call's step, then the answer's
    assert usage["costSource"] == "price table" and usage["unpricedModels"] is False
    per_in, per_out = 0.15, 0.6  # prices.json's gpt-4o-mini, USD per 1M tokens
    expected = (usage["inputTokens"] * per_in + usage["outputTokens"] * per_out) / 1e6
    assert usage["inputTokens"] > 0 and abs(usage["costUsd"] - expected) < 1e-12
