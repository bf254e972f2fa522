"""The framework-suite harness (scripts/suites/): how run_suite.py judges a difference, and
tests_dir.py's copy of a repository's tests. Fast but one: no framework's suite runs, one tiny git
repository; the planted-crash test runs the harness whole on an eight-test suite (with a real hub)."""

from __future__ import annotations

import importlib.util
import re
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
judge = _load("judge")


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

    bare = _result("bare", {"t::order": "passed", "t::ours": "passed"})
    failed = run_suite.report("llamaindex", attached, passed_bare, rerun, bare, bare_alone)

    out = capsys.readouterr().out
    assert failed == ["1 regressed (first: t::ours)"]
    assert "t::ours: failed; REGRESSED" in out
    assert "t::order: failed; fails alone bare too" in out


def test_a_test_much_slower_than_bare_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    bare = _result("bare", {"t::held": "passed", "t::quick": "passed"}, {"t::held": 0.2, "t::quick": 0.2})
    attached = _result(
        "attached", {"t::held": "passed", "t::quick": "passed"}, {"t::held": 9.0, "t::quick": 0.3}
    )

    assert run_suite.report("llamaindex", attached, {"t::held", "t::quick"}, None, bare) == []

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


def test_a_test_that_never_ran_fails_the_run_even_if_it_passes_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bare = _result("bare", {"t::ran": "passed", "t::lost": "passed"})
    attached = _result("attached", {"t::ran": "passed"})  # a crashed worker took `lost` with it
    rerun = _result("attached-rerun", {"t::lost": "passed"})

    failed = run_suite.report("mcp", attached, {"t::ran", "t::lost"}, rerun, bare, {})

    assert failed == ["1 tests passing bare never ran (first: t::lost)"]
    assert "t::lost: missing; MISSING: it never ran in this run" in capsys.readouterr().out


# What pytest-xdist printed when a worker's pytest failed inside its own reporting (the SystemError
# from ast.parse in litellm's attached run), trimmed; and a worker killed outright.
WORKER_INTERNALERROR = """\
..INTERNALERROR> def worker_internal_error(
INTERNALERROR> >           assert False, formatted_error
INTERNALERROR> E           AssertionError: Traceback (most recent call last):
INTERNALERROR> E               File "/x/_pytest/main.py", line 333, in wrap_session
INTERNALERROR> E             SystemError: AST constructor recursion depth mismatch (before=102, after=37)
INTERNALERROR> E           assert False
INTERNALERROR>
INTERNALERROR> /x/xdist/dsession.py:232: AssertionError
2 passed in 25.49s
[gw1] node down: Not properly terminated
replacing crashed worker gw1
"""


def test_crashes_names_each_internal_error_and_each_worker_that_went_down() -> None:
    assert judge.crashes(WORKER_INTERNALERROR.splitlines(keepends=True)) == [
        "INTERNALERROR SystemError: AST constructor recursion depth mismatch (before=102, after=37)",
        "[gw1] node down: Not properly terminated",
        "replacing crashed worker gw1",
    ]
    assert judge.crashes(["....... [100%]\n", "7 passed in 1.0s\n"]) == []


def test_any_hold_in_the_attached_run_fails_it() -> None:
    rows = [
        (
            "exec.paused",
            '{"instanceId": "i1", "gateId": "g1", "nodeId": "tool:t", "gate": "before", "reason": "loop"}',
        ),
        ("exec.resumed", '{"instanceId": "i1", "gateId": "g1", "by": "dispose"}'),
    ]
    attached = {**_result("attached", {"t::a": "passed"}), "holds": judge.holds(rows)}

    assert judge.failures("attached", attached, {"t::a"}, []) == [
        "a hold nobody answers: tool:t before gate, reason loop (ended by dispose)"
    ]
    line = judge.verdict(
        "mcp", {"bare": [], "detached": [], "attached": judge.failures("attached", attached, {"t::a"}, [])}
    )
    assert line.startswith("[suite mcp] FAIL: attached: a hold nobody answers: tool:t")
    assert judge.verdict("mcp", {"bare": [], "detached": [], "attached": []}).startswith("[suite mcp] PASS")


