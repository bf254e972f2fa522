"""The fault suite: the hub and the SDK faulted the way a crashing hub, a hostile page and a runaway
agent would (issue 19). Every test prints its figure (`-s` shows them; docs/reliability.md keeps
the last full-scale ones).

The default `uv run pytest` runs only a small slice of this folder (SLICE below: the attacks, an
injected disk-full and a full disk holding the hub's log, a frozen hub, the out-of-range numbers,
forks under calling threads, multiprocessing and os._exit children, a second hub through another
name of the database, the hub's clientId namespace, the prune by the hub's clock; ~90 s idle), so the default suite stays
under 15 minutes as adapters are added (issue 37). `uv run nox -s faults` runs the whole folder at
full size; `GRAPHMIND_FAULTS=all uv run pytest` runs the whole folder at CI sizes (~2 minutes idle on
2 cores, 15 loaded), and naming a file or test of this folder on the command line runs it whatever
the slice.

Sizes scale with GRAPHMIND_FAULT_SCALE: `1` (the default) is the CI size; `nox -s faults` sets
`full`: 10,000 examples per fuzzed route, 8,000 events of 500 KB, a 10 s tight loop, 100,000
events before dispose().
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmind_server.testing import HubProcess

FULL = os.environ.get("GRAPHMIND_FAULT_SCALE", "").strip().lower() == "full"
ALL = FULL or os.environ.get("GRAPHMIND_FAULTS", "").strip().lower() == "all"
HERE = Path(__file__).resolve().parent
# The default run's slice (file, or file::test without its parameters): one quick test per kind of
# fault that must never regress unseen. Everything else runs under `nox -s faults`.
SLICE = {
    "test_attacks.py",
    "test_disk_full.py::test_an_injected_disk_full_loses_nothing_uncounted",
    "test_frozen_hub.py",
    "test_fuzz.py::test_an_out_of_range_number_is_refused_as_bad_frame",
    # Another user gets no token, no working code, no reload; hidden values stay hidden.
    "test_viewer_link_leaks.py::test_a_world_readable_hub_log_gives_another_user_no_code",
    "test_viewer_link_leaks.py::test_the_link_on_a_browsers_command_line_gives_another_user_nothing",
    "test_viewer_link_leaks.py::test_viewer_url_and_graphmind_mcp_send_a_squatter_nothing",
    "test_viewer_link_leaks.py::test_codes_work_once_and_links_expire",
    "test_viewer_link_leaks.py::test_a_proof_pair_is_the_hubs_own_and_expires",
    "test_viewer_link_leaks.py::test_the_viewer_page_is_private_and_its_link_absolute_with_a_relative_home",
    "test_reload_without_token.py::test_a_hub_without_a_token_refuses_reload_and_says_why_on_the_card",
    "test_hidden_values.py",
    "test_replay_source.py::test_a_planted_file_named_like_the_run_id_is_not_read",
    "test_fork.py::test_100_forks_under_4_calling_threads_never_hang_without_a_hub",
    "test_fork_exit.py::test_every_event_of_a_multiprocessing_child_is_stored_and_its_run_finished",
    "test_fork_exit.py::test_an_os_exit_child_without_dispose_leaves_its_run_abandoned_with_the_reason",
    # The weaknesses, each in a few seconds (the memory and size figures: nox -s faults).
    "test_exit_unconfirmed.py",
    "test_otlp_limits.py::test_a_body_with_too_many_spans_or_inflating_too_far_is_a_413_one_liner",
    "test_otlp_limits.py::test_a_retried_request_is_stored_once_across_a_restart",
    "test_refused_upgrades.py",
    "test_exit_silent_listener.py::test_dispose_gives_up_on_a_listener_that_never_answers_the_handshake",
    "test_wal_deleted.py::test_a_deleted_wal_is_said_by_health_recovered_and_loses_nothing",
    "test_cassette_limits.py",
    "test_mcp_proxy_lines.py",
    "test_one_writer.py::test_a_second_hub_through_another_name_of_the_db_is_refused",
    "test_disk_full.py::test_a_full_disk_that_also_holds_the_hubs_log_resumes_within_5_s_and_health_tells_the_truth",
    "test_namespaces.py",
    "test_prune.py",
}


def _in_slice(item: pytest.Item) -> bool:
    name = item.path.name
    return name in SLICE or f"{name}::{item.originalname}" in SLICE  # type: ignore[attr-defined]


def _named(config: pytest.Config) -> bool:
    """Whether the command line names this folder or something in it (then it runs whole); with no
    path on it, pytest runs the testpaths, which name this folder too: that is the default run."""
    root = config.invocation_params.dir
    for arg in config.invocation_params.args:
        if str(arg).startswith("-"):
            continue
        path = (root / str(arg).split("::")[0]).resolve()
        if path == HERE or HERE in path.parents:
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if ALL or _named(config):
        return
    keep, drop = [], []
    for item in items:
        inside = HERE in item.path.resolve().parents
        (drop if inside and not _in_slice(item) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def scaled(ci: int, full: int) -> int:
    return full if FULL else ci


def rss_mb(pid: int | None = None) -> float:
    """Resident memory of a process (this one by default), in MB, from /proc."""
    status = Path(f"/proc/{pid or os.getpid()}/status").read_text()
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc status")


def figure(name: str, value: object) -> None:
    """One line per measured figure, for the log and docs/reliability.md."""
    print(f"\n[fault figure] {name}: {value}", flush=True)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """GRAPHMIND_HOME for this test: token files go to a temporary directory, never ~/.graphmind."""
    path = tmp_path / "home"
    monkeypatch.setenv("GRAPHMIND_HOME", str(path))
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    return path


@pytest.fixture
def hub(tmp_path: Path, home: Path) -> Iterator[HubProcess]:
    with HubProcess(tmp_path / "hub.db") as h:
        yield h
    assert "Traceback" not in h.stderr, h.stderr
