"""The running hub's control API, for the tools that need its live state (held gates, answers)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from graphmind import protocol as proto

from ..access.proof import NotOurHub, ProvenHub, Unreachable, token_source


class HubUnreachable(Exception):
    pass


class HubApi:
    def __init__(self, port: int, timeout: float = 8.0, token_file: str | None = None) -> None:
        self.base = f"http://127.0.0.1:{port}"
        # A hub started with a token wants it on every request; one without ignores it. Found like
        # every tool finds it (--token-file, GRAPHMIND_TOKEN, GRAPHMIND_TOKEN_FILE, the hub's token
        # file): protocol.find_token. TokenError (a named file unreadable) is the caller's one line.
        # The token itself is never sent: the hub proves it knows it first (access/proof.py), so a
        # listener squatting on the port gets nothing.
        token = proto.find_token(f"ws://127.0.0.1:{port}/ingest", token_file_path=token_file)
        self._hub = ProvenHub(port, token, token_source(port, token_file), timeout=timeout)
        self._token = token

    def scrub(self, text: str) -> str:
        """`text` with the hub's token masked: a child's output (verify.py) may print its environment."""
        return text.replace(self._token, proto.REDACTED) if self._token else text

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, Any]:
        try:
            return self._hub.call(method, path, body, timeout, headers)
        except NotOurHub as exc:
            raise HubUnreachable(str(exc)) from None
        except Unreachable as exc:
            raise HubUnreachable(
                f"{exc}; start it with `graphmind serve`, or pass graphmind mcp --port"
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
        # The hub records that this answer came from the MCP server (effects/answer.py).
        return self.call(
            "POST", f"/api/gates/{quote(gate_id, safe='')}", body, headers={"X-GraphMind-Via": "mcp"}
        )

    def set_debug(self, changes: dict[str, Any]) -> tuple[int, Any]:
        return self.call("PUT", "/api/debug", changes)

    def propose(
        self, gate_id: str, action: str, value: Any, has_value: bool, why: str, apply: bool
    ) -> tuple[int, Any]:
        """`POST /api/proposals` (docs/api.md, "Proposals"): shown on the gate's card for the person
        to accept or reject; `apply` (--allow-control=auto) accepts it at once."""
        body: dict[str, Any] = {"gateId": gate_id, "action": action, "why": why}
        if has_value:
            body["value"] = value
        if apply:
            body["apply"] = True
        return self.call("POST", "/api/proposals", body, headers={"X-GraphMind-Via": "mcp"})
