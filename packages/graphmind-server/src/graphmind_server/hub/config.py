"""The hub's settings: command-line flags first, then GRAPHMIND_* variables, then defaults.

Every bad value becomes a ConfigError whose message is the one line the CLI prints; it always
names the flag or variable that fixes it.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from graphmind import protocol as proto

from .debugstate import PAUSE_ON_ERROR_VALUES

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 4747
DEFAULT_KEEP_RUNS = 200
DEFAULT_KEEP_DAYS = 30
DEFAULT_ABANDON_GRACE_MS = 15000


class ConfigError(Exception):
    """A flag or variable has a value the hub cannot use; str() is the one line to print."""


@dataclass
class Settings:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    db: Path = field(default_factory=lambda: Path("~/.graphmind/graphmind.db").expanduser())
    keep_runs: int = DEFAULT_KEEP_RUNS
    keep_days: int = DEFAULT_KEEP_DAYS
    retention: bool = True
    pause_on_error: str = "on"
    abandon_grace_ms: int = DEFAULT_ABANDON_GRACE_MS
    # None means "*": the Origin (and Host) check is off.
    allowed_origins: list[str] | None = field(default_factory=list)
    viewer_dist: Path | None = None
    # --otlp-endpoint: forward each finished run to this OTLP/HTTP traces URL (docs/export.md).
    otlp_endpoint: str | None = None
    otlp_protocol: str = "http/protobuf"
    otlp_headers: dict[str, str] = field(default_factory=dict)
    token: str | None = None  # every request must carry it (docs/security.md)


def is_loopback(host: str) -> bool:
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def parse_token(value: str, name: str) -> str:
    text = value.strip()
    if text == "auto":
        return secrets.token_urlsafe(24)
    if len(text) < 16 or not text.isascii() or not text.isprintable() or any(c in text for c in " ;,\"'"):
        raise ConfigError(
            f"{name} must be auto or at least 16 printable ASCII characters without spaces, "
            f"quotes, commas or semicolons (got {len(text)} characters)"
        )
    return text


def token_setting(flags: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """--token auto, --token-file PATH, GRAPHMIND_TOKEN, GRAPHMIND_TOKEN_FILE (the first given), or None.

    A token's value is never taken from the command line: every user of the machine can read a
    process's arguments (/proc/<pid>/cmdline), so `--token VALUE` is refused."""
    flag, path = flags.get("token"), flags.get("token_file")
    if isinstance(flag, str) and isinstance(path, str):
        raise ConfigError("--token and --token-file say the same thing twice; keep one")
    if isinstance(flag, str):
        if flag.strip() != "auto":
            raise ConfigError(
                "--token takes only auto: a token written on the command line is readable by every user of "
                f"this machine (/proc/<pid>/cmdline); put it in {proto.TOKEN_ENV} or in a 0600 file given "
                "with --token-file PATH"
            )
        return parse_token("auto", "--token")
    try:
        if isinstance(path, str):
            return parse_token(proto.read_token_file(path), f"the token in {path}")
        if env.get(proto.TOKEN_ENV, "").strip():
            return parse_token(env[proto.TOKEN_ENV], proto.TOKEN_ENV)
        named = env.get(proto.TOKEN_FILE_ENV, "").strip()
        if named:
            return parse_token(proto.read_token_file(named, proto.TOKEN_FILE_ENV), f"the token in {named}")
    except proto.TokenError as exc:
        raise ConfigError(str(exc)) from None
    return None


def _whole(value: str, name: str, *, minimum: int, maximum: int | None = None) -> int:
    text = value.strip()
    try:
        number = int(text, 10)
    except ValueError:
        number = None
    if number is None or number < minimum or (maximum is not None and number > maximum):
        limit = f"from {minimum} to {maximum}" if maximum is not None else f">= {minimum}"
        raise ConfigError(f"{name} must be a whole number {limit} (got {value!r})")
    return number


def parse_pause_on_error(value: str, name: str) -> str:
    text = value.strip().lower()
    if text not in PAUSE_ON_ERROR_VALUES:
        raise ConfigError(f"{name} must be one of {', '.join(PAUSE_ON_ERROR_VALUES)} (got {value!r})")
    return text