def test_a_run_that_stopped_fails_by_its_exit_code() -> None:
    assert judge.failures("bare", {**_result("bare", {}), "exit": 3}, set(), []) == [
        "pytest exit code 3 (internal error)"
    ]
    assert judge.failures("bare", {**_result("bare", {"t::a": "failed"}), "exit": 1}, set(), []) == []


PLANTED_CONFTEST = """\
import os


def pytest_runtest_logreport(report):
    # Planted: instrumented, one xdist worker's own reporting fails (as pytest's did while it
    # formatted a failure in litellm's attached run): that worker stops, its tests never run.
    if (
        os.environ.get("GRAPHMIND_SUITE_REPORT")
        and os.environ.get("PYTEST_XDIST_WORKER")
        and report.when == "call"
        and report.nodeid.endswith("test_n[2]")
    ):
        raise SystemError("AST constructor recursion depth mismatch (planted)")
"""

PLANTED_PLUGIN = """\
import gm_suite_report as report


def pytest_unconfigure(config):
    report.write(config)
"""


@pytest.mark.timeout(300)  # three pytest sessions with two xdist workers each, and a hub
def test_a_planted_worker_crash_fails_the_run_naming_the_crash_and_the_missing_tests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "suite"
    (src / "tests").mkdir(parents=True)
    (src / "tests" / "test_a.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('n', range(8))\ndef test_n(n):\n    assert n >= 0\n"
    )
    (src / "conftest.py").write_text(PLANTED_CONFTEST)
    (src / "gm_suite_planted.py").write_text(PLANTED_PLUGIN)
    (src / "pytest.ini").write_text("[pytest]\n")
    suite = {
        "plugin": "gm_suite_planted",
        # Only the plugins it needs (this workspace's others cost seconds per process under load).
        "env": {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        "args": [
            "tests",
            "-p",
            "xdist.plugin",
            "-p",
            "pytest_timeout",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "--timeout=60",
        ],
    }
    monkeypatch.setitem(run_suite.SUITES, "planted", suite)
    monkeypatch.setitem(run_suite.EXPECTED_DIFFERENT, "planted", set())
    monkeypatch.setenv("PYTHONPATH", str(src))  # the planted plugin, beside the suite's tests

    code = run_suite.main(["planted", str(src)])

    out = capfd.readouterr().out
    verdict = [line for line in out.splitlines() if line.startswith("[suite planted] ")][-1]
    assert code == 1
    assert verdict.startswith(
        "[suite planted] FAIL: detached: pytest exit code 3 (internal error); crashed: "
    )
    assert "SystemError: AST constructor recursion depth mismatch (planted)" in verdict
    assert "tests passing bare never ran (first: tests.test_a::test_n[" in verdict
    assert "| attached: pytest exit code 3" in verdict
    assert "bare:" not in verdict  # the bare run went through: all eight passed
    # Which tests the crashed worker took with it is xdist's split: each is named.
    never_ran = re.findall(
        r"^    (tests\.test_a::test_n\[\d\]): missing; MISSING: it never ran in this run$", out, re.M
    )
    assert never_ran and f"{len(set(never_ran))} tests passing bare never ran" in verdict


LOOPING_TESTS = """\
import graphmind


def lookup(city):
    return "sunny"


def test_retries_the_same_call():
    client = graphmind.get_client()
    gated = client.wrap(lookup, name="lookup")
    with client.run("retries"):
        assert [gated(city="Lisbon") for _ in range(4)] == ["sunny"] * 4


def test_other():
    assert True
"""


@pytest.mark.timeout(300)  # three pytest sessions, and a hub
def test_an_attached_suite_repeating_a_call_passes_and_lists_what_would_have_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "suite"
    (src / "tests").mkdir(parents=True)
    (src / "tests" / "test_loop.py").write_text(LOOPING_TESTS)
    (src / "gm_suite_planted.py").write_text(PLANTED_PLUGIN)
    (src / "pytest.ini").write_text("[pytest]\n")
    suite = {
        "plugin": "gm_suite_planted",
        "env": {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        "args": ["tests", "-p", "pytest_timeout", "-p", "no:cacheprovider", "-q", "--timeout=60"],
    }
    monkeypatch.setitem(run_suite.SUITES, "looping", suite)
    monkeypatch.setitem(run_suite.EXPECTED_DIFFERENT, "looping", set())
    monkeypatch.setenv("PYTHONPATH", str(src))

    code = run_suite.main(["looping", str(src)])

    out = capfd.readouterr().out
    assert out.splitlines()[-1].startswith("[suite looping] PASS: ")
    assert code == 0
    assert "HELD" not in out  # GRAPHMIND_ON_LOOP=warn: the fourth call ran at once, nobody answered
    listed = "      tests/test_loop.py::test_retries_the_same_call: tool:lookup"
    assert out.count(listed) == 2  # detached and attached each list it
    assert "loop streaks warned, not held (GRAPHMIND_ON_LOOP=warn): 1 in 1 tests" in out


LEAKING_TESTS = """\
import os
import tempfile


def test_indexes_beside_its_storage():
    # As strands' Bm25SearchStrategy does with a storage in a TemporaryDirectory(): its index goes
    # beside the directory (strands/storage/search/bm25.py), outside what the `with` removes.
    with tempfile.TemporaryDirectory() as storage:
        beside = os.path.join(os.path.dirname(storage), f".__strands_{os.path.basename(storage)}-fts5.sqlite")
        open(beside, "wb").close()


def test_writes_to_the_folder_it_is_told():
    folder = os.environ.get("LEAK_INTO")
    if folder:
        open(os.path.join(folder, ".__strands_told-fts5.sqlite"), "wb").close()
"""


def test_a_suite_that_leaves_index_files_in_the_temp_dir_runs_in_its_own_and_a_leak_fails_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Strands' suite left a `.__strands_tmp*-fts5.sqlite` in /tmp per BM25 test and run: with its
    `leaks` row the run's temp files go to a folder of its own (removed with the run's), and a file
    of those names appearing in the system's temp dir fails the run, named."""
    import tempfile

    system_tmp = tmp_path / "system-tmp"
    system_tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_tmp))
    monkeypatch.setenv("TMPDIR", str(system_tmp))
    src = tmp_path / "suite"
    (src / "tests").mkdir(parents=True)
    (src / "tests" / "test_leak.py").write_text(LEAKING_TESTS)
    (src / "pytest.ini").write_text("[pytest]\n")
    suite = {
        "plugin": "unused",
        "env": {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        "args": ["tests", "-p", "no:cacheprovider", "-q"],
        "leaks": [".__strands_*-fts5.sqlite"],
    }
    monkeypatch.setitem(run_suite.SUITES, "leaky", suite)
    work = tmp_path / "work"
    work.mkdir()

    clean = run_suite.run("leaky", src, "bare", [], work, None)
    assert clean["outcomes"] and set(clean["outcomes"].values()) == {"passed"}
    assert clean["leaked"] == [] and list(system_tmp.iterdir()) == []
    assert list((work / "tmp-bare").glob(".__strands_*-fts5.sqlite"))  # where it went instead

    monkeypatch.setitem(suite, "env", {**suite["env"], "LEAK_INTO": str(system_tmp)})
    leaky = run_suite.run("leaky", src, "bare", [], work, None)
    left = str(system_tmp / ".__strands_told-fts5.sqlite")
    assert leaky["leaked"] == [left]
    assert run_suite.judge.failures("bare", leaky, set(), []) == [
        f"left 1 file(s) in the system's temp dir (first: {left})"
    ]
    capsys.readouterr()
    run_suite.report("leaky", leaky, set(), None)
    assert f"    LEFT BEHIND: {left}" in capsys.readouterr().out
