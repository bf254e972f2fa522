"""The model gate: a loopback Anthropic-compatible endpoint the CLI sends its model turns to.

The Claude Agent SDK's agent loop runs in the Claude Code CLI, a subprocess: its model requests never
pass through Python. The instrumented options point the CLI at this server (`ANTHROPIC_BASE_URL` in
the options' env, http://127.0.0.1:<port>/s/<key>), which makes each Messages request through an
Anthropic client instrumented by graphmind-anthropic and pointed at the base URL the CLI would have
used. So a model turn is that adapter's `llm:step` node: its gates, inject, edit and replay are the
Anthropic adapter's (one conversion), and the CLI receives the reply (streamed event by event, as
the SDK's own event types serialise) exactly as the provider sent it or as the person answered.

Other requests (token counting, model listing) are forwarded as they are. The key in the path is
random per options object: a request without a known key gets 404 and reaches nothing. The server
listens on 127.0.0.1 only and runs in daemon threads (one per request), started at the first
instrumented options object and reused by every later one.
"""

from __future__ import annotations

import http.server
import json
import threading
import weakref
from typing import Any
from urllib.parse import urlsplit

from graphmind import ReplayDivergence
from graphmind.adapter import RunAborted

from ._forward import Reply, forward_messages, forward_raw
from ._session import SessionState

_HOP_HEADERS = frozenset({"host", "content-length", "connection", "accept-encoding", "transfer-encoding"})


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the app's stderr is its own
        pass

    def do_POST(self) -> None:
        self._serve("POST")

    def do_GET(self) -> None:
        self._serve("GET")

    def _serve(self, method: str) -> None:
        parts = urlsplit(self.path)
        pieces = parts.path.split("/", 3)  # "", "s", key, rest
        state = self.server.sessions.get(pieces[2]) if len(pieces) >= 3 and pieces[1] == "s" else None
        if state is None:
            self._send(Reply.error(404, "not_found_error", "unknown GraphMind model gate path"))
            return
        rest = "/" + (pieces[3] if len(pieces) > 3 else "")
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
        try:
            if method == "POST" and rest.rstrip("/") == "/v1/messages":
                body = json.loads(raw or b"{}")
                if not isinstance(body, dict):
                    raise ValueError("the request body is not a JSON object")
                reply = state.run_in_context(lambda: forward_messages(state, body, headers, parts.query))
            else:
                reply = forward_raw(state, method, rest, parts.query, headers, raw)
        except RunAborted as exc:
            state.note_fatal(exc)
            reply = Reply.error(400, "invalid_request_error", "Run aborted from the GraphMind debugger")
        except ReplayDivergence as exc:
            state.note_fatal(exc)
            reply = Reply.error(400, "invalid_request_error", f"GraphMind: {exc}")
        except ValueError as exc:
            reply = Reply.error(400, "invalid_request_error", f"GraphMind model gate: {exc}")
        except Exception as exc:  # a replay's divergence under "fail", a recorded error: one line to the CLI
            reply = Reply.error(400, "invalid_request_error", f"GraphMind: {type(exc).__name__}: {exc}")
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        try:
            self.send_response(reply.status)
            for name, value in reply.headers.items():
                self.send_header(name, value)
            if reply.events is None:
                self.send_header("content-length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
                return
            # A stream: server-sent events as the provider sends them, then the connection closes.
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.close_connection = True
            self.end_headers()
            for chunk in reply.events:
                self.wfile.write(chunk)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):  # the CLI went away (interrupted, timed out)
            self.close_connection = True
        finally:
            if reply.events is not None:
                reply.close()


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.sessions: weakref.WeakValueDictionary[str, SessionState] = weakref.WeakValueDictionary()


_LOCK = threading.Lock()
_SERVER: _Server | None = None


def register(state: SessionState) -> str:
    """The base URL the CLI of `state`'s sessions sends model turns to (the server starts once)."""
    global _SERVER
    with _LOCK:
        if _SERVER is None:
            server = _Server()
            threading.Thread(
                target=server.serve_forever, name="graphmind-claude-model-gate", daemon=True
            ).start()
            _SERVER = server
        _SERVER.sessions[state.key] = state
        host, port = _SERVER.server_address[:2]
    return f"http://{host!s}:{port}/s/{state.key}"


def shutdown() -> None:
    """Stops the server (uninstrument): options instrumented before keep a dead address."""
    global _SERVER
    with _LOCK:
        server, _SERVER = _SERVER, None
    if server is not None:
        server.shutdown()
        server.server_close()
