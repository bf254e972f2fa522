"""One TCP connect to the hub, bounded by `connect_timeout` alone (issue 16 item 8).

The environment page gives the connect and the handshake each their own budget (connectTimeoutMs
300, handshakeTimeoutMs 1000). websockets' `connect(open_timeout=...)` has one budget for both, so
the transport opens the TCP connection here and hands the socket to websockets, whose
`open_timeout` then covers the TLS and HTTP upgrade only (`websockets/sync/client.py`,
`connect.open_connection`: a given `sock` skips `open_socket`).

An IP literal (the default URL's 127.0.0.1) is connected to directly: a process's first
`getaddrinfo` loads the resolver (1.5-3 ms measured here), which the first call of an app would
otherwise pay when it waits for the hub. A host name is resolved by the OS resolver, whose own
timeouts apply; `connect_timeout` bounds the connects that follow, all of them together.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit


def host_and_port(url: str) -> tuple[str, int]:
    """The URL's host and port (80 for ws://, 443 for wss:// when it names none). ValueError if it has no host."""
    parts = urlsplit(url)
    host = parts.hostname
    if not host:
        raise ValueError(f"no host in {url!r}")
    return host, parts.port or (443 if parts.scheme == "wss" else 80)


class TcpConnector:
    """`connect(host, port, timeout)`: a connected blocking socket, or OSError (TimeoutError after `timeout`).

    `socket.socket` and `socket.getaddrinfo` are bound when it is built, like everything else the
    transport calls (issue 18: a later monkeypatch in the app never receives GraphMind's connects).
    """

    def __init__(self) -> None:
        self._socket: Callable[..., socket.socket] = socket.socket
        self._getaddrinfo: Callable[..., list[Any]] = socket.getaddrinfo
        self._inet_pton = socket.inet_pton
        self._clock = time.monotonic

    def _addresses(self, host: str, port: int) -> list[tuple[int, Any]]:
        for family in (socket.AF_INET, socket.AF_INET6):
            try:
                self._inet_pton(family, host)
            except OSError:
                continue
            return [(family, (host, port))]  # a literal: no resolver
        return [(info[0], info[4]) for info in self._getaddrinfo(host, port, 0, socket.SOCK_STREAM)]

    def connect(self, host: str, port: int, timeout: float) -> socket.socket:
        addresses = self._addresses(host, port)
        deadline = self._clock() + timeout
        error: OSError | None = None
        for family, address in addresses:
            remaining = deadline - self._clock()
            if remaining <= 0:
                break
            try:  # an address family this host cannot open (::1 first, IPv6 off): try the next
                sock = self._socket(family, socket.SOCK_STREAM)
            except OSError as exc:
                error = exc
                continue
            try:
                sock.settimeout(remaining)
                sock.connect(address)
            except OSError as exc:
                sock.close()
                error = exc
                continue
            except BaseException:
                sock.close()
                raise
            sock.settimeout(None)
            return sock
        if error is None:  # the resolver gave no address, or the timeout was 0
            error = TimeoutError(f"no time left to connect to {host}:{port} within {timeout:g} s")
        raise error
