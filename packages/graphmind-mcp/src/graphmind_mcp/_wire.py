"""JSON-RPC over stdio, line by line: the host's side (this process's stdin/stdout) and the server's
(a child process). The proxy reads each line once to route it and writes most of them on unchanged."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

LIMIT = 64 * 1024 * 1024  # one JSON-RPC message per line; a tool result can be large
HEAD = 4096  # what is kept of a longer line: enough for its "id"
# The message's own id, before its payload: `{"jsonrpc":"2.0","id":7,"result":…` (a key "id" inside
# the result or params is not looked at).
_ID = re.compile(rb'^\s*\{(?:(?!"(?:result|error|params)"\s*:).)*?"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)', re.S)


@dataclass(slots=True)
class TooLong:
    """A line over LIMIT, skipped without being held whole: its size and its message's id."""

    size: int
    request_id: str | int | None


async def read_line(reader: asyncio.StreamReader) -> bytes | TooLong:
    """The next line (b"" at the end), or TooLong for one over LIMIT: read and dropped a buffer at
    a time, never held whole. (StreamReader.readline raises ValueError there and leaves the rest of
    the line to be read as more lines: the proxy used to end on it, with a traceback.)"""
    try:
        return await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as exc:
        return exc.partial  # the last line, without its newline (or b"" at the end)
    except asyncio.LimitOverrunError as exc:
        size = exc.consumed
        head = await reader.readexactly(min(size, HEAD))
        await reader.readexactly(size - len(head))  # dropped: no newline in it
    while True:
        try:
            size += len(await reader.readuntil(b"\n"))
            break
        except asyncio.IncompleteReadError as exc:
            size += len(exc.partial)
            break
        except asyncio.LimitOverrunError as exc:
            size += len(await reader.readexactly(exc.consumed))
    return TooLong(size, _request_id(head))


def _request_id(head: bytes) -> str | int | None:
    match = _ID.match(head)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return value if isinstance(value, str | int) else None


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def decode(line: bytes) -> Any:
    """The message on one line, or None for a line that is not a JSON object (passed on untouched)."""
    try:
        message = json.loads(line)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


class Lines:
    """A writer of whole lines; writes from concurrent tasks never interleave within a line."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def send(self, line: bytes) -> None:
        self._writer.write(line)  # one write per line: the transport keeps lines whole
        await self._writer.drain()

    def close(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()


async def host_stdio() -> tuple[asyncio.StreamReader, Lines]:
    """This process's stdin and stdout as asyncio streams (cancellable, unlike a thread blocked in read)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LIMIT)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(sys.stdin.fileno(), "rb", 0, closefd=False)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(sys.stdout.fileno(), "wb", 0, closefd=False)
    )
    return reader, Lines(asyncio.StreamWriter(transport, protocol, None, loop))


async def spawn(argv: Sequence[str]) -> asyncio.subprocess.Process:
    """The real server, with the proxy's whole environment (a host passes the server's secrets so)
    and the proxy's stderr (the server's own messages reach the host's log as they would without it)."""
    return await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=None,
        env=dict(os.environ),
        limit=LIMIT,
    )
