"""How `uv run pytest` spreads the suite (pyproject.toml's addopts `-n auto`, conftest.py's
pytest_xdist_auto_num_workers): the whole suite on xdist workers, one per core (2 to 4), keeps it
under 15 minutes on a 2-core machine; a run that names its paths, or passes -s, stays in one process."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _workers(args_source: pytest.Config.ArgsSource, capture: str, cpus: int | None, monkeypatch: Any) -> Any:
    spec = importlib.util.spec_from_file_location("graphmind_root_conftest", ROOT / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module.os, "cpu_count", lambda: cpus)

    class Config:
        def __init__(self) -> None:
            self.args_source = args_source

        def getoption(self, name: str) -> str:
            assert name == "capture"
            return capture

    return module.pytest_xdist_auto_num_workers(Config())


def test_the_whole_suite_runs_on_one_worker_per_core_from_2_to_4(monkeypatch: pytest.MonkeyPatch) -> None:
    testpaths = pytest.Config.ArgsSource.TESTPATHS
    assert _workers(testpaths, "fd", 2, monkeypatch) == 2
    assert _workers(testpaths, "fd", 1, monkeypatch) == 2  # much of the suite waits on subprocesses
    assert _workers(testpaths, "fd", None, monkeypatch) == 2
    assert _workers(testpaths, "fd", 16, monkeypatch) == 4


def test_named_paths_or_s_run_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    assert _workers(pytest.Config.ArgsSource.ARGS, "fd", 2, monkeypatch) == 0
    assert _workers(pytest.Config.ArgsSource.TESTPATHS, "no", 2, monkeypatch) == 0  # -s: figures shown


def test_addopts_ask_for_auto_workers_and_xdist_is_a_dev_dependency() -> None:
    import tomllib  # Python 3.11+, as the workspace's venv

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    addopts = pyproject["tool"]["pytest"]["ini_options"]["addopts"].split()
    assert addopts[addopts.index("-n") + 1] == "auto"
    assert any(dep.startswith("pytest-xdist") for dep in pyproject["dependency-groups"]["dev"])
