"""The harness every `bench/*_overhead.py` shares: interleaved rounds, a chosen clock, best/median
per variant, openinference's in-memory toggle, the attached variant's hub and the ratio table.

A variant is `(on, off, shapes)`: `on()` before its turn, `off()` after it (even on error), and
`shapes` maps a call shape's name to a no-argument call. Rounds interleave the variants, so a busy
machine slows all of them alike; round 0 warms up and is not kept.
"""

from __future__ import annotations

import importlib
import random
import statistics
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "AttachedHub",
    "Results",
    "Samples",
    "Toggle",
    "Variant",
    "batch_us",
    "interleaved_rounds",
    "noop",
    "openinference_toggle",
    "print_median_ratios",
    "print_paired_ratios",
    "print_ratio_table",
    "summarise",
]

Toggle = tuple[Callable[[], Any], Callable[[], Any]]
Variant = tuple[Callable[[], Any], Callable[[], Any], Mapping[str, Callable[[], Any]]]
Samples = dict[str, dict[str, list[float]]]
Results = dict[str, dict[str, float]]


def noop() -> None:
    """The on/off of a variant that needs no switching."""


class AttachedHub:
    """The `attached` variant's hub: the real hub in a subprocess (`graphmind_server.testing.HubProcess`,
    its store in a new temp dir) and `client`, a `graphmind.Client` attached to it; SystemExit when
    it does not attach within 5 s. `close()` disposes the client and stops the hub."""

    def __init__(self, prefix: str = "gm-bench-") -> None:
        import graphmind  # here, not at the top: the benches without an attached variant never load it
        from graphmind_server.testing import HubProcess

        self.hub = HubProcess(tempfile.mkdtemp(prefix=prefix) + "/hub.db")
        self.client = graphmind.Client(app="bench", url=self.hub.ingest_url)
        if not self.client.ready(5):
            self.close()
            raise SystemExit("the hub did not attach")

    def close(self) -> None:
        self.client.dispose()
        self.hub.stop()


def batch_us(fn: Callable[[], Any], calls: int, clock: Callable[[], int]) -> float:
    """µs per call of `calls` calls of `fn`, timed with `clock` (a `time.*_ns` function)."""
    start = clock()
    for _ in range(calls):
        fn()
    return (clock() - start) / calls / 1000


def interleaved_rounds(
    variants: Mapping[str, Variant], rounds: int, calls: int, clock: Callable[[], int]
) -> Samples:
    """One batch per variant and shape per round, `rounds` rounds after a warm-up round.

    The variants run in a new order each round (shuffled, seeded): in a fixed order the variant that
    always runs right after another pays for what that one left in the caches (an A/A run of one
    variant under two names measured the second ~6 µs per call slower, median, than the third)."""
    samples: Samples = {name: {shape: [] for shape in shapes} for name, (_, _, shapes) in variants.items()}
    order = list(variants)
    shuffle = random.Random(1729).shuffle
    for round_ in range(rounds + 1):
        shuffle(order)
        for name in order:
            on, off, shapes = variants[name]
            on()  # a variant that patches shared classes is on only for its own turn
            try:
                for shape, fn in shapes.items():
                    value = batch_us(fn, calls, clock)
                    if round_:  # round 0 warms up
                        samples[name][shape].append(value)
            finally:
                off()
    return samples


def summarise(samples: Samples) -> tuple[Results, Results]:
    """(best batch, median batch) per variant and shape. On a shared machine the slow batches
    measure the neighbours, so the best batch is the headline and the median its check."""
    best = {name: {shape: min(v) for shape, v in per.items()} for name, per in samples.items()}
    medians = {
        name: {shape: statistics.median(v) for shape, v in per.items()} for name, per in samples.items()
    }
    return best, medians


