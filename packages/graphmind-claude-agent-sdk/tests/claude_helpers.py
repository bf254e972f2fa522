"""Helpers of the tests: options for one offline CLI session against the loopback fake."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphmind_anthropic.testing import FakeAnthropic

MODEL = "claude-opus-4-8"


def options(fake: FakeAnthropic, tmp_path: Path, **kwargs: Any) -> Any:
    """Options for one offline session against `fake`, in directories of the test's own."""
    from claude_agent_sdk import ClaudeAgentOptions

    config, work = tmp_path / "claude-config", tmp_path / "work"
    config.mkdir(exist_ok=True)
    work.mkdir(exist_ok=True)
    env = {
        "ANTHROPIC_BASE_URL": fake.base_url,
        "ANTHROPIC_API_KEY": "test-key",
        "CLAUDE_CONFIG_DIR": str(config),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    env.update(kwargs.pop("env", {}))
    return ClaudeAgentOptions(cwd=str(work), env=env, model=MODEL, **kwargs)
