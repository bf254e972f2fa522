"""Fail-open options: a typo in a config must never crash the app it is meant to debug.

Environment page: "A disabled session no-ops everything ... no warnings", and every SDK promises it
"never raises into your app". So `Client(...)` never raises for an option:

- disabled: nothing is checked and nothing is logged; an unreadable value is dropped silently;
- enabled: an unknown option or an unreadable value is logged once (naming it, with the nearest
  valid name) and the default is used instead.

One exception to "use the default": a hide_* switch whose value cannot be read counts as ON. The
default (off) would quietly record what the config meant to hide (environment page, "Recording
less": a config that spells it oddly must not quietly record).
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Callable, Mapping
from typing import Any

from .._events.redaction import SWITCHES, option_switch_on
from .._loop.guard import _OPTION_KEYS as LOOP_GUARD_KEYS
from .._loop.guard import resolve_loop_guard_config

Warn = Callable[[str], None]


def nearest(name: str, candidates: Any) -> str:
    """' (did you mean X?)' for the closest candidate, else the list of valid names."""
    names = sorted(str(c) for c in candidates)
    match = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f"did you mean {match[0]}?" if match else f"valid names: {', '.join(names)}"


def _seconds(value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError("is not a number of seconds >= 0")


def _count(value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError("is not a whole number >= 1")


def _wait(value: Any) -> None:
    if value is True or value is False or value is None:
        return
    _seconds(value)


def _text(value: Any) -> None:
    if value is not None and not isinstance(value, str):
        raise ValueError("is not a string")


def _mapping(value: Any) -> None:
    if value is not None and not isinstance(value, Mapping):
        raise ValueError("is not a dict")


def _logger(value: Any) -> None:
    if value is not None and not callable(getattr(value, "warning", None)):
        raise ValueError("is not a logging.Logger")


def _clock(value: Any) -> None:
    if value is not None and not callable(value):
        raise ValueError("is not a callable returning milliseconds")


def _any(value: Any) -> None:
    return


def enabled_word(value: Any) -> bool | None:
    """`enabled=` given as a string ("false", "0", "on", …) or as the number 0 or 1: what it says
    (the seeds' "as given"), None if it says nothing. `bool("false")` is True: a string read from a
    config file turned GraphMind on in production; `enabled=0` once counted as not given, so the
    environment's rule turned it on, and `enabled=1` under production turned it off."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return True if value == 1 else False if value == 0 else None
    if not isinstance(value, str):
        return None
    word = value.strip().lower()
    if word in ("1", "true", "on", "yes"):
        return True
    if word in ("0", "false", "off", "no", ""):
        return False
    return None


def _enabled(value: Any) -> None:
    if value is not None and not isinstance(value, bool) and enabled_word(value) is None:
        raise ValueError('is not True or False (nor 0, 1, or a word such as "off")')


def _breakpoints(value: Any) -> None:
    from .._hub.code_holds import client_breakpoints

    try:
        client_breakpoints(value)
    except ValueError as exc:
        raise ValueError(str(exc).replace("graphmind: option breakpoints ", "", 1)) from exc


# option -> (check that raises ValueError with the reason, what the fallback is called in the warning)
CHECKS: dict[str, tuple[Callable[[Any], None], str]] = {
    "url": (_text, "the default (GRAPHMIND_URL or ws://127.0.0.1:4747/ingest)"),
    "enabled": (_enabled, "the environment's rule (off in production)"),
    "meta": (_mapping, "no meta"),
    "thread": (_text, "GRAPHMIND_THREAD, else no thread"),
    "connect_timeout": (_seconds, "the default (0.3)"),
    "handshake_timeout": (_seconds, "the default (1.0)"),
    "retry_interval": (_seconds, "the default (10.0)"),
    "buffer_size": (_count, "the default (5000)"),
    "max_buffer_bytes": (_count, "the default (8 MiB)"),
    "pause_timeout": (_seconds, "the default (hold forever)"),
    "logger": (_logger, "the default (logging.getLogger('graphmind'))"),
    "wait_for_attach": (_wait, "the default (GRAPHMIND_WAIT_FOR_ATTACH, else a short wait for a local hub)"),
    "clock": (_clock, "the default (a monotonic clock)"),
    "sdk": (_mapping, "the default"),
    "token_flush_interval": (_seconds, "the default (0.034)"),
    "loop_guard": (_any, ""),  # checked field by field below
    "breakpoints": (_breakpoints, "no breakpoints from code"),
    "mask": (_any, ""),  # checked in Options.resolve: an unreadable mask hides every value instead
    "replay": (_any, ""),  # checked by _replay/settings.py: a replay that cannot be set up raises
    "safe": (_any, ""),  # checked by _effects/policy.py: a safe mode that is not one raises
    "safe_unknown": (_any, ""),
    "effects": (_any, ""),  # checked by _effects/policy.py
    **{name: (_any, "") for name, _ in SWITCHES},  # checked below: unreadable means on
}


def _loop_guard(value: Any, warn: Warn | None) -> Any:
    """The loop_guard option with unreadable fields removed (their environment value or default applies)."""
    if value is None or isinstance(value, bool):
        return value
    if not isinstance(value, Mapping):
        if warn:
            warn(
                f"graphmind: option loop_guard={value!r} is not False, True or a dict such as "
                "{'threshold': 5}; using the default (GRAPHMIND_LOOP_* or threshold 3, mode pause)"
            )
        return None
    kept: dict[str, Any] = {}
    for key, field_value in value.items():
        if not isinstance(key, str) or key not in LOOP_GUARD_KEYS:
            if warn:
                warn(
                    f"graphmind: loop_guard has no option {key!r}, so it is ignored; "
                    f"{nearest(str(key), set(LOOP_GUARD_KEYS.values()))}"
                )
            continue
        try:
            resolve_loop_guard_config({key: field_value}, {})
        except ValueError as exc:
            if warn:
                warn(f"graphmind: {exc}; using its GRAPHMIND_LOOP_* value or default instead")
            continue
        kept[key] = field_value
    return kept


def check_options(options: Mapping[str, Any], enabled: bool, logger: Any) -> dict[str, Any]:
    """The options with every unknown name and unreadable value removed; warns only when enabled."""
    warn: Warn | None = None
    if enabled:
        log = logger if callable(getattr(logger, "warning", None)) else logging.getLogger("graphmind")

        def warn(message: str) -> None:
            try:
                log.warning(message)
            except Exception:  # a broken logger must not break the app either
                pass

    clean: dict[str, Any] = {}
    for name, value in options.items():
        check = CHECKS.get(name)
        if check is None:
            if warn:
                warn(f"graphmind: unknown option {name!r} is ignored; {nearest(str(name), CHECKS)}")
            continue
        if name == "loop_guard":
            clean[name] = _loop_guard(value, warn)
            continue
        if name in dict(SWITCHES):
            try:
                clean[name] = option_switch_on(name, value)
            except ValueError:
                clean[name] = True
                if warn:
                    warn(
                        f"graphmind: option {name}={value!r} is not understood, so it counts as on "
                        "(hidden rather than recorded); pass True or False"
                    )
            continue
        validate, fallback = check
        try:
            validate(value)
        except ValueError as exc:
            if warn:
                warn(f"graphmind: option {name}={value!r} {exc}; using {fallback}")
            continue
        clean[name] = value
    return clean
