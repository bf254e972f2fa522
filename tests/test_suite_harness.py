"""The framework-suite harness (scripts/suites/): how run_suite.py judges a difference, and
tests_dir.py's copy of a repository's tests. Fast: no suite runs, one tiny git repository."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SUITES = Path(__file__).resolve().parents[1] / "scripts" / "suites"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"gm_harness_{name}", SUITES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


run_suite = _load("run_suite")
tests_dir = _load("tests_dir")


def _result(mode: str, outcomes: dict[str, str], durations: dict[str, float] | None = None) -> dict[str, Any]:
    return {
        "mode": mode,
        "exit": 0,
        "seconds": 1.0,
        "outcomes": outcomes,
        "durations": durations or dict.fromkeys(outcomes, 0.1),
        "counts": {},
    }


def test_a_test_failing_alone_bare_too_is_order_dependent_not_a_regression(
    capsys: pytest.CaptureFixture[str],
) -> None:
    passed_bare = {"t::order", "t::ours"}
    attached = _result("attached", {"t::order": "failed", "t::ours": "failed"})
    rerun = _result("attached-rerun", {"t::order": "failed", "t::ours": "failed"})
    bare_alone = {"t::order": "failed", "t::ours": "passed"}  # only `ours` passes alone without GraphMind

    regressions = run_suite.report("llamaindex", attached, passed_bare, rerun, None, bare_alone)

    out = capsys.readouterr().out
    assert regressions == 1
    assert "t::ours: failed; REGRESSED" in out
    assert "t::order: failed; fails alone bare too" in out


def test_a_test_much_slower_than_bare_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    bare = _result("bare", {"t::held": "passed", "t::quick": "passed"}, {"t::held": 0.2, "t::quick": 0.2})
    attached = _result(
        "attached", {"t::held": "passed", "t::quick": "passed"}, {"t::held": 9.0, "t::quick": 0.3}
    )

    assert run_suite.report("llamaindex", attached, {"t::held", "t::quick"}, None, bare) == 0

    out = capsys.readouterr().out
    assert "slower: t::held: 9.0 s, bare 0.2 s" in out
    assert "t::quick" not in out.split("\n", 1)[1]


def test_tests_dir_takes_the_recipes_paths_from_a_local_git_copy(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "llama-index-core" / "tests" / "agent").mkdir(parents=True)
    (repo / "llama-index-core" / "tests" / "conftest.py").write_text("# conftest\n")
    (repo / "llama-index-core" / "tests" / "agent" / "test_a.py").write_text("def test_a(): pass\n")
    (repo / "llama-index-core" / "pyproject.toml").write_text("[project]\n")  # not taken: no pytest section
    (repo / "README.md").write_text("not taken\n")

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True)

    git("init", "-q")
    git("add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "tests")
    out = tmp_path / "out"

    taken = tests_dir.build("llamaindex", repo / ".git", out)

    assert sorted(taken) == ["tests/agent/test_a.py", "tests/conftest.py"]
    assert (out / "tests" / "agent" / "test_a.py").read_text() == "def test_a(): pass\n"
    assert not (out / "pyproject.toml").exists()
