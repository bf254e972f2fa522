"""Which provider a stored model call came from, and each provider's wire format (pure: no I/O).

A request is edited in one shape whatever the provider: `{"model", "messages": [{"role",
"content"}], "params": {...}}` (the node's input as the adapter described it: its other keys are
the params). Each provider turns it into its own body and reads its own reply back into `{"text",
"output", "usage"}`. Credentials come from the hub's environment only; they are put in the request
headers and nowhere else (never stored, never in an answer, never logged).
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..store import prices

# Keys of a node's input that are not the provider's parameters.
_NOT_PARAMS = frozenset(
    {"model", "messages", "system", "tools", "config", "input", "stream", "stream_options"}
)


@dataclass(frozen=True)
class Provider:
    name: str  # openai | anthropic | gemini | litellm
    label: str
    key_vars: tuple[str, ...]  # any one of them holds the key
    base_var: str | None
    default_base: str

    def missing(self, env: Mapping[str, str]) -> str | None:
        """The one line saying what the hub's environment lacks, or None."""
        if self.name == "litellm":
            if importlib.util.find_spec("litellm") is None:
                return "LiteLLM is not installed in the hub's environment: pip install 'graphmind-server[playground]'"
            return None
        if any(env.get(v) for v in self.key_vars):
            return None
        names = " or ".join(self.key_vars)
        return (
            f"{names} is not set in the hub's environment: start the hub with it to send {self.label} calls"
        )

    def key(self, env: Mapping[str, str]) -> str:
        return next((env[v] for v in self.key_vars if env.get(v)), "")

    def base(self, env: Mapping[str, str]) -> str:
        return ((env.get(self.base_var) if self.base_var else None) or self.default_base).rstrip("/")


PROVIDERS = {
    p.name: p
    for p in (
        Provider(
            "openai", "OpenAI-compatible", ("OPENAI_API_KEY",), "OPENAI_BASE_URL", "https://api.openai.com/v1"
        ),
        Provider(
            "anthropic",
            "Anthropic",
            ("ANTHROPIC_API_KEY",),
            "ANTHROPIC_BASE_URL",
            "https://api.anthropic.com",
        ),
        Provider(
            "gemini",
            "Gemini",
            ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
            "GOOGLE_GEMINI_BASE_URL",
            "https://generativelanguage.googleapis.com",
        ),
        Provider("litellm", "LiteLLM", (), None, ""),
    )
}


def provider_of(attrs: Any, model: str | None) -> str | None:
    """The provider of a stored model call, from what its adapter put in `attrs`: graphmind-openai
    and graphmind-anthropic name their `api` (`chat.completions`, `responses`; `messages`,
    `beta.messages`), graphmind-google-genai and Pydantic AI a `system`, graphmind-litellm a
    `provider`; else the model's family by its name."""
    a = attrs if isinstance(attrs, dict) else {}
    api = a.get("api")
    if api in ("chat.completions", "responses"):
        return "openai"
    if api in ("messages", "beta.messages"):
        return "anthropic"
    if isinstance(a.get("provider"), str) and a.get("hook") is not None:  # graphmind-litellm
        return "litellm"
    system = str(a.get("system") or a.get("provider") or "").lower()
    if system in ("openai", "azure", "openai-chat"):
        return "openai"
    if system == "anthropic":
        return "anthropic"
    if system in ("gemini", "google-gla", "google-vertex", "google", "vertex_ai"):
        return "gemini"
    name = (model or "").lower().rsplit("/", 1)[-1]
    if name.startswith(("gpt-", "o1", "o3", "o4", "chatgpt")):
        return "openai"
    if name.startswith("claude"):
        return "anthropic"
    if name.startswith("gemini"):
        return "gemini"
    return None


def request_of(node_input: Any, attrs: Any) -> dict[str, Any]:
    """The editable request of a stored model call's input."""
    inp = node_input if isinstance(node_input, dict) else {}
    model = inp.get("model") if isinstance(inp.get("model"), str) else None
    if model is None and isinstance(attrs, dict) and isinstance(attrs.get("model"), str):
        model = attrs["model"]
    raw = _l(inp.get("messages")) or _l(inp.get("input"))
    messages = [
        {"role": str(m.get("role") or "user"), "content": m.get("content")}
        for m in raw
        if isinstance(m, dict) and m.get("content") is not None
    ]
    if isinstance(inp.get("system"), str) and inp["system"]:
        messages.insert(0, {"role": "system", "content": inp["system"]})
    params = {k: v for k, v in inp.items() if k not in _NOT_PARAMS}
    if isinstance(inp.get("config"), dict):  # google-genai's generation config
        params.update({k: v for k, v in inp["config"].items() if k != "system_instruction"})
    return {"model": model or "", "messages": messages, "params": params}


def check_request(value: Any) -> dict[str, Any]:
    """The request as sent by the viewer, checked; ValueError with the one line to show."""
    if not isinstance(value, dict):
        raise ValueError('request must be {"model": "...", "messages": [{"role", "content"}], "params": {}}')
    model, messages, params = value.get("model"), value.get("messages"), value.get("params", {})
    if not isinstance(model, str) or not model.strip():
        raise ValueError("request.model must name a model")
    if not isinstance(messages, list) or not messages:
        raise ValueError("request.messages must be a non-empty list of {role, content}")
    for m in messages:
        if not (isinstance(m, dict) and isinstance(m.get("role"), str) and "content" in m):
            raise ValueError("each message must be {role: string, content: ...}")
    if not isinstance(params, dict):
        raise ValueError("request.params must be an object (temperature, max_tokens, ...)")
    return {"model": model.strip(), "messages": messages, "params": params}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # parts: their text, else each as JSON
        return "\n".join(
            p["text"] if isinstance(p, dict) and isinstance(p.get("text"), str) else json.dumps(p)
            for p in content
        )
    return json.dumps(content)


