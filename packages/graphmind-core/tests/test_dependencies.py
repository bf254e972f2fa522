"""The Ruby page's "no runtime dependencies" in Python form: core depends on `websockets` alone, so
adding a debugger to someone else's app cannot force a resolution on anything else."""

from __future__ import annotations

import re
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_core_depends_on_websockets_only() -> None:
    found = re.search(r"^dependencies = \[(.*?)\]", PYPROJECT.read_text(encoding="utf-8"), re.M | re.S)
    assert found is not None, "core's pyproject.toml no longer lists its dependencies on one line"
    names = [re.split(r"[<>=!~\[; ]", item.strip().strip('"'))[0] for item in found.group(1).split(",")]
    assert [name for name in names if name] == ["websockets"]
