"""Every attack of issue 19 on every route: a foreign and a `null` Origin, a rebinding Host, path
traversal, no (or a wrong) token when one is set, and another uid on the same machine."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect

import graphmind
from graphmind import protocol as proto
from graphmind_server.access.viewer_codes import viewer_file
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure

HTTP_ROUTES = [
    ("GET", "/"),
    ("GET", "/index.html"),
    ("GET", "/api/health"),
    ("GET", "/api/runs"),
    ("GET", "/api/runs/r1"),
    ("GET", "/api/runs/r1/events"),
    ("DELETE", "/api/runs/r1"),
    ("POST", "/api/runs/r1/abort"),
    ("GET", "/api/gates"),
    ("POST", "/api/gates/g1"),
    ("GET", "/api/debug"),
    ("PUT", "/api/debug"),
    ("POST", "/api/pause"),
    ("GET", "/api/nowhere"),
]
STATE_CHANGING = {"POST", "PUT", "DELETE"}
WS_ROUTES = ["/ingest", "/api/live"]
TRAVERSALS = [
    "/../../../../etc/passwd",
    "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "/..%2f..%2f..%2fetc%2fpasswd",
    "/static/../../../../etc/passwd",
    "/%2e%2e%5c%2e%2e%5cetc%5cpasswd",
    "/....//....//etc/passwd",
]


def raw_request(port: int, method: str, path: str, headers: dict[str, str]) -> tuple[int, bytes, bytes]:
    """One HTTP/1.1 request written by hand (no client normalises the path): (status, head, body)."""
    upgrade = "Upgrade" in headers
    extra = (
        ["Connection: Upgrade", "Sec-WebSocket-Version: 13", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="]
        if upgrade
        else ["Connection: close", "Content-Length: 0"]
    )
    lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items()), *extra, "", ""]
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall("\r\n".join(lines).encode("latin-1"))
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
            if upgrade and b"\r\n\r\n" in data:
                break
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ", 2)[1]), head, body


def ws_status(url: str, headers: dict[str, str], subprotocols: list[str] | None = None) -> int:
    try:
        with connect(url, additional_headers=headers, open_timeout=5, subprotocols=subprotocols) as ws:  # type: ignore[arg-type]
            ws.close()
            return 101
    except InvalidStatus as exc:
        return exc.response.status_code


@pytest.fixture
def token_hub(tmp_path: Path, home: Path) -> Iterator[HubProcess]:
    with HubProcess(tmp_path / "hub.db", args=["--token", "auto"]) as h:
        yield h
    assert "Traceback" not in h.stderr, h.stderr


@pytest.mark.faults
def test_foreign_and_null_origins_and_rebinding_hosts_are_refused_on_every_route(hub: HubProcess) -> None:
    host = f"127.0.0.1:{hub.port}"
    refused = 0
    for origin in ("https://attacker.example", "null"):
        for method, path in HTTP_ROUTES:
            status, _, body = raw_request(hub.port, method, path, {"Host": host, "Origin": origin})
            if method in STATE_CHANGING:
                assert status == 403, (origin, method, path, status)
                message = json.loads(body)["error"]
                refused += 1
                if origin == "null":
                    # The advice must be one that works: the hub refuses to start with =null.
                    assert "GRAPHMIND_ALLOWED_ORIGINS=null" not in message and "=*" in message, message
            else:
                assert status != 500  # a page may read through its own tag, not through fetch (CORS)
        for path in WS_ROUTES:
            assert ws_status(f"ws://{host}{path}", {"Origin": origin}) == 403, (origin, path)
            refused += 1
    for method, path in HTTP_ROUTES:
        status, _, _ = raw_request(hub.port, method, path, {"Host": f"rebind.attacker.example:{hub.port}"})
        assert status == 403, (method, path, status)
        refused += 1
    for path in WS_ROUTES:
        status, _, _ = raw_request(
            hub.port, "GET", path, {"Host": f"rebind.attacker.example:{hub.port}", "Upgrade": "websocket"}
        )
        assert status == 403, (path, status)
        refused += 1
    figure("origin / null origin / rebinding host", f"{refused} of {refused} attempts refused")


@pytest.mark.faults
def test_path_traversal_never_leaves_the_viewer_directory(hub: HubProcess) -> None:
    for path in TRAVERSALS:
        status, _, body = raw_request(hub.port, "GET", path, {"Host": f"127.0.0.1:{hub.port}"})
        assert status in (400, 404), (path, status)
        assert b"root:" not in body
    figure("path traversal", f"{len(TRAVERSALS)} of {len(TRAVERSALS)} refused")


PUBLIC = {("GET", "/"), ("GET", "/index.html")}  # the viewer's files: code, no data (issue 28)


@pytest.mark.faults
def test_a_token_hub_refuses_every_route_without_its_token(token_hub: HubProcess, home: Path) -> None:
    token_file = proto.token_file(token_hub.port)
    assert token_file.stat().st_mode & 0o777 == 0o600
    token = token_file.read_text().strip()
    host = f"127.0.0.1:{token_hub.port}"
    refused = 0
    for given in (None, "wrong-token-wrong-token", token[:-1]):
        auth = {"Authorization": f"Bearer {given}"} if given else {}
        for method, path in HTTP_ROUTES:
            status, head, _ = raw_request(token_hub.port, method, path, {"Host": host, **auth})
            if (method, path) in PUBLIC:
                assert status == 200 and b"set-cookie" not in head.lower(), (method, path, status)
                continue
            assert status == 401, (given, method, path, status)
            assert b"www-authenticate: Bearer" in head.lower().replace(b"bearer", b"Bearer")
            refused += 1
        for path in WS_ROUTES:
            assert ws_status(f"ws://{host}{path}", auth) == 401, (given, path)
            refused += 1
        # The live feed's subprotocol form (a browser's WebSocket cannot send headers), wrong.
        wrong = proto.token_subprotocol(given or "no-token-at-all-x")
        assert ws_status(f"ws://{host}/api/live", {}, ["graphmind.v1", wrong]) == 401
        refused += 1
    # The token as a query parameter or a cookie is no credential any more (a browser keeps a URL in
    # its History and sends a cookie to every port of 127.0.0.1).
    for extra in ({"Cookie": f"graphmind_token_{token_hub.port}={token}"}, {}):
        path = "/api/runs" if extra else f"/api/runs?token={token}"
        status, head, _ = raw_request(token_hub.port, "GET", path, {"Host": host, **extra})
        assert status == 401, (path, extra, status)
        refused += 1
    # An old cookie is told to go away by any answer, the viewer's page included.
    _, head, _ = raw_request(
        token_hub.port, "GET", "/", {"Host": host, "Cookie": f"graphmind_token_{token_hub.port}=x"}
    )
    assert f"set-cookie: graphmind_token_{token_hub.port}=; max-age=0".encode() in head.lower()
    # With it: a header (apps, curl, the viewer's fetches) or the live feed's subprotocol.
    ok = {"Host": host, "Authorization": f"Bearer {token}"}
    assert raw_request(token_hub.port, "GET", "/api/runs", ok)[0] == 200
    assert ws_status(f"ws://{host}/api/live", {"Authorization": f"Bearer {token}"}) == 101
    assert ws_status(f"ws://{host}/api/live", {}, ["graphmind.v1", proto.token_subprotocol(token)]) == 101
    # The token does not make a foreign page's request pass the Origin check.
    assert (
        raw_request(token_hub.port, "PUT", "/api/debug", {**ok, "Origin": "https://attacker.example"})[0]
        == 403
    )
    # The printed viewer link names a private page holding a one-time code, never the token; a
    # spent or made-up code is refused, and redeeming is refused to a foreign page.
    line = wait_for(
        lambda: next((x for x in token_hub.stdout_lines if "viewer-" in x), None), 5, "the viewer line"
    )
    assert token not in "\n".join(token_hub.stdout_lines) and token not in token_hub.stderr
    assert "code" not in line
    page = viewer_file(token_hub.port).read_text()
    code = page.split("#code=", 1)[1].split('"', 1)[0]
    foreign = {"Origin": "https://attacker.example"}
    assert token_hub.api("POST", "/api/viewer/redeem", {"code": code}, headers=foreign)[0] == 403
    assert token_hub.api("POST", "/api/viewer/redeem", {"code": code + "x"})[0] == 403
    assert token_hub.api("POST", "/api/viewer/redeem", {"code": code}) == (200, {"token": token})
    assert token_hub.api("POST", "/api/viewer/redeem", {"code": code})[0] == 403
    assert code not in viewer_file(token_hub.port).read_text()  # the page holds a fresh code again
    refused += 4
    figure("token", f"{refused} of {refused} requests without the right token refused (401/403)")


@pytest.mark.faults
def test_an_app_of_the_same_user_finds_the_token_without_configuration(
    token_hub: HubProcess, home: Path
) -> None:
    client = graphmind.Client(app="same-user", url=token_hub.ingest_url)
    try:
        assert client.ready(5)
        with client.run("found-the-token"):
            client.wrap(lambda: 1, name="t")()
    finally:
        client.dispose()
    token = proto.token_file(token_hub.port).read_text().strip()
    runs = token_hub.api("GET", "/api/runs", headers={"Authorization": f"Bearer {token}"})[1]["runs"]
    assert [r["name"] for r in runs] == ["found-the-token"]


OTHER_UID = textwrap.dedent("""
    import json, sys, urllib.request, urllib.error
    from pathlib import Path
    out = {}
    try:
        Path(sys.argv[1]).read_text()
        out["read"] = True
    except PermissionError:
        out["read"] = False
    try:
        urllib.request.urlopen(sys.argv[2] + "/api/runs", timeout=5)
        out["status"] = 200
    except urllib.error.HTTPError as exc:
        out["status"] = exc.code
    print(json.dumps(out))
""")


@pytest.mark.faults
@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to run as another uid"
)
def test_another_uid_can_neither_read_the_token_nor_use_the_hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Everything the other user may walk through is world-readable: only the token file's own 0600 stops it.
    shared = Path(tempfile.mkdtemp(prefix="graphmind-uid-"))
    try:
        shared.chmod(0o755)
        monkeypatch.setenv("GRAPHMIND_HOME", str(shared / "home"))
        script = shared / "other.py"
        script.write_text(OTHER_UID)
        script.chmod(0o644)
        with HubProcess(tmp_path / "hub.db", args=["--token", "auto"]) as hub:
            token_file = proto.token_file(hub.port)
            (shared / "home").chmod(0o755)
            python = next(
                (p for p in ("/usr/bin/python3", sys.executable) if os.access(p, os.X_OK)), sys.executable
            )
            proc = subprocess.run(
                [python, "-S", str(script), str(token_file), hub.url],
                user=65534,
                capture_output=True,
                text=True,
                timeout=30,
                cwd="/",
            )
        assert proc.returncode == 0, proc.stderr
        out = json.loads(proc.stdout)
        assert out == {"read": False, "status": 401}, out
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    figure("another uid", "token file unreadable (0600), every API call 401")
