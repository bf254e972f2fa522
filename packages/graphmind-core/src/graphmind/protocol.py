"""Wire protocol v1 (docs/protocol.md): names, frame builders and the parser for hub frames, the
frame limits, where every tool finds the hub's token (`find_token`) and the proof handshake's
HMAC (`proof`; docs/protocol.md, "Authentication"). Public.

Both the SDK and the hub import these names, so the two sides cannot drift apart.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import json.encoder
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit

# The oversized-payload rule ("Oversized payloads"): a value whose JSON is over 512 KB goes as its
# preview marker. Public here for any producer of events besides the SDK (the hub's OTLP ingest).
from ._events.payload import MAX_PAYLOAD_BYTES as MAX_PAYLOAD_BYTES
from ._events.payload import shrink_oversized as shrink_oversized

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
# One attempt of a retried node ended (docs/protocol.md, "node.attempt"): its input, error, duration.
NODE_ATTEMPT: Final = "node.attempt"
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
        NODE_ATTEMPT,
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
# Takes back a `pause` not yet used (runId null: the any-run one); an older app ignores it.
PAUSE_CANCEL: Final = "pause.cancel"
RUN_ABORT: Final = "run.abort"
ERROR: Final = "error"
# The hub cannot store events (disk full, I/O error, its file gone) or stores again (docs/protocol.md,
# "Storing"): an optional hub frame; an app keeps its events in its ring meanwhile.
HUB_STORING: Final = "hub.storing"
# Many events in one text frame (docs/protocol.md, "Batch frames"): sent only to a hub whose
# `welcome` lists BATCH in `capabilities`; the hub handles each entry as if it had come alone.
BATCH: Final = "batch"
CAPABILITIES: Final = "capabilities"
# App -> hub control frame, to a hub whose `welcome` lists DROPPED in `capabilities`: per run, per
# reason, how many of its events this client will never deliver (totals so far, so idempotent).
DROPPED: Final = "dropped"
# App -> hub control frame, to a hub whose `welcome` lists STORED: which of these seqs of mine have
# you stored? The hub answers STORED_ANSWER once everything it received before the question is
# committed, naming the seqs it does not have ("Confirming what was stored").
STORED: Final = "stored"
STORED_QUERY: Final = "stored.query"
STORED_ANSWER: Final = "stored.answer"
MAX_QUERY_RANGES: Final = 4096
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
# At a replay divergence (reason "divergence"): use the recorded output anyway (docs/protocol.md, "Replay").
RECORDED: Final = "recorded"
ACTIONS: Final = (CONTINUE, RETRY, INJECT, ABORT, RECORDED)
GATE_ACTIONS: Final = {
    BEFORE: (CONTINUE, INJECT, ABORT),
    AFTER: (CONTINUE, RETRY, INJECT, ABORT),
    ERROR_GATE: (CONTINUE, RETRY, INJECT, ABORT),
}
# A before gate held by the loop guard takes retry too: run the call, restarting the streak.
LOOP_BEFORE_ACTIONS: Final = (CONTINUE, RETRY, INJECT, ABORT)
# Edit and reload (docs/protocol.md, "Editing a held call"): `gate.resolve` may carry an `input`
# with continue at a before gate or retry at an after / error gate, and `reload: true` with the same
# answers at a gated callable's gates; `exec.paused` says whether the gate takes them.
EDIT_ACTIONS: Final = {BEFORE: CONTINUE, AFTER: RETRY, ERROR_GATE: RETRY}
NOT_EDITABLE_ADAPTER: Final = "this adapter cannot rebuild the call from JSON"
# A before gate held at a replay divergence: continue (live from here), use the recorded output, inject, abort.
DIVERGENCE: Final = "divergence"
DIVERGENCE_ACTIONS: Final = (CONTINUE, RECORDED, INJECT, ABORT)
# Agents (docs/protocol.md, "Agents"): a handoff node's kind, the pause-on-handoff reason, and the
# breakpoint node id that selects every handoff.
HANDOFF: Final = "handoff"
ANY_HANDOFF: Final = "handoff:*"
REASONS: Final = ("breakpoint", "step", "error", "loop", "pause", DIVERGENCE, HANDOFF)
MODES: Final = ("run", "step")
NODE_KINDS: Final = ("tool", "llm", "chain", "retriever", "agent", "custom", HANDOFF)

REDACTED: Final = "__REDACTED__"

CLOSE_UNSUPPORTED_PROTOCOL: Final = 4001
CLOSE_HELLO_REQUIRED: Final = 4002
CLOSE_FORBIDDEN: Final = 4003
CLOSE_UNAUTHORIZED: Final = 4401
CLOSE_TOO_BIG: Final = 1009  # a frame over the receiver's limit (RFC 6455 "message too big")

# Frame limits (docs/protocol.md, "Frame sizes"): the hub refuses an app frame over INGEST_MAX_FRAME
# (the SDK's events are bounded at 512 KB per payload and its batches at about 1 MiB); an SDK
# refuses a hub frame over HUB_MAX_FRAME (hub frames are control frames: welcome, debug.state,
# gate.resolve, whose inject value the hub bounds at MAX_INJECT_BYTES).
INGEST_MAX_FRAME: Final = 16 * 1024 * 1024
HUB_MAX_FRAME: Final = 4 * 1024 * 1024
MAX_INJECT_BYTES: Final = 2 * 1024 * 1024

# The hub's token (docs/security.md). Where every tool finds it: find_token().
TOKEN_ENV: Final = "GRAPHMIND_TOKEN"
TOKEN_FILE_ENV: Final = "GRAPHMIND_TOKEN_FILE"
HOME_ENV: Final = "GRAPHMIND_HOME"
# The cookie earlier hubs kept the viewer's token in (`<name>_<port>`). No hub sets it any more
# (cookies ignore the port: it reached every server on 127.0.0.1); a hub that sees one deletes it.
TOKEN_COOKIE: Final = "graphmind_token"
_LOOPBACK: Final = frozenset({"127.0.0.1", "localhost", "::1"})

# Mutual proof on the /ingest upgrade (docs/protocol.md, "Authentication"): neither side sends the
# token; each shows it knows it with an HMAC-SHA256 over both sides' nonces.
AUTH_SCHEME: Final = "graphmind-hmac-sha256-v1"
AUTH_HEADER: Final = "x-graphmind-auth"  # request and 101 answer: the scheme
CLIENT_NONCE_HEADER: Final = "x-graphmind-client-nonce"  # request: the app's nonce
SERVER_NONCE_HEADER: Final = "x-graphmind-server-nonce"  # 101 answer: the hub's nonce
SERVER_PROOF_HEADER: Final = "x-graphmind-server-proof"  # 101 answer: the hub's proof
HUB_PROOF_LABEL: Final = "graphmind hub proof v1"
APP_PROOF_LABEL: Final = "graphmind app proof v1"
# The viewer's WebSocket cannot send headers: it offers these subprotocols (docs/security.md).
LIVE_SUBPROTOCOL: Final = "graphmind.v1"
TOKEN_SUBPROTOCOL_PREFIX: Final = "graphmind.token."


class TokenError(ValueError):
    """A token source was named but cannot be used; str() is the one line to print."""


def token_file(port: int, environ: Mapping[str, str] | None = None) -> Path:
    """Where a hub on `port` keeps its token (0600), so an app of the same user finds it:
    `$GRAPHMIND_HOME/token-<port>`, by default `~/.graphmind/token-<port>`."""
    env = os.environ if environ is None else environ
    home = env.get(HOME_ENV, "").strip()
    return (Path(home) if home else Path("~/.graphmind")).expanduser() / f"token-{port}"


def read_token_file(path: str | Path, name: str = "--token-file") -> str:
    """The token kept in `path` (surrounding whitespace removed); TokenError when it cannot be read."""
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise TokenError(
            f"cannot read the token file {path} ({getattr(exc, 'strerror', None) or exc}); check {name}"
        ) from None
    if not text:
        raise TokenError(f"the token file {path} is empty; check {name}")
    return text


def find_token(
    url: str | None, environ: Mapping[str, str] | None = None, token_file_path: str | Path | None = None
) -> str | None:
    """The token for the hub at `url`, found the same way by the SDK and every command:
    `token_file_path` (a command's --token-file), else GRAPHMIND_TOKEN, else GRAPHMIND_TOKEN_FILE,
    else the token file a hub on that loopback port wrote; None when there is none. A source that
    is named but unreadable raises TokenError (never silently ignored)."""
    env = os.environ if environ is None else environ
    if token_file_path:
        return read_token_file(token_file_path)
    token = env.get(TOKEN_ENV, "").strip()
    if token:
        return token
    named = env.get(TOKEN_FILE_ENV, "").strip()
    if named:
        return read_token_file(named, TOKEN_FILE_ENV)
    if url is None:
        return None
    try:
        parts = urlsplit(url)
        port, host = parts.port, parts.hostname
    except ValueError:
        return None
    if host not in _LOOPBACK or port is None:
        return None
    try:
        return token_file(port, env).read_text(encoding="utf-8").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def new_nonce() -> str:
    """32 random bytes, base64url without padding (43 characters)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode("ascii")


def valid_nonce(nonce: str | None) -> bool:
    return (
        isinstance(nonce, str)
        and 22 <= len(nonce) <= 128
        and all(c.isascii() and (c.isalnum() or c in "-_") for c in nonce)
    )


def proof(token: str, label: str, client_nonce: str, server_nonce: str) -> str:
    """HMAC-SHA256(key = the token's UTF-8 bytes, message = label LF client nonce LF server nonce), hex."""
    message = f"{label}\n{client_nonce}\n{server_nonce}".encode()
    return hmac.new(token.encode("utf-8"), message, hashlib.sha256).hexdigest()


def proof_ok(expected: str, given: object) -> bool:
    return isinstance(given, str) and hmac.compare_digest(expected.encode(), given.encode("utf-8", "replace"))


def token_subprotocol(token: str) -> str:
    """The viewer's token as a WebSocket subprotocol: hex of its UTF-8 bytes (always a valid token)."""
    return TOKEN_SUBPROTOCOL_PREFIX + token.encode("utf-8").hex()


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
    return has_capability(welcome, BATCH)


def has_capability(welcome: Mapping[str, Any], name: str) -> bool:
    """Whether the hub that sent this `welcome` listed `name` in its (optional) `capabilities`."""
    capabilities = welcome.get(CAPABILITIES)
    return isinstance(capabilities, list) and name in capabilities


def dropped(runs: Mapping[str, Mapping[str, int]]) -> dict[str, Any]:
    """The `dropped` frame: `{runId: {reason: events lost so far}}` ("" for events of no known run)."""
    return {"type": DROPPED, "runs": {run: dict(reasons) for run, reasons in runs.items()}}


def stored_query(query_id: int, ranges: list[list[int]]) -> dict[str, Any]:
    """`{"type": "stored.query", "id": n, "seqs": [[first, last], ...]}` (inclusive, ascending)."""
    return {"type": STORED_QUERY, "id": query_id, "seqs": ranges}


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