def normalize_origin(origin: str) -> str | None:
    """`scheme://host[:port]` in lower case, or None when it is not an http(s) origin."""
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username:
        return None
    try:
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def parse_allowed_origins(value: str, name: str = "GRAPHMIND_ALLOWED_ORIGINS") -> list[str] | None:
    items = [item.strip() for item in value.split(",") if item.strip()]
    if "*" in items:
        return None
    origins = []
    for item in items:
        origin = normalize_origin(item)
        if origin is None:
            raise ConfigError(
                f"{name} must be a comma-separated list of origins like http://host.docker.internal:4747, "
                f"or * (got {item!r})"
            )
        origins.append(origin)
    return origins


def settings_from(flags: Mapping[str, str | bool | None], env: Mapping[str, str] | None = None) -> Settings:
    """Build Settings from parsed flags (strings, None when absent) and the environment."""
    env = os.environ if env is None else env
    s = Settings()

    def pick(flag_key: str, flag_name: str, var: str | None) -> tuple[str, str] | None:
        raw = flags.get(flag_key)
        if isinstance(raw, str):
            return raw, flag_name
        if var is not None and env.get(var, "").strip():
            return env[var], var
        return None

    if (v := pick("host", "--host", None)) is not None:
        if not v[0].strip():
            raise ConfigError("--host must name an interface, e.g. 127.0.0.1")
        s.host = v[0].strip()
    if (v := pick("port", "--port", None)) is not None:
        s.port = _whole(v[0], v[1], minimum=0, maximum=65535)
    if (v := pick("db", "--db", "GRAPHMIND_DB")) is not None:
        s.db = Path(v[0].strip()).expanduser()
    if (v := pick("keep", "--keep", "GRAPHMIND_KEEP_RUNS")) is not None:
        s.keep_runs = _whole(v[0], v[1], minimum=1)
    if (v := pick("days", "--days", "GRAPHMIND_KEEP_DAYS")) is not None:
        s.keep_days = _whole(v[0], v[1], minimum=1)
    if (v := pick("pause_on_error", "--pause-on-error", "GRAPHMIND_PAUSE_ON_ERROR")) is not None:
        s.pause_on_error = parse_pause_on_error(v[0], v[1])
    if (v := pick("", "", "GRAPHMIND_ABANDON_GRACE_MS")) is not None:
        s.abandon_grace_ms = _whole(v[0], v[1], minimum=0)
    if (v := pick("", "", "GRAPHMIND_RETENTION")) is not None:
        text = v[0].strip().lower()
        if text not in ("on", "off"):
            raise ConfigError(f"GRAPHMIND_RETENTION must be on or off (got {v[0]!r})")
        s.retention = text == "on"
    if (v := pick("", "", "GRAPHMIND_ALLOWED_ORIGINS")) is not None:
        s.allowed_origins = parse_allowed_origins(v[0])
    s.token = token_setting(flags, env)
    if not is_loopback(s.host) and s.token is None:
        raise ConfigError(
            f"--host {s.host} exposes prompts and the steering API beyond this machine, so it "
            "requires a token: add --token auto (or set GRAPHMIND_TOKEN, or pass --token-file PATH)"
        )
    if (v := pick("", "", "GRAPHMIND_VIEWER_DIST")) is not None:
        dist = Path(v[0].strip()).expanduser()
        if not dist.is_dir():
            raise ConfigError(
                f"GRAPHMIND_VIEWER_DIST={v[0]} is not a directory; unset it to serve the bundled viewer"
            )
        s.viewer_dist = dist
    _otlp_settings(s, flags)
    return s


def _otlp_settings(s: Settings, flags: Mapping[str, Any]) -> None:
    endpoint = flags.get("otlp_endpoint")
    if not isinstance(endpoint, str):
        return
    from ..export.otlp_http import check_protocol, parse_headers, traces_url
    from ..export.source import ExportError

    protocol = flags.get("otlp_protocol")
    try:
        s.otlp_endpoint = traces_url(endpoint)
        s.otlp_protocol = protocol if isinstance(protocol, str) else s.otlp_protocol
        check_protocol(s.otlp_protocol)
        headers = flags.get("otlp_header")
        s.otlp_headers = parse_headers(headers if isinstance(headers, list) else None)
    except ExportError as exc:
        raise ConfigError(str(exc)) from None
