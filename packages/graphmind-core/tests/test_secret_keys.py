"""The export rule: values under secret-looking keys (graphmind.redaction), used by `graphmind record`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphmind.redaction import (
    PLACEHOLDER,
    SECRET_KEY_SUFFIXES,
    SECRET_KEYS,
    is_secret_key,
    strip_secret_keys,
)


@pytest.mark.parametrize(
    "key",
    [
        *SECRET_KEYS,
        "API-Key",
        "APIKEY",
        "Set-Cookie",
        "openai_api_key",
        "github_access_token",
        "db_password",
        "CLIENT_SECRET",
        "x-goog-api-key",
    ],
)
def test_secret_looking_keys_match_in_any_case_and_spelling(key):
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key",
    [
        "max_tokens",
        "input_tokens",
        "tokenizer",
        "secretary_name",
        "city",
        "model",
        "author",
        "cookies_accepted",
        "password_hint_count",
    ],
)
def test_ordinary_keys_do_not_match(key):
    assert not is_secret_key(key)  # names and suffixes, never substrings


def test_nested_values_are_replaced_and_counted_and_the_input_is_not_changed():
    value = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}],
        "extra_headers": {"Authorization": "Bearer x", "X-Trace": "t"},
        "deep": [{"a": {"b": {"Password": {"nested": "object"}}}}],
        "headers": [["Cookie", "c=1"], ["Accept", "json"]],
        "already": {"token": PLACEHOLDER},
        "empty": {"api_key": None, "secret": ""},
    }
    out, removed = strip_secret_keys(value)
    assert removed == 3  # Authorization, Password, Cookie; nothing for the placeholder, None, ""
    assert out["extra_headers"] == {"Authorization": PLACEHOLDER, "X-Trace": "t"}
    assert out["deep"][0]["a"]["b"]["Password"] == PLACEHOLDER
    assert out["headers"] == [["Cookie", PLACEHOLDER], ["Accept", "json"]]
    assert out["already"] == {"token": PLACEHOLDER}
    assert out["empty"] == {"api_key": None, "secret": ""}
    assert out["messages"] == value["messages"]
    assert value["extra_headers"]["Authorization"] == "Bearer x"  # a copy: the original is untouched


def test_scalars_pass_through():
    assert strip_secret_keys("api_key") == ("api_key", 0)
    assert strip_secret_keys(3) == (3, 0)


def _documented(rule: str) -> list[str]:
    """The keys docs/export.md ("Secrets") lists in its table row `rule`: the promise to users."""
    doc = Path(__file__).resolve().parents[3] / "docs" / "export.md"
    for line in doc.read_text(encoding="utf-8").splitlines():
        if line.startswith(f"| {rule} |"):
            return re.findall(r"`([^`]+)`", line.split("|")[2].split("(so ")[0])  # not the examples
    raise AssertionError(f"docs/export.md has no '| {rule} |' row")


def test_every_documented_secret_name_and_suffix_is_redacted_and_the_lists_agree() -> None:
    # Built from the documentation, not from SECRET_KEYS itself: a name dropped from the code fails.
    names, suffixes = _documented("these names"), _documented("names ending with")
    assert len(names) >= 28 and len(suffixes) >= 9
    missed = [k for k in names if not is_secret_key(k)]
    missed += [f"my_{k}" for k in suffixes if not is_secret_key(f"my_{k}")]
    assert missed == [], f"documented as redacted, not redacted: {missed}"
    assert sorted(SECRET_KEYS) == sorted(names)  # the table is the whole list
    assert sorted(SECRET_KEY_SUFFIXES) == sorted(suffixes)
