"""The server command line as recorded in the run's metadata (seeds: environment page, "Recording less").

With GRAPHMIND_HIDE_INPUTS the label keeps only the command's name and the file names of path
arguments: flags, their values, URLs and key=value pairs are dropped, and so is any other bare word
(it may be a token). Without it the label is the command line as typed.

What counts as a path argument is deliberately narrow, because a word wrongly taken for one is
recorded: one with a directory separator (`/` or `\\`, either on any OS, so a Windows path given to a
proxy on Linux keeps only its last part), a drive (`C:`) or a leading `~`; or a bare `name.ext` with one
dot and an extension that names a kind of file (`server.py`, `db.sqlite`). A dotted word that is
anything else (`sk-proj.abc123`, `api.example.com`, `1.2.3.4`) or holds an `@` (an email, a
`user@host`) is dropped.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

_SEPARATORS = re.compile(r"[\\/]")
_DRIVE = re.compile(r"^[A-Za-z]:")
# Extensions a bare file argument of an MCP server command plausibly has; a hostname's top-level
# domain or the tail of a token is not among them.
_FILE_EXTENSIONS = frozenset(
    [
        "py",
        "pyz",
        "js",
        "mjs",
        "cjs",
        "ts",
        "mts",
        "jar",
        "exe",
        "bat",
        "cmd",
        "ps1",
        "sh",
        "rb",
        "pl",
        "php",
        "lua",
        "json",
        "jsonl",
        "yaml",
        "yml",
        "toml",
        "ini",
        "cfg",
        "conf",
        "xml",
        "txt",
        "md",
        "csv",
        "tsv",
        "db",
        "sqlite",
        "sqlite3",
        "duckdb",
        "log",
    ]
)


def _is_path(arg: str) -> bool:
    if "://" in arg or "=" in arg or "@" in arg or arg.startswith("-"):
        return False
    if _SEPARATORS.search(arg) or _DRIVE.match(arg) or arg.startswith("~"):
        return True
    stem, dot, ext = arg.rpartition(".")
    return bool(dot and stem and "." not in stem and ext.lower() in _FILE_EXTENSIONS)


def _file_name(arg: str) -> str:
    """The last part of a path, whichever separator it uses (`C:\\a\\b.txt` and `/a/b.txt` give the same)."""
    parts = [part for part in _SEPARATORS.split(arg) if part]
    name = parts[-1] if parts else arg
    return name[2:] if _DRIVE.match(name) and len(parts) == 1 else name


def command_label(argv: Sequence[str], hide_inputs: bool) -> str:
    if not argv:
        return ""
    if not hide_inputs:
        return shlex.join(argv)
    kept = [_file_name(argv[0])]
    skip_value = False
    for arg in argv[1:]:
        if arg.startswith("-"):
            skip_value = "=" not in arg and arg not in ("-", "--")  # `--flag value`: the value goes too
            continue
        if skip_value:
            skip_value = False
            continue
        if _is_path(arg):
            name = _file_name(arg)
            if name and _is_kept_name(name):
                kept.append(name)
    return " ".join(kept)


def _is_kept_name(name: str) -> bool:
    """A path's last part is kept unless it is itself a dotted word that is not a file name."""
    return "@" not in name and ("." not in name or _is_path(name) or name.startswith("."))
