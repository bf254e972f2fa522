"""Options, environment variables and the kill-switch order (environment page, "Kill-switch precedence")."""

from __future__ import annotations

import logging
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._base.clock import Clock, monotonic_ms
from .._events.mask import resolve_mask
from .._runs.thread import thread_id
from .checks import (
    check_options,
    enabled_word,
)  # at import: its difflib costs the first Client() ~2 ms otherwise

DEFAULT_URL = "ws://127.0.0.1:4747/ingest"

# Python has no NODE_ENV: the first of these that is set decides whether this looks like production.
PRODUCTION_ENV_VARS = (
    "GRAPHMIND_ENV",
    "ENVIRONMENT",
    "APP_ENV",
    "PYTHON_ENV",
    "ENV",
    "DJANGO_ENV",
    "FLASK_ENV",
    "NODE_ENV",
)

KNOWN_OPTIONS = frozenset(
    {
        "url",
        "enabled",
        "meta",
        "connect_timeout",
        "handshake_timeout",
        "retry_interval",
        "buffer_size",
        "max_buffer_bytes",
        "pause_timeout",
        "logger",
        "wait_for_attach",
        "breakpoints",
        "hide_inputs",
        "hide_outputs",
        "hide_tool_args",
        "hide_tool_results",
        "loop_guard",
        "clock",
        "sdk",
        "token_flush_interval",
        "mask",
        "replay",
        "safe",
        "safe_unknown",
        "effects",
        "thread",
    }
)


def _warn_option(logger: Any, message: str) -> None:
    log = logger if callable(getattr(logger, "warning", None)) else logging.getLogger("graphmind")
    try:
        log.warning(message)
    except Exception:  # a broken logger must not break the app either
        pass


def disabled_for_good(environ: Mapping[str, str]) -> bool:
    """GRAPHMIND_DISABLED=1: the one kill switch nothing overrides, not even `enabled=True`."""
    return environ.get("GRAPHMIND_DISABLED", "").strip() == "1"


def is_enabled(enabled_option: Any, environ: Mapping[str, str]) -> bool:
    """The kill-switch table, top to bottom; the first match wins. An `enabled=` that is neither a
    bool nor a word for one counts as not given (the environment decides; check_options warns)."""
    if disabled_for_good(environ):
        return False
    if isinstance(enabled_option, bool):
        return enabled_option
    word = enabled_word(enabled_option)
    if word is not None:
        return word
    for name in PRODUCTION_ENV_VARS:
        value = environ.get(name)
        if value is not None and value != "":
            if value.strip().lower() in ("production", "prod"):
                return environ.get("GRAPHMIND", "").strip() == "1"
            break
    return True


def default_app_name() -> str:
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    stem = Path(argv0).stem
    return stem if stem and stem not in ("-c", "-m", "__main__") else "python-app"


def _seconds(name: str, value: Any, default: float | None, *, allow_none: bool = False) -> float | None:
    if value is None:
        if allow_none:
            return None
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"graphmind: option {name} must be a number of seconds >= 0, got {value!r}")
    return float(value)


def _float(value: float | None) -> float:
    assert value is not None
    return value


def _count(name: str, value: Any, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"graphmind: option {name} must be a whole number >= 1, got {value!r}")
    return value


@dataclass(frozen=True)
class Options:
    app: str
    enabled: bool
    url: str
    meta: dict[str, Any]
    connect_timeout: float
    handshake_timeout: float
    retry_interval: float
    buffer_size: int
    max_buffer_bytes: int
    pause_timeout: float | None
    wait_for_attach: float | None
    token_flush_interval: float
    logger: logging.Logger
    clock: Clock
    sdk: dict[str, str]
    raw: Mapping[str, Any] = field(repr=False)
    mask: re.Pattern[str] | None = None  # `mask=` and GRAPHMIND_MASK, combined (_mask.resolve_mask)
    thread: str | None = None  # `thread=`, else GRAPHMIND_THREAD: the thread of a run naming none

    @classmethod
    def resolve(
        cls, app: str | None, options: Mapping[str, Any], environ: Mapping[str, str] | None = None
    ) -> Options:
        env = os.environ if environ is None else environ
        # Fail open (_config/checks.py): never raise for an option; warn only when enabled.
        enabled = is_enabled(options.get("enabled"), env)
        options = check_options(options, enabled, options.get("logger"))
        # Only the option as given; the default (wait where the hub is local and listening) and the
        # variable: _hub/attach_wait.py.
        wait = options.get("wait_for_attach")
        if wait is True:
            wait_s: float | None = 2.0
        elif wait is None or wait is False:
            wait_s = None
        else:
            wait_s = _seconds("wait_for_attach", wait, None)
        from .._version import __version__

        mask = None
        if enabled:  # disabled: nothing is checked (a GRAPHMIND_MASK typo included)
            try:
                mask = resolve_mask(options.get("mask"), env)
            except ValueError as exc:
                # Fail open without leaking: a mask that cannot be read hides every value instead.
                _warn_option(
                    options.get("logger"), f"graphmind: {exc}; every input and output is hidden instead"
                )
                options = {**options, "hide_inputs": True, "hide_outputs": True}

        return cls(
            app=app or default_app_name(),
            enabled=enabled,
            # Surrounding spaces (a quoted `GRAPHMIND_URL=" ws://… "`, a pasted line) never attached.
            url=(options.get("url") or env.get("GRAPHMIND_URL") or "").strip() or DEFAULT_URL,
            meta=dict(options.get("meta") or {}),
            connect_timeout=_seconds("connect_timeout", options.get("connect_timeout"), 0.3)
            or 0.3,  # 0 would never connect
            handshake_timeout=_seconds("handshake_timeout", options.get("handshake_timeout"), 1.0) or 1.0,
            retry_interval=_seconds("retry_interval", options.get("retry_interval"), 10.0) or 10.0,
            buffer_size=_count("buffer_size", options.get("buffer_size"), 5000),
            max_buffer_bytes=_count("max_buffer_bytes", options.get("max_buffer_bytes"), 8 * 1024 * 1024),
            pause_timeout=_seconds("pause_timeout", options.get("pause_timeout"), None, allow_none=True),
            wait_for_attach=wait_s,
            token_flush_interval=_float(
                _seconds("token_flush_interval", options.get("token_flush_interval"), 0.034)
            ),
            logger=options.get("logger") or logging.getLogger("graphmind"),
            clock=options.get("clock") or monotonic_ms,
            sdk=dict(options.get("sdk") or {"name": "graphmind-python", "version": __version__}),
            raw=dict(options),
            mask=mask,
            thread=thread_id(options.get("thread")) or thread_id(env.get("GRAPHMIND_THREAD")),
        )
