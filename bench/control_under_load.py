"""A gate answered while the hub is busy: N apps x R events/s into a real hub, a probe app holding a
gate every interval, a poller answering each one through the API (issue 37).

    uv run python bench/control_under_load.py [--apps 8] [--rate 2000] [--seconds 180] [--every 0.5]
    uv run python bench/control_under_load.py --short   # 30 s, a quick figure
    uv run python bench/control_under_load.py --full    # 600 s, the whole-loop acceptance run

- The hub: `graphmind serve` in a subprocess (`graphmind_server.testing.HubProcess`) on a
  temporary database, with its own GRAPHMIND_HOME.
- The load: one subprocess per app, a raw protocol-v1 WebSocket client sending pre-encoded tool
  node events (node.started / node.finished pairs, a 100-character input) paced at R events/s in
  batch frames every 5 ms, as the SDK's write loop sends them (its batching window is 5 ms).
- The probe: a real `graphmind.Client` in its own subprocess; every `--every` seconds it calls a
  tool wrapped with `breakpoint="before"`, so the call holds until it is answered.
- The poller (this process, as a viewer or a script would): GET /api/gates every `--poll`
  seconds; for each new gate, POST `{"action": "continue"}` and time the POST until its 200 (the
  hub answers only once the app confirmed with exec.resumed, so this is the whole answer round
  trip: hub -> app -> hub -> poller).

Prints the whole loop as the app sees it (a held call's start to its resume: the gate's events
reaching the hub behind the load, the poller seeing it, the answer, the app resuming), the part of
it until the poller saw the gate, then p50 / p90 / p99 / max of the answer round trip, the gates answered, the events the load apps
sent vs the events the hub stored (lost = the difference), and the hub's RSS (start, max, end).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
WINDOW_S = 0.005  # the SDK's batching window (graphmind/_wire/write_loop.py LINGER_S)
FRAME_EVENTS = 2048  # at most this many events per frame, as the SDK's write loop (BATCH): ~600 KB


# -- the load apps (child processes) ----------------------------------------------------------------


def load_app(index: int, url: str, rate: float, seconds: float) -> None:
    """One app: `rate` events/s for `seconds`, in a batch frame per 5 ms tick; prints how many it sent."""
    from websockets.sync.client import connect

    from graphmind import protocol as proto

    run_id = f"load-{index}"
    payload = json.dumps({"query": "x" * 100})
    head = f'"runId":"{run_id}","nodeId":"tool:search","kind":"tool","name":"search"'
    with connect(url, max_size=None, compression=None) as ws:
        hello = {"type": "hello", "protocol": 1, "app": f"load-{index}", "clientId": f"load-client-{index}"}
        ws.send(json.dumps({**hello, "pid": os.getpid(), "sdk": {"name": "bench", "version": "0"}}))
        ws.recv(timeout=10)  # welcome
        seq = 1
        ws.send(
            json.dumps(
                {
                    "type": "run.started",
                    "seq": seq,
                    "ts": time.time() * 1000,
                    "runId": run_id,
                    "name": "load",
                    "nodeId": "agent:load",
                    "instanceId": run_id,
                    "kind": "agent",
                }
            )
        )
        start = time.monotonic()
        sent = 1
        while True:
            now = time.monotonic()
            elapsed = now - start
            if elapsed >= seconds:
                break
            due = int(elapsed * rate) - sent
            if due > 0:
                ts = time.time() * 1000
                texts = []
                for _ in range(due):
                    seq += 1
                    kind = "node.started" if seq % 2 == 0 else "node.finished"
                    texts.append(
                        f'{{"type":"{kind}","seq":{seq},"ts":{ts:.1f},{head},"instanceId":"i{seq // 2}",'
                        f'"input":{payload},"output":null,"durationMs":0.1}}'
                    )
                for i in range(0, len(texts), FRAME_EVENTS):  # behind (a starved process): several frames
                    group = texts[i : i + FRAME_EVENTS]
                    ws.send(proto.batch(group) if len(group) > 1 else group[0])
                sent += due
            time.sleep(max(0.0, WINDOW_S - (time.monotonic() - now)))
    print(json.dumps({"app": index, "sent": sent}), flush=True)


# -- the probe app (a child process with a real client) ---------------------------------------------


def probe_app(url: str, seconds: float, every: float) -> None:
    """Holds a gate every `every` seconds (a real client, `breakpoint="before"`); prints the count."""
    import graphmind

    _time_gate_frames()
    client = graphmind.Client(app="probe", url=url)
    if not client.ready(10):
        raise SystemExit("the probe did not attach")

    def probe(i: int) -> int:
        return i

    gated = client.wrap(probe, name="probe", breakpoint="before")
    start = time.monotonic()
    calls = 0
    held: list[list[float]] = []  # [the call's start (CLOCK_MONOTONIC, shared by every process), its time]
    walls: list[list[float]] = []  # [the call's start, its resume] (time.time(), for the split)
    with client.run("probe"):
        while time.monotonic() - start < seconds:
            wall = time.time()
            began = time.monotonic()
            gated(calls)
            held.append([began, time.monotonic() - began])
            walls.append([wall, time.time()])
            calls += 1
            next_at = start + calls * every
            time.sleep(max(0.0, next_at - time.monotonic()))
    client.dispose()
    print(json.dumps({"probe": calls, "held": held, "walls": walls, "sent": sent_at}), flush=True)


sent_at: dict[str, list[float]] = {}  # the probe's gate id -> [the exec.paused's ts, its frame sent] (s)


def _time_gate_frames() -> None:
    """The probe's side of the split: when each frame carrying an exec.paused left (its ws.send returned)."""
    from websockets.sync.connection import Connection

    send = Connection.send

    def timed(self: Any, message: Any, *args: Any, **kwargs: Any) -> None:
        send(self, message, *args, **kwargs)
        if isinstance(message, str) and '"exec.paused"' in message:
            now = time.time()
            frame = json.loads(message)
            for event in frame.get("events", [frame]):
                if event.get("type") == "exec.paused":
                    sent_at[event["gateId"]] = [event["ts"] / 1000.0, now]

    Connection.send = timed  # type: ignore[method-assign]


