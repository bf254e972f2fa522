"""Run and invocation ids: uuid4-shaped, unique, and never repeated by a forked child."""

from __future__ import annotations

import os
import sys

import pytest

from graphmind._base.ids import random_hex


def test_ids_have_the_shape_of_uuid4_hex_and_do_not_repeat() -> None:
    ids = {random_hex() for _ in range(10_000)}
    assert len(ids) == 10_000
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    assert len(random_hex(48)) == 12


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin", reason="needs os.fork")
def test_a_forked_child_does_not_repeat_the_parents_ids() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: send its next id and leave at once
        os.write(write, random_hex().encode())
        os._exit(0)
    os.close(write)
    child = os.read(read, 64).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert child != random_hex()
    assert len(child) == 32
