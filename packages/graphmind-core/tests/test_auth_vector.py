"""The mutual proof's test vector from docs/protocol.md ("Authentication"): a client in another
language checks its HMAC against these numbers."""

from __future__ import annotations

from graphmind import protocol as proto

TOKEN = "example-token-0123456789"
CLIENT = "Y2xpZW50LW5vbmNlLWV4YW1wbGUtMDEyMzQ1Njc4OWFi"
SERVER = "c2VydmVyLW5vbmNlLWV4YW1wbGUtMDEyMzQ1Njc4OWFi"


def test_the_documented_vector() -> None:
    assert proto.proof(TOKEN, proto.HUB_PROOF_LABEL, CLIENT, SERVER) == (
        "fe0f4832f47e8e999495eacd524490c4aef03b8d99b3fb9ce7e3ecb484ede3e1"
    )
    assert proto.proof(TOKEN, proto.APP_PROOF_LABEL, CLIENT, SERVER) == (
        "886c7c64a443c11ba2eb713f0b83249cf53d933090bb43bf10384760676d5f72"
    )
    assert (
        proto.token_subprotocol(TOKEN) == "graphmind.token.6578616d706c652d746f6b656e2d30313233343536373839"
    )


def test_nonces_are_fresh_and_well_formed() -> None:
    nonces = {proto.new_nonce() for _ in range(100)}
    assert len(nonces) == 100 and all(proto.valid_nonce(n) and len(n) == 43 for n in nonces)
    assert (
        not proto.valid_nonce("short")
        and not proto.valid_nonce("x" * 30 + "/")
        and not proto.valid_nonce(None)
    )
    assert not proto.proof_ok("ab" * 32, None) and proto.proof_ok("ab" * 32, "ab" * 32)
