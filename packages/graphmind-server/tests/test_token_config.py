"""The hub's token settings: --token auto, --token-file, GRAPHMIND_TOKEN(_FILE), the non-loopback rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphmind_server.hub.config import ConfigError, is_loopback, settings_from


def test_auto_makes_a_random_token_each_time() -> None:
    first = settings_from({"token": "auto"}, env={}).token
    second = settings_from({"token": "auto"}, env={}).token
    assert first and second and first != second and len(first) >= 24


def test_the_variable_sets_it_and_a_flag_wins(tmp_path: Path) -> None:
    assert (
        settings_from({}, env={"GRAPHMIND_TOKEN": "a-long-enough-token-1"}).token == "a-long-enough-token-1"
    )
    kept = tmp_path / "token"
    kept.write_text("file-token-long-enough\n")
    env = {"GRAPHMIND_TOKEN": "x" * 20}
    assert settings_from({"token_file": str(kept)}, env=env).token == "file-token-long-enough"
    assert settings_from({"token": "auto"}, env=env).token != "x" * 20
    assert settings_from({}, env={"GRAPHMIND_TOKEN_FILE": str(kept)}).token == "file-token-long-enough"
    assert settings_from({}, env={}).token is None


@pytest.mark.parametrize("literal", ["flag-token-long-enough", "x" * 40, "short"])
def test_a_token_value_on_the_command_line_is_refused_with_one_line(literal: str) -> None:
    with pytest.raises(ConfigError) as info:
        settings_from({"token": literal}, env={})
    message = str(info.value)
    assert "\n" not in message and literal not in message
    assert "--token takes only auto" in message and "GRAPHMIND_TOKEN" in message and "--token-file" in message


def test_a_token_file_that_cannot_be_read_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot read the token file .*missing.*check --token-file"):
        settings_from({"token_file": str(tmp_path / "missing")}, env={})
    (tmp_path / "empty").write_text("  \n")
    with pytest.raises(ConfigError, match="is empty"):
        settings_from({"token_file": str(tmp_path / "empty")}, env={})
    with pytest.raises(ConfigError, match="keep one"):
        settings_from({"token": "auto", "token_file": str(tmp_path / "empty")}, env={})


@pytest.mark.parametrize(
    "bad", ["short", "has space in it ok", 'quote"inside-long-enough', "semi;colon-long-enough"]
)
def test_a_token_that_would_break_a_header_is_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="GRAPHMIND_TOKEN"):
        settings_from({}, env={"GRAPHMIND_TOKEN": bad})


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.com"])
def test_binding_beyond_loopback_requires_a_token(host: str) -> None:
    with pytest.raises(ConfigError, match=r"--host .*--token auto"):
        settings_from({"host": host}, env={})
    assert settings_from({"host": host, "token": "auto"}, env={}).token


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_needs_no_token(host: str) -> None:
    assert is_loopback(host)
    assert settings_from({"host": host}, env={}).token is None