def openinference_toggle(
    package: str, module: str, instrumentor: str, probe: Callable[[], Any], min_spans: int, what: str
) -> Toggle | None:
    """(instrument, uninstrument) for an openinference instrumentor exporting to memory
    (SimpleSpanProcessor), or None (with a note) when it is not installed or `probe()` records
    fewer than `min_spans` spans (`what` names the framework version in that note)."""
    try:
        cls = getattr(importlib.import_module(module), instrumentor)
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    except ImportError as exc:
        print(f"{package} is not installed ({exc}); its row is skipped")
        return None
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instance = cls()

    def on() -> None:
        instance.instrument(tracer_provider=provider)

    def off() -> None:
        instance.uninstrument()
        exporter.clear()

    on()
    try:
        probe()
        spans = len(exporter.get_finished_spans())
    finally:
        off()
    if spans < min_spans:
        print(f"openinference recorded {spans} spans for {min_spans} calls with {what}; its row is skipped")
        return None
    return on, off


def print_ratio_table(
    title: str,
    results: Results,
    *,
    medians: Results | None = None,
    digits: int = 2,
    peer: str = "openinference",
) -> None:
    """One row per variant: µs per call per shape (with the median in brackets when given), the
    overhead over `bare`, and that overhead as a fraction of the peer's."""
    shapes = list(results["bare"])
    widths = {s: 20 if medians else max(10, len(s) + 5) for s in shapes}
    print(f"\n{title:<15}" + "".join(f"{s + ' µs':>{widths[s]}}{'overhead':>10}{'vs OI':>8}" for s in shapes))
    bare = results["bare"]
    for name, row in results.items():
        cells = [f"{name:<15}"]
        for shape in shapes:
            over = row[shape] - bare[shape]
            if medians:
                cells.append(f"{row[shape]:>{widths[shape] - 11}.1f} ({medians[name][shape]:>7.1f})")
            else:
                cells.append(f"{row[shape]:>{widths[shape]}.1f}")
            cells.append(f"{over:>+10.1f}" if name != "bare" else f"{'':>10}")
            if name not in ("bare", peer) and peer in results:
                peer_over = results[peer][shape] - bare[shape]
                cells.append(f"{over / peer_over:>8.{digits}f}" if peer_over > 0 else f"{'n/a':>8}")
            else:
                cells.append(f"{'':>8}")
        print("".join(cells))


def print_median_ratios(medians: Results, *, peer: str = "openinference") -> None:
    """One line per variant: its median batch's overhead as a fraction of the peer's median overhead
    (the check on the best-batch ratio: on a busy machine the two can disagree by more than the effect)."""
    if peer not in medians:
        return
    bare, other = medians["bare"], medians[peer]
    for name, row in medians.items():
        if name in ("bare", peer):
            continue
        cells = []
        for shape in bare:
            peer_over = other[shape] - bare[shape]
            ratio = (row[shape] - bare[shape]) / peer_over if peer_over > 0 else float("nan")
            cells.append(f"{shape} {ratio:.3f}")
        print(f"median-batch ratio vs {peer}, {name}: " + ", ".join(cells))


def print_paired_ratios(samples: Samples, *, peer: str = "openinference") -> None:
    """Per variant and shape: the median over rounds of its overhead over `bare` in the same round,
    as a fraction of the peer's median paired overhead. Each round's batches run back to back, so a
    neighbour's load that drifts over minutes cancels out of each round's difference (the best and
    median batches above are taken per variant, over all rounds); on a busy machine this is the
    steadiest of the three ratios."""
    if peer not in samples:
        return
    bare = samples["bare"]

    def paired(name: str, shape: str) -> float:
        return statistics.median(v - b for v, b in zip(samples[name][shape], bare[shape], strict=True))

    for name in samples:
        if name in ("bare", peer):
            continue
        cells = []
        for shape in bare:
            own, theirs = paired(name, shape), paired(peer, shape)
            ratio = own / theirs if theirs > 0 else float("nan")
            cells.append(f"{shape} {ratio:.3f} ({own:+.1f} / {theirs:+.1f} µs)")
        print(f"paired ratio vs {peer}, {name}: " + ", ".join(cells))
