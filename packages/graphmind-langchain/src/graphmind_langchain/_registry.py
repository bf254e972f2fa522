"""What the callback handler and the gated tools and models share, so that one call is one node.

The handler sees a call first (`on_tool_start` / `on_chat_model_start`) and starts its node. When
the tool or model is gated (`gate_tools` / `gate_model` put `MARK: token` in its `metadata`,
which LangChain hands to the handler), the handler leaves the gates to the gated method: it
offers the node here under the LangChain `run_id`, and the gated method, which receives the same
`run_id` on its `run_manager`, claims it and runs the gates around the real call.
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from graphmind.adapter import NodeExecution

MARK = "graphmind_gate"  # the metadata key gate_tools / gate_model add (visible to other tracers too)


@dataclass(eq=False)
class Offer:
    ex: NodeExecution
    token: str
    claimed: bool = False


@dataclass(eq=False)
class Inside:
    """Set while a gated method runs its real call: nested gated methods of the same object pass through."""

    token: str
    ex: NodeExecution | None = None
    tee: bool = False  # stream the nested call's chunks into `ex` as node.token (no handler does it)
    tool_ids: dict[int, tuple[str, str]] = field(default_factory=dict)


_offers: dict[UUID, Offer] = {}

# `stream()` / `astream()` do not pass `run_manager` to `_stream` / `_astream`
# (langchain_core/language_models/chat_models.py, BaseChatModel.stream: `self._stream(input_messages,
# stop=stop, **kwargs)`), so the gated stream finds the handler's node through this variable. The
# handler sets it in on_chat_model_start, which runs in the caller's context on both paths (sync:
# handle_event calls it directly; async: the handler is run_inline, so it is awaited, not gathered).
last_model_offer: contextvars.ContextVar[Offer | None] = contextvars.ContextVar(
    "graphmind_lc_last_model", default=None
)
inside: contextvars.ContextVar[Inside | None] = contextvars.ContextVar("graphmind_lc_inside", default=None)


def offer(run_id: UUID, ex: NodeExecution, token: str) -> Offer:
    entry = Offer(ex, token)
    _offers[run_id] = entry
    return entry


def claim(run_id: Any, token: str) -> Offer | None:
    entry = _offers.get(run_id) if run_id is not None else None
    return _take(entry, token)


def claim_last_model(token: str) -> Offer | None:
    return _take(last_model_offer.get(), token)


def _take(entry: Offer | None, token: str) -> Offer | None:
    if entry is None or entry.claimed or entry.token != token or entry.ex.ended:
        return None
    entry.claimed = True
    return entry


def withdraw(run_id: UUID) -> None:
    _offers.pop(run_id, None)


def is_inside(token: str) -> Inside | None:
    state = inside.get()
    return state if state is not None and state.token == token else None
