"""Random ids for runs and model invocations, without a system call per id.

`uuid.uuid4()` reads `os.urandom` every time; under a real SDK's call path that syscall measured
about 30 µs per model step here (cold, next to the SDK's own work), a quarter of the adapter's
whole overhead. Ids only need to be unique, not secret: a Mersenne Twister seeded from urandom
(reseeded in a forked child, so parent and child never repeat each other) gives 128 bits in well
under a microsecond.
"""

from __future__ import annotations

import os
import random

_rng = random.Random()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_rng.seed)


def random_hex(bits: int = 128) -> str:
    """`bits` random bits as lowercase hex, zero-padded (128 bits: the shape of `uuid4().hex`)."""
    # "%0*x": the width as an argument (a nested f-string format spec is built per call: ~2x slower)
    return "%0*x" % (bits // 4, _rng.getrandbits(bits))  # noqa: UP031
