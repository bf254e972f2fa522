"""A replay cassette with a huge line (issue 47): the file was read whole, so a 1 GB line cost
`Client()` 36 s and 3.1 GB before any error. Now it is read line by line and a line over
cassette.MAX_LINE is refused before it is read whole: one line naming the file and the line."""

from __future__ import annotations

import json
import resource
import time
from pathlib import Path

import pytest

import graphmind
from graphmind._replay.cassette import MAX_LINE
from graphmind._replay.errors import CassetteError

from .conftest import figure, scaled

LONG = scaled(MAX_LINE + 1024 * 1024, 1024**3)  # the line's length: just over the bound / 1 GB


def _cassette(path: Path) -> None:
    header = json.dumps({"type": "graphmind.export", "version": 1}) + "\n"
    event = json.dumps({"type": "event", "runId": "r", "event": {"type": "run.started", "runId": "r"}}) + "\n"
    with open(path, "w") as f:
        f.write(header + event)
        f.truncate(f.tell() + LONG)  # a sparse line of NULs with no newline: no disk space, no time


@pytest.mark.faults
def test_a_cassette_line_over_the_bound_is_a_one_line_error_before_it_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    _cassette(path)
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    started = time.perf_counter()
    with pytest.raises(CassetteError) as caught:
        graphmind.Client(app="t", url="ws://127.0.0.1:9/ingest", replay=str(path))
    took = time.perf_counter() - started
    grew = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - peak_before
    message = str(caught.value)
    figure(
        f"Client() on a cassette with a {LONG / 1024**2:,.0f} MiB line",
        f"{took:.2f} s, peak RSS +{grew:.0f} MB: {message}",
    )
    assert "\n" not in message and message.startswith(f"{path}:3: a line over {MAX_LINE // 1024**2} MiB"), (
        message
    )
    assert took < 5, took
    assert grew < 3 * MAX_LINE / 1024**2, grew  # at most the bound's worth, not the line's