# -- the hub's side of the split (installed in the hub process by a sitecustomize, see main) ---------

HUB_TIMING = r"""
import os, re, time
_out = open(os.environ["GRAPHMIND_BENCH_TIMING"], "a", buffering=1)
_gate = re.compile(rb'"gateId":"([^"]+)"')
from uvicorn.protocols.websockets import websockets_sansio_impl as _impl
_deliver = _impl.WebSocketsSansIOProtocol.send_receive_event_to_app
def _read(self):
    # The frame's last bytes read from the socket (the event loop ran this connection's data_received).
    data = self.frames[0] if len(self.frames) == 1 else b"".join(self.frames)
    if b'"exec.paused"' in data:
        now = time.time()
        for m in _gate.finditer(data):
            _out.write("read %s %.6f\n" % (m.group(1).decode(), now))
    _deliver(self)
_impl.WebSocketsSansIOProtocol.send_receive_event_to_app = _read
from graphmind_server.hub import state as _state
_paused = _state.Hub.on_paused
def _held(self, conn, event):
    # The ingest task took the frame from its queue and the gate is in /api/gates from now on.
    _paused(self, conn, event)
    _out.write("held %s %.6f\n" % (event.get("gateId"), time.time()))
_state.Hub.on_paused = _held
import asyncio
_attach = _state.Hub.attach
def _attached(self, *args, **kwargs):
    # The first attach starts a 5 ms timer on the hub's loop: how late it fires is how long the loop
    # was away from its sockets (busy with ready work, or its thread waiting for the GIL or a CPU).
    if not getattr(_state, "_lag_started", False):
        _state._lag_started = True
        loop = asyncio.get_running_loop()
        control = self.control
        def tick(due):
            now = loop.time()
            # "held": bulk ingest was held back at this tick (a gate coming in or an answer on its way).
            _out.write("lag %s %.6f\n" % ("held" if control.answering else "-", now - due))
            loop.call_at(now + 0.005, tick, now + 0.005)
        loop.call_soon(tick, loop.time())
    return _attach(self, *args, **kwargs)
_state.Hub.attach = _attached
"""


