"""Wire protocol v1 (docs/protocol.md): names, frame builders and the parser for hub frames. Public.

Both the SDK and the hub import these names, so the two sides cannot drift apart.
"""

from __future__ import annotations

import json
import json.encoder
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

PROTOCOL_VERSION: Final = 1
SUPPORTED_PROTOCOLS: Final = (1,)

# Events (app -> hub)
RUN_STARTED: Final = "run.started"
RUN_FINISHED: Final = "run.finished"
NODE_STARTED: Final = "node.started"
NODE_TOKEN: Final = "node.token"
NODE_FINISHED: Final = "node.finished"
NODE_ERROR: Final = "node.error"
GRAPH_HINT: Final = "graph.hint"
EXEC_PAUSED: Final = "exec.paused"
EXEC_RESUMED: Final = "exec.resumed"
EVENT_TYPES: Final = frozenset(
    {
        RUN_STARTED,
        RUN_FINISHED,
        NODE_STARTED,
        NODE_TOKEN,
        NODE_FINISHED,
        NODE_ERROR,
        GRAPH_HINT,
        EXEC_PAUSED,
        EXEC_RESUMED,
    }
)

# Control frames
HELLO: Final = "hello"
WELCOME: Final = "welcome"
DEBUG_STATE: Final = "debug.state"
DEBUG_ACK: Final = "debug.ack"
GATE_RESOLVE: Final = "gate.resolve"
GATE_UNKNOWN: Final = "gate.unknown"
PAUSE: Final = "pause"
RUN_ABORT: Final = "run.abort"
ERROR: Final = "error"
# The hub cannot store events (disk full, I/O error, its file gone) or stores again (docs/protocol.md,
# "Storing"): an optional hub frame; an app keeps its events in its ring meanwhile.
HUB_STORING: Final = "hub.storing"
# Many events in one text frame (docs/protocol.md, "Batch frames"): sent only to a hub whose
# `welcome` lists BATCH in `capabilities`; the hub handles each entry as if it had come alone.
BATCH: Final = "batch"
CAPABILITIES: Final = "capabilities"
_BATCH_HEAD: Final = '{"type":"batch","events":['

# Gates and answers
BEFORE: Final = "before"
AFTER: Final = "after"
ERROR_GATE: Final = "error"
GATES: Final = (BEFORE, AFTER, ERROR_GATE)
CONTINUE: Final = "continue"
RETRY: Final = "retry"
INJECT: Final = "inject"
ABORT: Final = "abort"
ACTIONS: Final = (CONTINUE, RETRY, INJECT, ABORT)
GATE_ACTIONS: Final = {
    BEFORE: (CONTINUE, INJECT, ABORT),
    AFTER: (CONTINUE, RETRY, INJECT, ABORT),
    ERROR_GATE: (CONTINUE, RETRY, INJECT, ABORT),
}
# A before gate held by the loop guard takes retry too: run the call, restarting the streak.
LOOP_BEFORE_ACTIONS: Final = ACTIONS
REASONS: Final = ("breakpoint", "step", "error", "loop", "pause")
MODES: Final = ("run", "step")
NODE_KINDS: Final = ("tool", "llm", "chain", "retriever", "agent", "custom")

REDACTED: Final = "__REDACTED__"

CLOSE_UNSUPPORTED_PROTOCOL: Final = 4001
CLOSE_HELLO_REQUIRED: Final = 4002
CLOSE_FORBIDDEN: Final = 4003
CLOSE_UNAUTHORIZED: Final = 4401

# The hub's token (docs/security.md): apps send `Authorization: Bearer <token>` on the upgrade.
TOKEN_ENV: Final = "GRAPHMIND_TOKEN"
HOME_ENV: Final = "GRAPHMIND_HOME"
TOKEN_COOKIE: Final = "graphmind_token"


def token_file(port: int, environ: Mapping[str, str] | None = None) -> Path:
    """Where a hub on `port` keeps its token (0600), so an app of the same user finds it:
    `$GRAPHMIND_HOME/token-<port>`, by default `~/.graphmind/token-<port>`."""
    env = os.environ if environ is None else environ
    home = env.get(HOME_ENV, "").strip()
    return (Path(home) if home else Path("~/.graphmind")).expanduser() / f"token-{port}"


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)
# JSONEncoder.encode builds a C encoder on every call; build it once (this runs twice per gated
# call). No circular check: every frame comes out of the pipeline, which never emits a cycle.
_c_make_encoder: Any = getattr(json.encoder, "c_make_encoder", None)  # CPython's C accelerator (untyped)
_c_encode_basestring: Any = getattr(json.encoder, "c_encode_basestring", None)
_C_ENCODE = (
    _c_make_encoder(None, _ENCODER.default, _c_encode_basestring, None, ":", ",", False, False, False)
    if _c_make_encoder is not None and _c_encode_basestring is not None
    else None
)


def encode(frame: dict[str, Any]) -> str:
    """The one JSON spelling used on the wire (compact, UTF-8 text, no NaN)."""
    if _C_ENCODE is not None:
        return "".join(_C_ENCODE(frame, 0))
    return _ENCODER.encode(frame)


def batch(texts: list[str]) -> str:
    """One batch frame from events already encoded by `encode`: their texts joined, not re-encoded,
    so the hub stores each one byte for byte as if it had come alone."""
    return _BATCH_HEAD + ",".join(texts) + "]}"


def takes_batches(welcome: Mapping[str, Any]) -> bool:
    """Whether the hub that sent this `welcome` advertised batch frames (an optional field)."""
    capabilities = welcome.get(CAPABILITIES)
    return isinstance(capabilities, list) and BATCH in capabilities


def decode(text: str | bytes) -> dict[str, Any] | None:
    """A frame as a dict with a string `type`, or None for anything that is not one."""
    try:
        frame = json.loads(text)
    except (ValueError, TypeError, RecursionError):  # nested too deep: ignored like any unreadable frame
        return None
    if not isinstance(frame, dict) or not isinstance(frame.get("type"), str):
        return None
    return frame


def hello(*, app: str, sdk: dict[str, str], pid: int, client_id: str, meta: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": HELLO,
        "protocol": PROTOCOL_VERSION,
        "protocols": list(SUPPORTED_PROTOCOLS),
        "app": app,
        "sdk": sdk,
        "pid": pid,
        "clientId": client_id,
        "meta": meta,
    }


def negotiate(offered: Any, fallback: Any) -> int | None:
    """The highest version both sides speak, or None."""
    versions: list[int] = []
    if isinstance(offered, list):
        versions = [v for v in offered if isinstance(v, int) and not isinstance(v, bool)]
    if not versions and isinstance(fallback, int) and not isinstance(fallback, bool):
        versions = [fallback]
    common = set(versions) & set(SUPPORTED_PROTOCOLS)
    return max(common) if common else None
