"""Every public name of core's public modules, as they stood before core's modules moved into folders
(issue 27): a name may be added, none may disappear."""

from __future__ import annotations

import importlib

import pytest

PUBLIC: dict[str, list[str]] = {
    "graphmind": [
        "Client",
        "PROTOCOL_VERSION",
        "REDACTED",
        "RunAborted",
        "RunContext",
        "RunScope",
        "Span",
        "__version__",
        "adispose",
        "aready",
        "configure",
        "current_run",
        "dispose",
        "get_client",
        "ready",
        "run",
        "span",
        "stats",
        "tool",
        "tool_call",
        "unwrap",
        "wrap",
        "wrap_method",
        "wrap_tools",
    ],
    "graphmind.adapter": [
        "Engine",
        "GateAnswer",
        "Items",
        "KnownTimeout",
        "ModelReply",
        "NodeExecution",
        "NodeSpec",
        "Owned",
        "RunAborted",
        "RunContext",
        "Settled",
        "StepIdentity",
        "ToolCallReply",
        "describe_error",
        "engine_for",
        "json_scalar",
        "json_scalars",
        "parse_model_reply",
    ],
    "graphmind.adapter.stainless": [
        "Api",
        "Call",
        "Described",
        "Exchange",
        "Owned",
        "Patches",
        "RAW_RESPONSE_HEADER",
        "Reply",
        "ResourceHook",
        "Sdk",
        "StreamReader",
        "copy_wrapper",
        "instrument_client",
        "patch_resources",
        "post_wrapper",
        "reply_for",
        "resolve",
        "run_async",
        "run_sync",
        "send_wrapper",
        "split",
        "sse",
        "tool_hints",
        "uninstrument_client",
    ],
    "graphmind.protocol": [
        "ABORT",
        "ACTIONS",
        "AFTER",
        "BATCH",
        "BEFORE",
        "CAPABILITIES",
        "CLOSE_FORBIDDEN",
        "CLOSE_HELLO_REQUIRED",
        "CLOSE_UNAUTHORIZED",
        "CLOSE_UNSUPPORTED_PROTOCOL",
        "CONTINUE",
        "DEBUG_ACK",
        "DEBUG_STATE",
        "ERROR",
        "ERROR_GATE",
        "EVENT_TYPES",
        "EXEC_PAUSED",
        "EXEC_RESUMED",
        "GATES",
        "GATE_ACTIONS",
        "GATE_RESOLVE",
        "GATE_UNKNOWN",
        "GRAPH_HINT",
        "HELLO",
        "HOME_ENV",
        "INJECT",
        "LOOP_BEFORE_ACTIONS",
        "MODES",
        "NODE_ERROR",
        "NODE_FINISHED",
        "NODE_KINDS",
        "NODE_STARTED",
        "NODE_TOKEN",
        "PAUSE",
        "PROTOCOL_VERSION",
        "REASONS",
        "REDACTED",
        "RETRY",
        "RUN_ABORT",
        "RUN_FINISHED",
        "RUN_STARTED",
        "SUPPORTED_PROTOCOLS",
        "TOKEN_COOKIE",
        "TOKEN_ENV",
        "WELCOME",
        "batch",
        "decode",
        "encode",
        "hello",
        "negotiate",
        "takes_batches",
        "token_file",
    ],
    "graphmind.redaction": [
        "PLACEHOLDER",
        "SECRET_KEYS",
        "SECRET_KEY_SUFFIXES",
        "is_secret_key",
        "strip_secret_keys",
    ],
    "graphmind.testing": ["Answer", "FakeHub", "ProxyLike", "ThrowingGetterDict", "one_kb_tool_args"],
    "graphmind.testing.gate_matrix": ["BACKENDS", "CASES", "GateSubject", "Hub", "run_case"],
    "graphmind.testing.loopback": ["FakeRequest", "LoopbackFake", "LoopbackHTTP"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_every_public_name_is_still_there(module: str) -> None:
    mod = importlib.import_module(module)
    missing = [name for name in PUBLIC[module] if not hasattr(mod, name)]
    assert missing == []


@pytest.mark.parametrize(
    "module", sorted(m for m in PUBLIC if hasattr(importlib.import_module(m), "__all__"))
)
def test_every_public_name_is_still_exported(module: str) -> None:
    exported = set(importlib.import_module(module).__all__)
    missing = [name for name in PUBLIC[module] if name not in exported and name != "__version__"]
    assert missing == []
