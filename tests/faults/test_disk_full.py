"""The disk fills up under a running hub while an app emits (issue 29): the hub stops storing, says
so, keeps what it received; the app keeps its events in its ring; once space returns every event is
stored or counted in the app's `stats()["dropped"]`, and the run ends `finished`.

Two ways to fill the disk: a real 32 MB tmpfs holding the database (needs `mount`, i.e. root in a
container that allows it; skipped otherwise), and an injected SQLITE_FULL (a page limit on the
in-process hub's write connection: what a full disk raises), which runs everywhere."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import graphmind
from graphmind_server.serve import start_in_thread
from graphmind_server.testing import HubProcess, api_call, wait_for

from .conftest import figure, scaled

SECONDS_FULL = scaled(2, 10)  # how long the disk stays full while the app goes on
PAYLOAD = "p" * 1000


@contextlib.contextmanager
def _tmpfs(where: Path, size: str = "32m") -> Iterator[Path]:
    """32 MB: once space returns, what the app kept meanwhile (its ring: up to 5,000 events of 1 KB)
    must fit, or the disk is full again before the run's end arrives (8 MB did not, on a fast run)."""
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.decode().strip()[:80]})")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _emit_through(client: graphmind.Client, stop: threading.Event, sent: list[int]) -> str:
    tool = client.wrap(lambda i, x: len(x), name="write")
    with client.run("through-a-full-disk") as run:
        while not stop.is_set():
            tool(sent[0], PAYLOAD)  # distinct arguments: the loop guard holds identical calls
            sent[0] += 1
            time.sleep(0.001)
    return run.run_id


def _scenario(
    url: str, api: Callable[[str], dict], fill: Callable[[], None], free: Callable[[], None]
) -> None:
    client = graphmind.Client(app="disk-full", url=url)
    try:
        assert client.ready(5)
        stop = threading.Event()
        sent = [0]
        result: list[str] = []
        emitter = threading.Thread(target=lambda: result.append(_emit_through(client, stop, sent)))
        emitter.start()
        wait_for(lambda: sent[0] > 200, timeout=20, what="the app emitting")
        fill()
        wait_for(lambda: api("/api/health").get("storing") is False, timeout=30, what="not storing")
        reason = api("/api/health")["notStoring"]
        time.sleep(SECONDS_FULL)  # the outage itself: the app goes on meanwhile
        free()
        wait_for(lambda: api("/api/health").get("storing") is True, timeout=30, what="storing again")
        stop.set()
        emitter.join(30)
        run_id = result[0]
        client.dispose()
        wait_for(lambda: api(f"/api/runs/{run_id}").get("status") == "finished", timeout=30, what="finished")
        stored = api(f"/api/runs/{run_id}")["eventCount"]
        events = client.stats()["events"]
        dropped = client.stats()["dropped"]
        figure(
            "disk full: events made / stored / counted dropped", f"{events} / {stored} / {dropped} ({reason})"
        )
        assert stored + dropped == events
    finally:
        client.dispose()


def test_a_real_full_tmpfs_loses_nothing_uncounted(tmp_path: Path, home: Path) -> None:
    with _tmpfs(tmp_path / "fs") as fs:
        ballast = fs / "ballast"
        with HubProcess(fs / "hub.db") as hub:

            def api(path: str) -> dict:
                return hub.api("GET", path)[1]

            def fill() -> None:
                with open(ballast, "wb", buffering=0) as fh, contextlib.suppress(OSError):
                    while True:
                        fh.write(b"\0" * 65536)

            _scenario(hub.ingest_url, api, fill, lambda: os.unlink(ballast))
        assert "Traceback" not in hub.stderr, hub.stderr
        assert hub.stderr.count("graphmind: not storing") <= 1 + SECONDS_FULL // 30, hub.stderr


def test_an_injected_disk_full_loses_nothing_uncounted(tmp_path: Path, home: Path) -> None:
    handle = start_in_thread(db=str(tmp_path / "hub.db"))
    try:
        conn = handle._server.hub.store._wconn

        def api(path: str) -> dict:
            return api_call(handle.url, "GET", path)[1]

        def fill() -> None:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {pages}")

        _scenario(handle.ingest_url, api, fill, lambda: conn.execute("PRAGMA max_page_count = 1073741823"))
    finally:
        handle.stop()


def test_a_full_disk_that_also_holds_the_hubs_log_resumes_within_5_s_and_health_tells_the_truth(
    tmp_path: Path, home: Path
) -> None:
    """The hub's stderr log on the full disk too (`graphmind serve 2>> hub.log`): a log line that
    cannot be written must never stop or kill the writer. Before: the hub did not store again 25 s
    after space returned, or `/api/runs` hung while health said "storing"; 347 of 9,006 events
    stored."""
    with _tmpfs(tmp_path / "fs") as fs:
        ballast = fs / "ballast"
        with HubProcess(fs / "hub.db", stderr_path=fs / "hub.log") as hub:
            client = graphmind.Client(app="disk-full", url=hub.ingest_url)
            try:
                assert client.ready(5)
                stop = threading.Event()
                sent = [0]
                result: list[str] = []
                emitter = threading.Thread(target=lambda: result.append(_emit_through(client, stop, sent)))
                emitter.start()
                wait_for(lambda: sent[0] > 200, timeout=20, what="the app emitting")
                with open(ballast, "wb", buffering=0) as fh, contextlib.suppress(OSError):
                    while True:
                        fh.write(b"\0" * 65536)
                wait_for(lambda: _health(hub)["storing"] is False, timeout=30, what="not storing")
                deadline = time.monotonic() + SECONDS_FULL
                while time.monotonic() < deadline:  # the outage: every answer prompt and true
                    _truthful(hub)
                os.unlink(ballast)
                freed = time.monotonic()
                wait_for(lambda: _health(hub)["storing"] is True, timeout=30, what="storing again")
                resumed = time.monotonic() - freed
                _truthful(hub)
                stop.set()
                emitter.join(30)
                run_id = result[0]
                client.dispose()
                run = wait_for(
                    lambda: (
                        (r := hub.api("GET", f"/api/runs/{run_id}", timeout=5)[1])["status"] == "finished"
                        and r
                    ),
                    timeout=30,
                    what=f"finished; the hub's log:\n{hub.stderr[-3000:]}",
                )
                events, dropped = client.stats()["events"], client.stats()["dropped"]
                figure(
                    "disk full with the log on it: resumed after / made / stored / dropped",
                    f"{resumed:.2f} s / {events} / {run['eventCount']} / {dropped}",
                )
                assert resumed <= 5.0
                assert run["eventCount"] + dropped == events
            finally:
                client.dispose()
        log = (fs / "hub.log").read_text(errors="replace")
    assert "Traceback" not in log, log
    # The lines of the outage were kept until the disk took them again.
    assert "graphmind: not storing: disk full" in log and "graphmind: storing again" in log, log


def _health(hub: HubProcess) -> dict:
    status, body = hub.api("GET", "/api/health", timeout=5)
    assert status == 200, body
    return dict(body)


def _truthful(hub: HubProcess) -> None:
    """Health and a read agree, and neither hangs: "storing" means a read waits for what was
    received and answers (a 5 s timeout fails the test); "not storing" answers with what is stored."""
    before = _health(hub)["storing"]
    status, body = hub.api("GET", "/api/runs", timeout=5)
    assert status == 200, body
    after = _health(hub)
    assert after["storing"] or after["notStoring"].startswith("not storing: "), (before, after)
