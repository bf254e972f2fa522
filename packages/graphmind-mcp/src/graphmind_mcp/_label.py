"""The server command line as recorded in the run's metadata (seeds: environment page, "Recording less").

With GRAPHMIND_HIDE_INPUTS the label keeps only the command's name and the file names of path
arguments: flags, their values, URLs and key=value pairs are dropped, and so is any other bare word
(it may be a token). Without it the label is the command line as typed.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence


def _is_path(arg: str) -> bool:
    if "://" in arg or "=" in arg or arg.startswith("-"):
        return False
    if "/" in arg or os.sep in arg or arg.startswith("~"):
        return True
    stem, dot, ext = arg.rpartition(".")
    return bool(dot and stem and ext.isalnum() and not ext.isdigit())


def _file_name(arg: str) -> str:
    return os.path.basename(arg.rstrip("/" + os.sep)) or arg


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
            kept.append(_file_name(arg))
    return " ".join(kept)
