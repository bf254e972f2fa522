"""The hub's token settings: --token / GRAPHMIND_TOKEN, `auto`, and the non-loopback rule."""

from __future__ import annotations

import pytest

from graphmind_server.config import ConfigError, is_loopback, settings_from


def test_auto_makes_a_random_token_each_time() -> None:
    first = settings_from({"token": "auto"}, env={}).token
    second = settings_from({"token": "auto"}, env={}).token
    assert first and second and first != second and len(first) >= 24


def test_the_variable_sets_it_and_the_flag_wins() -> None:
    assert (
        settings_from({}, env={"GRAPHMIND_TOKEN": "a-long-enough-token-1"}).token == "a-long-enough-token-1"
    )
    assert (
        settings_from({"token": "flag-token-long-enough"}, env={"GRAPHMIND_TOKEN": "x" * 20}).token
        == "flag-token-long-enough"
    )
    assert settings_from({}, env={}).token is None


@pytest.mark.parametrize(
    "bad", ["short", "has space in it ok", 'quote"inside-long-enough', "semi;colon-long-enough"]
)
def test_a_token_that_would_break_a_header_or_cookie_is_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="--token"):
        settings_from({"token": bad}, env={})


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.com"])
def test_binding_beyond_loopback_requires_a_token(host: str) -> None:
    with pytest.raises(ConfigError, match=r"--host .*--token auto"):
        settings_from({"host": host}, env={})
    assert settings_from({"host": host, "token": "auto"}, env={}).token


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"])
def test_loopback_needs_no_token(host: str) -> None:
    assert is_loopback(host)
    assert settings_from({"host": host}, env={}).token is None
