"""Clocks. Durations use a monotonic clock in milliseconds; tests may replace it per client."""

from __future__ import annotations

import time
from collections.abc import Callable

Clock = Callable[[], float]


def monotonic_ms() -> float:
    return time.perf_counter_ns() / 1_000_000


def wall_ms() -> float:
    return time.time_ns() / 1_000_000


def round_ms(value: float) -> float:
    """Durations go on the wire to 0.01 ms."""
    return round(value, 2)
