"""The four "recording less" switches: which values the app must never send.

Env: ``GRAPHMIND_HIDE_INPUTS`` / ``_OUTPUTS`` / ``_TOOL_ARGS`` / ``_TOOL_RESULTS`` = ``1`` or
``true`` (any case, surrounding spaces ignored); anything else is off. Options: ``hide_inputs`` …
``hide_tool_results`` = True, 1, "1" or "true". Either source turning a switch on turns it on: an
option cannot undo what the environment asked for.

Exports (``graphmind record``) add one more rule, applied to what was recorded: values under
secret-looking keys (``SECRET_KEYS``, ``SECRET_KEY_SUFFIXES``) are removed by ``strip_secret_keys``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "PLACEHOLDER",
    "SECRET_KEYS",
    "SECRET_KEY_SUFFIXES",
    "SWITCHES",
    "RedactionSwitches",
    "is_secret_key",
    "resolve_redaction_switches",
    "strip_secret_keys",
]

PLACEHOLDER = "__REDACTED__"

# (option name, environment variable)
SWITCHES: tuple[tuple[str, str], ...] = (
    ("hide_inputs", "GRAPHMIND_HIDE_INPUTS"),
    ("hide_outputs", "GRAPHMIND_HIDE_OUTPUTS"),
    ("hide_tool_args", "GRAPHMIND_HIDE_TOOL_ARGS"),
    ("hide_tool_results", "GRAPHMIND_HIDE_TOOL_RESULTS"),
)
_ON_TEXT = ("1", "true")
_OFF_TEXT = ("", "0", "false")


@dataclass(frozen=True)
class RedactionSwitches:
    hide_inputs: bool = False
    hide_outputs: bool = False
    hide_tool_args: bool = False
    hide_tool_results: bool = False

    @property
    def any(self) -> bool:
        return self.hide_inputs or self.hide_outputs or self.hide_tool_args or self.hide_tool_results

    def as_dict(self) -> dict[str, bool]:
        return {
            "hide_inputs": self.hide_inputs,
            "hide_outputs": self.hide_outputs,
            "hide_tool_args": self.hide_tool_args,
            "hide_tool_results": self.hide_tool_results,
        }

    @classmethod
    def from_wire(cls, switches: Mapping[str, Any]) -> RedactionSwitches:
        """From the camelCase names used by the conformance fixture (``hideInputs`` …)."""
        return cls(
            hide_inputs=bool(switches.get("hideInputs", False)),
            hide_outputs=bool(switches.get("hideOutputs", False)),
            hide_tool_args=bool(switches.get("hideToolArgs", False)),
            hide_tool_results=bool(switches.get("hideToolResults", False)),
        )


def env_switch_on(raw: str | None) -> bool:
    return raw is not None and raw.strip().lower() in _ON_TEXT


def option_switch_on(name: str, value: Any) -> bool:
    """True for True, 1, "1", "true"; False for False, 0, None, "", "0", "false".

    Anything else is a mistake we refuse loudly rather than read as "off": a config file that spells
    the switch oddly must not quietly record what it meant to hide.
    """
    if value is None or value is False or value is True:
        return bool(value)
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _ON_TEXT:
            return True
        if text in _OFF_TEXT:
            return False
    raise ValueError(
        f"{name}={value!r} is not understood: pass True or False (1, '1' and 'true' also mean on)"
    )


def resolve_redaction_switches(options: Mapping[str, Any], environ: Mapping[str, str]) -> RedactionSwitches:
    """Switches in effect: a switch is on when the option or the environment turns it on."""
    values = {
        name: option_switch_on(name, options.get(name)) or env_switch_on(environ.get(var))
        for name, var in SWITCHES
    }
    return RedactionSwitches(**values)


# Keys whose values an export removes by default (docs/export.md lists them for users). A key
# matches case-insensitively with "-" and "_" ignored ("API-Key", "api_key", "APIKEY" are one key),
# at any depth, in objects and in [name, value] pairs (header lists).
SECRET_KEYS: tuple[str, ...] = (
    "api_key",
    "apikey",
    "x-api-key",
    "api_token",
    "authorization",
    "proxy-authorization",
    "token",
    "access_token",
    "refresh_token",
    "id_token",
    "auth_token",
    "session_token",
    "bearer",
    "password",
    "passwd",
    "pwd",
    "secret",
    "client_secret",
    "secret_key",
    "aws_secret_access_key",
    "aws_session_token",
    "cookie",
    "set-cookie",
    "private_key",
    "credentials",
    "x-auth-token",
    "x-goog-api-key",
    "ocp-apim-subscription-key",
)
# ...and any key that ends with one of these ("openai_api_key", "github_access_token", "db_password").
SECRET_KEY_SUFFIXES: tuple[str, ...] = (
    "apikey",
    "secret",
    "password",
    "privatekey",
    "accesstoken",
    "refreshtoken",
    "authtoken",
    "sessiontoken",
    "secretkey",
)


def _norm(key: str) -> str:
    return key.lower().replace("-", "").replace("_", "")


_SECRET_NAMES = frozenset(_norm(k) for k in SECRET_KEYS)
_SECRET_SUFFIXES = tuple(_norm(k) for k in SECRET_KEY_SUFFIXES)


@functools.lru_cache(maxsize=4096)  # the same few keys repeat in every event of an export
def is_secret_key(key: str) -> bool:
    """True for a key whose value an export removes (``SECRET_KEYS``, ``SECRET_KEY_SUFFIXES``)."""
    norm = _norm(key)
    return norm in _SECRET_NAMES or norm.endswith(_SECRET_SUFFIXES)


def strip_secret_keys(value: Any) -> tuple[Any, int]:
    """(a copy of value with every value under a secret-looking key replaced by PLACEHOLDER, how many).

    A value that is already PLACEHOLDER, None or "" is left as it is and not counted: there is
    nothing to remove. Objects whose keys do not match are walked, at any depth.
    """
    removed = 0

    def secret(v: Any) -> Any:
        nonlocal removed
        if v is None or v == "" or v == PLACEHOLDER:
            return v
        removed += 1
        return PLACEHOLDER

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {
                k: secret(item) if isinstance(k, str) and is_secret_key(k) else walk(item)
                for k, item in v.items()
            }
        if isinstance(v, list):
            if len(v) == 2 and isinstance(v[0], str) and is_secret_key(v[0]):
                return [v[0], secret(v[1])]  # a (name, value) header pair
            return [walk(item) for item in v]
        return v

    return walk(value), removed
