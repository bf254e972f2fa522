"""Which agent made a call, reported to core (`graphmind.adapter.agent_scope`): a task runs inside
its agent's scope (so its model steps, tools and delegations are that agent's), and a model step
names its agent again (`from_agent`), so a step whose thread lost the context is still its agent's.
Core names the nodes: the first agent of the run steps as `llm:step`, each other as
`llm:step@<role>`; a delegation is `handoff:<from>-><to>` (docs/protocol.md)."""

from __future__ import annotations

import contextlib
from typing import Any

from graphmind.adapter import agent_scope, current_agent_path

from . import _describe


def scope(agent: Any) -> contextlib.AbstractContextManager[Any]:
    return agent_scope(_describe.agent_name(agent)) if agent is not None else contextlib.nullcontext()


def current(default: str = "crew") -> str:
    path = current_agent_path()
    return path[-1] if path else default
