"""The running hub's control API, for the tools that need its live state (held gates, answers)."""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote


class HubUnreachable(Exception):
    pass


class HubApi:
    def __init__(self, port: int, timeout: float = 8.0) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.timeout = timeout
        # Loopback only: never through a proxy from the environment.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        # A hub started with a token (GRAPHMIND_TOKEN) wants it on every request; one without ignores it.
        token = os.environ.get("GRAPHMIND_TOKEN", "").strip()
        self._auth = {"Authorization": f"Bearer {token}"} if token else {}

    def call(self, method: str, path: str, body: Any = None, timeout: float | None = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"} if data else {},
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

    def answer(self, gate_id: str, action: str, value: Any, has_value: bool) -> tuple[int, Any]:
        body: dict[str, Any] = {"action": action}
        if has_value:
            body["value"] = value
        return self.call("POST", f"/api/gates/{quote(gate_id, safe='')}", body)

    def set_debug(self, changes: dict[str, Any]) -> tuple[int, Any]:
        return self.call("PUT", "/api/debug", changes)
