"""The viewer's files at `/`, or a one-line page when they are missing."""

from __future__ import annotations

import urllib.error
import urllib.request


def _get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.headers.get("content-type", ""), response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("content-type", ""), exc.read().decode()


def test_a_viewer_directory_is_served_at_the_root(make_hub, tmp_path):
    dist = tmp_path / "dist"
    (dist / "js").mkdir(parents=True)
    (dist / "index.html").write_text("<!doctype html><title>v</title>")
    (dist / "js" / "main.js").write_text("export const x = 1;")
    hub = make_hub(viewer_dist=dist)
    status, kind, body = _get(hub.url + "/")
    assert status == 200 and kind.startswith("text/html") and "<title>v</title>" in body
    status, kind, body = _get(hub.url + "/js/main.js")
    assert status == 200 and "javascript" in kind and body == "export const x = 1;"
    assert _get(hub.url + "/nope.js")[0] == 404
    assert _get(hub.url + "/../../etc/passwd")[0] == 404


def test_a_missing_viewer_answers_one_line(make_hub, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    hub = make_hub(viewer_dist=empty)
    status, kind, body = _get(hub.url + "/")
    assert status == 200 and kind.startswith("text/html")
    assert body.count("\n") == 1 and "viewer is not built" in body
    assert _get(hub.url + "/api/health")[0] == 200
