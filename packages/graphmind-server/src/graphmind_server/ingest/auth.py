"""The hub's half of the mutual proof on `/ingest` (docs/protocol.md, "Authentication").

An app that knows the token sends a fresh nonce on its upgrade (`access/guard.py` lets such an upgrade
through without the token and leaves the nonce in the scope). The hub answers the 101 with its own
nonce and its proof, HMAC(token, hub label, both nonces), so the app can tell its hub from a
squatter before it sends anything; the app's hello then carries the app's proof, which the hub
checks before it takes any frame. Neither side ever sends the token. An app that sent no nonce
got here only with a valid `Authorization: Bearer` (older SDKs: docs/security.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphmind import protocol as proto

from ..access.guard import CHALLENGE_SCOPE_KEY


class Challenge:
    """One connection's handshake: the headers for the 101, then the check of the hello."""

    def __init__(self, token: str, client_nonce: str) -> None:
        self.token = token
        self.client_nonce = client_nonce
        self.server_nonce = proto.new_nonce()

    def headers(self) -> list[tuple[bytes, bytes]]:
        hub_proof = proto.proof(self.token, proto.HUB_PROOF_LABEL, self.client_nonce, self.server_nonce)
        return [
            (proto.AUTH_HEADER.encode(), proto.AUTH_SCHEME.encode()),
            (proto.SERVER_NONCE_HEADER.encode(), self.server_nonce.encode()),
            (proto.SERVER_PROOF_HEADER.encode(), hub_proof.encode()),
        ]

    def hello_ok(self, hello: dict[str, Any]) -> bool:
        auth = hello.get("auth")
        if not isinstance(auth, dict) or auth.get("scheme") != proto.AUTH_SCHEME:
            return False
        expected = proto.proof(self.token, proto.APP_PROOF_LABEL, self.client_nonce, self.server_nonce)
        return proto.proof_ok(expected, auth.get("proof"))


def challenge_for(scope: Mapping[str, Any], token: str | None) -> Challenge | None:
    nonce = scope.get(CHALLENGE_SCOPE_KEY)
    if token is None or not isinstance(nonce, str):
        return None
    return Challenge(token, nonce)
