"""Another user of the machine reads nothing (issue 28): under the usual umask 022, a fresh hub's
directory is 0700 and its database, WAL, SHM and token file 0600; another uid (65534, when this
runs as root) can open none of them, even with the directory opened up; loose modes left by an
older hub are tightened; the token is never on a command line, in /proc/<pid>/cmdline or a log."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmind import protocol as proto
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure

AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
PYTHON = next((p for p in ("/usr/bin/python3", sys.executable) if os.access(p, os.X_OK)), sys.executable)
OPEN_AS_OTHER = textwrap.dedent("""
    import json, sys
    out = {}
    for path in sys.argv[1:]:
        try:
            open(path, "rb").close()
            out[path] = "opened"
        except OSError as exc:
            out[path] = type(exc).__name__
    print(json.dumps(out))
""")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@contextlib.contextmanager
def umask(value: int) -> Iterator[None]:
    old = os.umask(value)  # the hub inherits it (and so does anything it creates)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory anyone may walk through (pytest's own tmp is 0700: it would prove nothing)."""
    path = Path(tempfile.mkdtemp(prefix="graphmind-users-"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def open_as_other_uid(paths: list[Path]) -> dict[str, str]:
    proc = subprocess.run(
        [PYTHON, "-S", "-c", OPEN_AS_OTHER, *map(str, paths)],
        user=65534,
        capture_output=True,
        text=True,
        timeout=30,
        cwd="/",
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, str] = json.loads(proc.stdout)
    return result


@pytest.mark.faults
def test_a_fresh_hub_under_umask_022_keeps_everything_private(
    shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = shared / "home"  # everything above the data directory is walkable by anyone
    monkeypatch.setenv("GRAPHMIND_HOME", str(home))
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    with umask(0o022), HubProcess(home / "graphmind.db", args=["--token", "auto"]) as hub:
        status, _ = hub.api(
            "GET",
            "/api/health",
            headers={"Authorization": f"Bearer {proto.token_file(hub.port).read_text()}"},
        )
        assert status == 200
        files = [
            home / "graphmind.db",
            home / "graphmind.db-wal",
            home / "graphmind.db-shm",
            proto.token_file(hub.port),
        ]
        assert mode(home) == 0o700
        for path in files:
            assert path.exists() and mode(path) == 0o600, (path, oct(mode(path)))
        if AS_ROOT:
            assert set(open_as_other_uid(files).values()) == {"PermissionError"}
            home.chmod(0o755)  # even through an opened-up directory, the files' own modes hold
            try:
                assert set(open_as_other_uid(files).values()) == {"PermissionError"}
            finally:
                home.chmod(0o700)
    figure(
        "files under umask 022",
        "directory 0700; database, WAL, SHM, token 0600" + (", uid 65534 opens none" if AS_ROOT else ""),
    )


@pytest.mark.faults
def test_loose_modes_left_by_an_older_hub_are_tightened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("GRAPHMIND_HOME", str(home))
    with umask(0o022):
        with HubProcess(home / "graphmind.db"):
            pass
        home.chmod(0o755)
        for path in home.glob("graphmind.db*"):
            path.chmod(0o644)
        with HubProcess(home / "graphmind.db") as hub:
            assert mode(home) == 0o700
            for path in home.glob("graphmind.db*"):
                assert mode(path) == 0o600, path
        assert "warning" not in hub.stderr  # ours: tightened without a word


@pytest.mark.faults
@pytest.mark.skipif(not AS_ROOT, reason="needs root to own a file as another user")
def test_a_loose_database_of_another_user_gets_one_warning_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHMIND_HOME", str(tmp_path / "home"))
    db = tmp_path / "data" / "hub.db"
    with HubProcess(db):
        pass
    for path in db.parent.glob("hub.db*"):
        path.chmod(0o644)
        os.chown(path, 65534, -1)
    with HubProcess(db) as hub:
        assert hub.api("GET", "/api/health")[0] == 200
    lines = [line for line in hub.stderr.splitlines() if "readable by other users" in line]
    assert lines and all(f"chmod 600 {db}" in line for line in lines), hub.stderr
    assert len([line for line in lines if line.endswith("(docs/security.md)")]) == len(lines)


@pytest.mark.faults
def test_exports_and_the_telemetry_id_are_private_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from graphmind_server.telemetry import reporter as telemetry

    home = tmp_path / "home"
    monkeypatch.setenv("GRAPHMIND_HOME", str(home))
    with umask(0o022):
        with HubProcess(home / "graphmind.db"):
            pass
        out = tmp_path / "export.jsonl"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "graphmind_server",
                "record",
                "--db",
                str(home / "graphmind.db"),
                "--out",
                str(out),
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr
        assert mode(out) == 0o600
        telemetry.install_id({"GRAPHMIND_HOME": str(tmp_path / "fresh")})
        assert mode(tmp_path / "fresh") == 0o700 and mode(tmp_path / "fresh" / "telemetry-id") == 0o600


@pytest.mark.faults
def test_a_token_on_the_command_line_is_refused_with_one_line(tmp_path: Path) -> None:
    literal = "a-perfectly-good-token-on-argv"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "graphmind_server",
            "serve",
            "--port",
            "0",
            "--db",
            str(tmp_path / "x.db"),
            "--token",
            literal,
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "GRAPHMIND_HOME": str(tmp_path / "home")},
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "--token takes only auto" in proc.stderr and literal not in proc.stderr
    assert not (tmp_path / "x.db").exists()  # refused before anything was opened


@pytest.mark.faults
@pytest.mark.parametrize("source", ["GRAPHMIND_TOKEN", "--token-file", "GRAPHMIND_TOKEN_FILE"])
def test_the_token_is_never_in_proc_cmdline_nor_in_the_hubs_output(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str
) -> None:
    token = "only-in-the-environment-or-a-file-1"
    monkeypatch.setenv("GRAPHMIND_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    kept = tmp_path / "token"
    kept.write_text(token + "\n")
    kept.chmod(0o600)
    args: list[str] = []
    env: dict[str, str] = {}
    if source == "GRAPHMIND_TOKEN":
        env["GRAPHMIND_TOKEN"] = token
    elif source == "GRAPHMIND_TOKEN_FILE":
        env["GRAPHMIND_TOKEN_FILE"] = str(kept)
    else:
        args = ["--token-file", str(kept)]
    with HubProcess(tmp_path / "hub.db", args=args, env=env) as hub:
        assert hub.proc is not None
        cmdline = Path(f"/proc/{hub.proc.pid}/cmdline").read_bytes()
        assert token.encode() not in cmdline
        bearer = {"Authorization": f"Bearer {token}"}
        assert hub.api("GET", "/api/runs", headers=bearer)[0] == 200
        assert hub.api("GET", "/api/runs")[0] == 401
        wait_for(lambda: any("viewer-" in line for line in hub.stdout_lines), 5, "the viewer line")
        for _ in range(3):  # refused requests are not logged with what they carried
            hub.api("GET", "/api/runs", headers={"Authorization": f"Bearer {token}x"})
    assert token not in hub.stderr and token not in "\n".join(hub.stdout_lines)
    figure(f"token from {source}", "not in /proc/<pid>/cmdline, stdout or stderr")