def build(
    provider: str, req: dict[str, Any], env: Mapping[str, str]
) -> tuple[str, dict[str, str], dict[str, Any]]:
    """(url, headers, body) of one call."""
    p = PROVIDERS[provider]
    base, key, params = p.base(env), p.key(env), dict(req["params"])
    if provider == "openai":
        body = {"model": req["model"], "messages": req["messages"], **params}
        body.pop("stream", None)
        return f"{base}/chat/completions", {"authorization": f"Bearer {key}"}, body
    if provider == "anthropic":
        system = "\n\n".join(_text(m["content"]) for m in req["messages"] if m["role"] == "system")
        turns = [
            {"role": "assistant" if m["role"] == "assistant" else "user", "content": m["content"]}
            for m in req["messages"]
            if m["role"] != "system"
        ]
        body = {
            "model": req["model"],
            "max_tokens": params.pop("max_tokens", 1024),
            "messages": turns,
            **params,
        }
        if system:
            body["system"] = system
        headers = {"x-api-key": key, "anthropic-version": "2023-06-01"}
        return f"{base}/v1/messages", headers, body
    if provider == "gemini":
        system = "\n\n".join(_text(m["content"]) for m in req["messages"] if m["role"] == "system")
        contents = [
            {
                "role": "model" if m["role"] in ("assistant", "model") else "user",
                "parts": [{"text": _text(m["content"])}],
            }
            for m in req["messages"]
            if m["role"] != "system"
        ]
        renames = {"max_tokens": "maxOutputTokens", "max_output_tokens": "maxOutputTokens", "top_p": "topP", "top_k": "topK",
                   "stop_sequences": "stopSequences", "candidate_count": "candidateCount"}  # fmt: skip
        config = {renames.get(k, k): v for k, v in params.items()}
        body = {"contents": contents, **({"generationConfig": config} if config else {})}
        if system:
            body["systemInstruction"] = {"parts": [{"text": system}]}
        url = f"{base}/v1beta/models/{req['model'].removeprefix('models/')}:generateContent"
        return url, {"x-goog-api-key": key}, body
    raise ValueError(f"no wire format for provider {provider!r}")


def _n(v: Any) -> int:
    return v if type(v) is int and v > 0 else 0


def _d(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _l(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def parse(provider: str, data: Any) -> dict[str, Any]:
    """{"text", "output", "usage": {inputTokens, outputTokens, cachedTokens}} of a provider's reply."""
    d = _d(data)
    if provider in ("openai", "litellm"):
        message = _d(_d((_l(d.get("choices")) or [{}])[0]).get("message"))
        u = _d(d.get("usage"))
        usage = {
            "inputTokens": _n(u.get("prompt_tokens")),
            "outputTokens": _n(u.get("completion_tokens")),
            "cachedTokens": _n(_d(u.get("prompt_tokens_details")).get("cached_tokens")),
        }
        text = message.get("content")
        calls = message.get("tool_calls")
        shown = text if isinstance(text, str) else json.dumps(calls) if calls else ""
        return {"text": shown, "output": message, "usage": usage}
    if provider == "anthropic":
        blocks = _l(d.get("content"))
        text = "".join(
            str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
        )
        u = _d(d.get("usage"))
        cached = _n(u.get("cache_read_input_tokens"))
        usage = {
            "inputTokens": _n(u.get("input_tokens")) + cached + _n(u.get("cache_creation_input_tokens")),
            "outputTokens": _n(u.get("output_tokens")),
            "cachedTokens": cached,
        }
        return {
            "text": text,
            "output": {"content": blocks, "stop_reason": d.get("stop_reason")},
            "usage": usage,
        }
    if provider == "gemini":
        content = _d(_d((_l(d.get("candidates")) or [{}])[0]).get("content"))
        parts = _l(content.get("parts"))
        text = "".join(p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str))
        u = _d(d.get("usageMetadata"))
        usage = {
            "inputTokens": _n(u.get("promptTokenCount")),
            "outputTokens": _n(u.get("candidatesTokenCount")),
            "cachedTokens": _n(u.get("cachedContentTokenCount")),
        }
        return {"text": text, "output": content, "usage": usage}
    raise ValueError(f"no wire format for provider {provider!r}")


def cost(model: str, usage: dict[str, int]) -> float | None:
    """What a reply's tokens cost at the hub's price table (store/prices.py); None when unknown."""
    p = prices.price(model)
    if p is None:
        return None
    per_in, per_out, per_cached = p
    cached = min(usage.get("cachedTokens", 0), usage.get("inputTokens", 0))
    return round(
        (
            (usage.get("inputTokens", 0) - cached) * per_in
            + cached * per_cached
            + usage.get("outputTokens", 0) * per_out
        )
        / 1e6,
        10,
    )


def environment() -> Mapping[str, str]:
    return os.environ