# -- the poller and the report (this process) --------------------------------------------------------


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))] * 1000


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _child(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HERE), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def poll_and_answer(
    port: int,
    stop: threading.Event,
    poll: float,
    trips: list[float],
    seen: list[float],
    seen_at: dict[str, list[float]],
) -> None:
    """`seen_at`: the hub's gate id -> [the GET that saw it began, it was seen, its answer's 200] (time.time())."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = json.dumps({"action": "continue"})
    answered: set[str] = set()
    while not stop.is_set():
        asked = time.time()
        conn.request("GET", "/api/gates")
        response = conn.getresponse()
        gates = json.loads(response.read())["gates"]
        for gate in gates:
            gate_id = gate["gateId"]
            if gate_id in answered:
                continue
            answered.add(gate_id)
            seen.append(time.monotonic())
            seen_at[gate_id] = [asked, time.time()]
            started = time.perf_counter()
            conn.request("POST", f"/api/gates/{gate_id}", body, {"Content-Type": "application/json"})
            response = conn.getresponse()
            response.read()
            if response.status == 200:
                trips.append(time.perf_counter() - started)
                seen_at[gate_id].append(time.time())
            else:
                print(f"gate {gate_id}: HTTP {response.status}", file=sys.stderr)
        stop.wait(poll)
    conn.close()


def _hub_marks(path: Path) -> dict[str, dict[str, float]]:
    """The hub's marks per app gate id: when its exec.paused was read from the socket, and held."""
    marks: dict[str, dict[str, float]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            what, gate_id, at = line.split()
            if what != "lag":
                marks.setdefault(gate_id, {}).setdefault(what, float(at))  # the first read of a gate
    return marks


def _lags(path: Path) -> tuple[list[float], int]:
    """The loop timer's lateness at each tick, and how many ticks found bulk ingest held back."""
    if not path.exists():
        return [], 0
    ticks = [line.split() for line in path.read_text().splitlines() if line.startswith("lag ")]
    return [float(t[2]) for t in ticks], sum(t[1] == "held" for t in ticks)


def _schedstat(pid: int) -> tuple[int, int]:
    """The thread's time on a CPU and its time runnable but waiting for one (ns, /proc schedstat)."""
    try:
        run, wait, _ = Path(f"/proc/{pid}/task/{pid}/schedstat").read_text().split()
    except (OSError, ValueError):
        return 0, 0
    return int(run), int(wait)


SEGMENTS = (
    ("call start -> exec.paused made (the SDK's node engine)", 0, 1),
    ("exec.paused made -> its frame sent (the probe's transport)", 1, 2),
    ("frame sent -> read by the hub (waits in the socket: the hub's event loop busy)", 2, 3),
    ("read -> gate held, in /api/gates (the ingest task's queue)", 3, 4),
    ("held -> the poller's GET saw it (poll interval + the GET)", 4, 6),
    ("seen -> the app resumed (POST, gate.resolve to the app)", 6, 7),
    ("  (the GET that saw it, from its request to its answer read)", 5, 6),
)


def _print_split(
    walls: list[list[float]],
    sent: dict[str, list[float]],
    hub: dict[str, dict[str, float]],
    seen_at: dict[str, list[float]],
) -> None:
    """The whole loop per held call cut at the marks every process took (time.time(): one machine)."""
    starts = [w[0] for w in walls]
    rows: list[list[float]] = []
    for app_id, (made, left) in sent.items():
        marks = hub.get(app_id, {})
        seen = next((v for k, v in seen_at.items() if k.endswith("-" + app_id)), None)
        if "read" not in marks or "held" not in marks or seen is None:
            continue
        # The call this gate held: the last one that started before its exec.paused was made.
        index = max((i for i, b in enumerate(starts) if b <= made + 0.001), default=None)
        if index is None:
            continue
        began, resumed = walls[index]
        rows.append([began, made, left, marks["read"], marks["held"], seen[0], seen[1], resumed])
    if not rows:
        print("  (no split: the marks did not match)")
        return
    print(f"  the split ({len(rows)} calls matched), p50 / p99 / max:")
    for name, a, b in SEGMENTS:
        part = [max(0.0, r[b] - r[a]) for r in rows]
        print(f"    {name}: {_pct(part, 50):.1f} / {_pct(part, 99):.1f} / {max(part) * 1000:.1f} ms")


def _stored_events(port: int, apps: int) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/api/runs?limit=1000")
    runs = json.loads(conn.getresponse().read())["runs"]
    conn.close()
    ids = {f"load-{i}" for i in range(apps)}
    return sum(r["eventCount"] for r in runs if r["id"] in ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=8)
    parser.add_argument("--rate", type=float, default=2000.0, help="events per second per app")
    parser.add_argument("--seconds", type=float, default=180.0)
    parser.add_argument("--short", action="store_true", help="a quick figure: 30 s")
    parser.add_argument("--full", action="store_true", help="the whole-loop acceptance run: 600 s")
    parser.add_argument("--every", type=float, default=0.5, help="seconds between two held gates")
    parser.add_argument("--poll", type=float, default=0.01, help="the poller's GET /api/gates interval")
    parser.add_argument(
        "--hub-python",
        default=sys.executable,
        help="the Python whose graphmind_server runs the hub (A/B: another worktree's .venv/bin/python)",
    )
    parser.add_argument("--_load", nargs=4, help=argparse.SUPPRESS)
    parser.add_argument("--_probe", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.short or args.full:
        args.seconds = 30.0 if args.short else 600.0
    if args._load:
        index, url, rate, seconds = args._load
        load_app(int(index), url, float(rate), float(seconds))
        return
    if args._probe:
        url, seconds, every = args._probe
        probe_app(url, float(seconds), float(every))
        return

    from graphmind_server.testing import HubProcess

    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GRAPHMIND_HOME": str(Path(tmp) / "home")}
        env.pop("GRAPHMIND_TOKEN", None)
        site = Path(tmp) / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(HUB_TIMING)
        timing = Path(tmp) / "timing.txt"
        hub_env = {
            "GRAPHMIND_HOME": env["GRAPHMIND_HOME"],
            "PYTHONPATH": str(site),
            "GRAPHMIND_BENCH_TIMING": str(timing),
        }
        with HubProcess(Path(tmp) / "hub.db", env=hub_env, python=args.hub_python) as hub:
            assert hub.proc is not None
            hub_pid = hub.proc.pid
            rss = [_rss_mb(hub_pid)]
            sched = [_schedstat(hub_pid), (time.monotonic_ns(), 0)]
            loads = [
                _child(["--_load", str(i), hub.ingest_url, str(args.rate), str(args.seconds)], env)
                for i in range(args.apps)
            ]
            probe = _child(["--_probe", hub.ingest_url, str(args.seconds), str(args.every)], env)
            trips: list[float] = []
            seen: list[float] = []
            seen_at: dict[str, list[float]] = {}
            stop = threading.Event()
            poller = threading.Thread(
                target=poll_and_answer, args=(hub.port, stop, args.poll, trips, seen, seen_at)
            )
            poller.start()
            started = time.monotonic()
            while probe.poll() is None and time.monotonic() - started < args.seconds + 60:
                rss.append(_rss_mb(hub_pid))
                time.sleep(1.0)
            probe_out, probe_err = probe.communicate(timeout=30)
            stop.set()
            poller.join()
            sent = 0
            failed: list[str] = []  # a load app the hub cut off (its keepalive timed out: 1011)
            for load in loads:
                out, err = load.communicate(timeout=60)
                if load.returncode != 0:
                    failed.append((err.strip().splitlines() or ["no output"])[-1])
                    continue
                sent += json.loads(out.strip().splitlines()[-1])["sent"]
            if probe.returncode != 0:
                raise SystemExit(f"the probe failed:\n{probe_err}")
            probed = json.loads(probe_out.strip().splitlines()[-1])
            held = probed["held"]
            hub_marks = _hub_marks(timing)
            deadline = time.monotonic() + 60
            stored = _stored_events(hub.port, args.apps)
            while stored < sent and time.monotonic() < deadline:  # the writer's backlog drains
                time.sleep(0.5)
                stored = _stored_events(hub.port, args.apps)
            rss.append(_rss_mb(hub_pid))
            sched += [_schedstat(hub_pid), (time.monotonic_ns(), 0)]
            lags, held_back = _lags(timing)
    load_avg = os.getloadavg()[0]
    print(
        f"{args.apps} apps x {args.rate:,.0f} events/s for {args.seconds:.0f} s, a gate every {args.every} s "
        f"(poll {args.poll * 1000:.0f} ms); hub {args.hub_python}; load average {load_avg:.1f}"
    )
    whole = [t for _, t in held]
    if whole:
        # The i-th gate the poller saw is the probe's i-th call (one held at a time).
        to_seen = [max(0.0, s - b) for (b, _), s in zip(held, seen, strict=False)]
        print(
            f"whole loop, app side, held call start -> resume ({len(whole)} calls): p50 {_pct(whole, 50):.1f} ms, "
            f"p90 {_pct(whole, 90):.1f} ms, p99 {_pct(whole, 99):.1f} ms, max {max(whole) * 1000:.1f} ms "
            "(target p99 < 50 ms, max < 200 ms)"
        )
        print(
            f"  of which call start -> gate seen in /api/gates: p50 {_pct(to_seen, 50):.1f} ms, "
            f"p99 {_pct(to_seen, 99):.1f} ms, max {max(to_seen) * 1000:.1f} ms (poll every {args.poll * 1000:.0f} ms)"
        )
    if whole:
        _print_split(probed["walls"], probed["sent"], hub_marks, seen_at)
    if lags:
        print(
            f"  the hub's loop, a 5 ms timer late by: p50 {_pct(lags, 50):.1f} ms, p99 {_pct(lags, 99):.1f} ms, "
            f"max {max(lags) * 1000:.1f} ms ({len(lags):,} ticks; bulk ingest held back at {held_back:,})"
        )
    (run0, wait0), (t0, _), (run1, wait1), (t1, _) = sched
    if t1 > t0 and run1:
        print(
            f"  the hub's loop thread: on a CPU {100 * (run1 - run0) / (t1 - t0):.0f} % of the time, runnable but "
            f"waiting for a CPU {100 * (wait1 - wait0) / (t1 - t0):.0f} % (/proc schedstat)"
        )
    if trips:
        print(
            f"answer round trip ({len(trips)} gates): p50 {_pct(trips, 50):.1f} ms, p90 {_pct(trips, 90):.1f} ms, "
            f"p99 {_pct(trips, 99):.1f} ms, max {max(trips) * 1000:.1f} ms (target p99 < 50 ms)"
        )
    if failed:
        print(f"events: {len(failed)} load app(s) failed, so lost is not known: {failed[0]}")
    else:
        print(f"events: {sent:,} sent, {stored:,} stored, {sent - stored:,} lost (target 0)")
    half = rss[len(rss) // 2]
    print(
        f"hub RSS: {rss[0]:.0f} MB at start, {half:.0f} MB half way, max {max(rss):.0f} MB, {rss[-1]:.0f} MB at the end "
        "(flat: the second half grows by under 10 %)"
    )


if __name__ == "__main__":
    main()
