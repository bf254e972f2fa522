"""The module for adapter authors: everything an adapter uses of core, and nothing a user needs.

    from graphmind.adapter import NodeSpec, enabled_for, engine_for, parse_model_reply

    if not enabled_for(session):          # session: a graphmind.Client, or None for the default one
        return client                     # a disabled client: patch nothing
    engine = engine_for(session)          # per call: the default one is looked up when it happens
    result = engine.execute(NodeSpec(name="step", kind="llm", input=...), lambda: real_call(),
                            describe_output=to_json, from_injected=to_framework_type)

See docs/adapters.md for the whole contract (hook points, the call and stream loops, `settle`,
injected values, the gate-matrix kit every adapter's tests run). An adapter imports only from here
(and `graphmind.testing` in its tests), never a private `graphmind._x` module.
"""

from __future__ import annotations

from .._api import client as _client  # noqa: F401  (loaded now: see preload() below)
from .._base.errors import RunAborted
from .._effects.classify import Effect
from .._effects.classify import from_framework as framework_effect
from .._events.jsonsafe import json_scalar, json_scalars, plain_message
from .._events.owned import owned_copy
from .._hub.gate import GateAnswer
from .._node.engine import Engine, NodeExecution
from .._node.handoff import Handoff, ahandoff, handoff
from .._node.hold_timeout import KnownTimeout
from .._node.model_reply import ModelReply, ToolCallReply, parse_model_reply
from .._node.spec import NodeSpec, Owned, Settled, describe_error
from .._node.stream_loop import Items
from .._runs.agents import agent_scope, current_agent_path, enter_agent
from .._runs.run import RunContext
from .._runs.steps import StepIdentity
from .._runs.thread import thread_id
from .._wire.hub_link import preload
from ._driver import AsyncDriver, SyncDriver
from ._edit import edited_request, request_message
from ._hooks import Hook, Patches, hook_moved, instrument_once, items_of, resolve, uninstrument_once
from ._owner import model_call_owner, owned_model_call
from ._process import ProcessPatch
from ._session import enabled_for, engine_for

# An adapter's first call often builds the default client: it must not pay the client's modules'
# import nor websockets' (issue 18: langchain-core's timed first stream). `import graphmind` alone
# loads neither (issue 37); an adapter's import loads both, as it did before.
preload()

__all__ = [
    "AsyncDriver",
    "Effect",
    "Engine",
    "GateAnswer",
    "Handoff",
    "Hook",
    "Items",
    "KnownTimeout",
    "ModelReply",
    "NodeExecution",
    "NodeSpec",
    "Owned",
    "Patches",
    "ProcessPatch",
    "RunAborted",
    "RunContext",
    "Settled",
    "StepIdentity",
    "SyncDriver",
    "ToolCallReply",
    "agent_scope",
    "ahandoff",
    "current_agent_path",
    "describe_error",
    "edited_request",
    "enabled_for",
    "engine_for",
    "enter_agent",
    "framework_effect",
    "handoff",
    "hook_moved",
    "instrument_once",
    "items_of",
    "json_scalar",
    "json_scalars",
    "model_call_owner",
    "owned_copy",
    "owned_model_call",
    "parse_model_reply",
    "plain_message",
    "request_message",
    "resolve",
    "thread_id",
    "uninstrument_once",
]
