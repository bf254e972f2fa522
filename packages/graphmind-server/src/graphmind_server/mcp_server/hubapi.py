"""The running hub's control API, for the tools that need its live state (held gates, answers)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

from graphmind import protocol as proto


class HubUnreachable(Exception):
    pass


class HubApi:
    def __init__(self, port: int, timeout: float = 8.0, token_file: str | None = None) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.timeout = timeout
        # Loopback only: never through a proxy from the environment.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        # A hub started with a token wants it on every request; one without ignores it. Found like
        # every tool finds it (--token-file, GRAPHMIND_TOKEN, GRAPHMIND_TOKEN_FILE, the hub's token
        # file): protocol.find_token. TokenError (a named file unreadable) is the caller's one line.
        token = proto.find_token(f"ws://127.0.0.1:{port}/ingest", token_file_path=token_file)
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}

    def call(self, method: str, path: str, body: Any = None, timeout: float | None = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={**self._auth, **({"Content-Type": "application/json"} if data else {})},
        )
        try:
            with self._opener.open(req, timeout=timeout or self.timeout) as resp:
                return resp.status, json.loads(resp.read() or b"null")
        except urllib.error.HTTPError as exc:
            try:
                return exc.code, json.loads(exc.read() or b"null")
            except ValueError:
                return exc.code, {"error": exc.reason}
        except (urllib.error.URLError, OSError) as exc:
            raise HubUnreachable(
                f"no hub answers at {self.base} ({getattr(exc, 'reason', exc)}); "
                "start it with `graphmind serve`, or pass graphmind mcp --port"
            ) from None

    def gates(self) -> list[dict[str, Any]]:
        status, body = self.call("GET", "/api/gates", timeout=2.0)
        if status != 200 or not isinstance(body, dict):
            raise HubUnreachable(f"the hub at {self.base} answered {status} to GET /api/gates")
        return list(body.get("gates", []))

    def answer(
        self, gate_id: str, action: str, value: Any, has_value: bool, edit: dict[str, Any] | None = None
    ) -> tuple[int, Any]:
        """`edit`: the answer's `input` / `reload` fields (docs/api.md, `POST /api/gates/{gateId}`)."""
        body: dict[str, Any] = {"action": action}
        if has_value:
            body["value"] = value
        body.update(edit or {})
        return self.call("POST", f"/api/gates/{quote(gate_id, safe='')}", body)

    def set_debug(self, changes: dict[str, Any]) -> tuple[int, Any]:
        return self.call("PUT", "/api/debug", changes)
