"""Another user gets no token and no working code, round two (issue 47, docs/security.md "The viewer
link" and "Commands: mutual proof"):

- the hub's stdout in a world-readable log (`graphmind serve > hub.log` under umask 022) holds no
  code, only the link of a page another user cannot open;
- that link on a browser's command line (a terminal click starts `browser LINK`; every user reads
  /proc/<pid>/cmdline) gives another user nothing to redeem, while the user's own browser opens it;
- `graphmind viewer-url` and `graphmind mcp` (HubApi) facing a squatter of another uid on the port
  of a SIGKILLed hub, whose token file was left behind, send it neither the token nor a proof.

Another uid is 65534 (these tests need root, as the fault experiments did); every attempt's HTTP
status is asserted."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmind import protocol as proto
from graphmind_server.access.proof import Sessions
from graphmind_server.access.viewer_codes import LINK_TTL_S, ViewerCodes
from graphmind_server.mcp_server.hubapi import HubApi, HubUnreachable
from graphmind_server.testing import HubProcess, wait_for

from .conftest import figure

AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(not AS_ROOT, reason="needs root to run a process as another uid")
PYTHON = next((p for p in ("/usr/bin/python3", sys.executable) if os.access(p, os.X_OK)), sys.executable)
NOBODY = 65534

# Run as uid 65534: gather every string that could be a code, a token or a path from what that
# user can read (argv[2:] files, and /proc/*/cmdline when argv[1] == "proc"), try to open the
# viewer pages named there, redeem every candidate and use it as a token. Prints what happened.
ATTACKER = textwrap.dedent(r"""
    import json, os, re, sys, urllib.error, urllib.request
    hub, mode, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    texts = []
    for path in files:
        texts.append(open(path).read())
    if mode == "proc":
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    texts.append(open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode("utf-8", "replace"))
                except OSError:
                    pass
    seen = "\n".join(texts)
    out = {"pages": {}, "redeem": [], "bearer": [], "saw_link": hub.split("//")[1] in seen or "viewer-" in seen}
    for page in sorted(set(re.findall(r"file://(/\S*viewer-\d+\.html)", seen))):
        try:
            seen += open(page).read()
            out["pages"][page] = "read"
        except OSError as exc:
            out["pages"][page] = type(exc).__name__
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    def status(req):
        try:
            with opener.open(req, timeout=10) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, None
    for cand in sorted(set(re.findall(r"[A-Za-z0-9_-]{16,128}", seen))):
        body = json.dumps({"code": cand}).encode()
        code, answer = status(urllib.request.Request(hub + "/api/viewer/redeem", data=body, method="POST",
                                                     headers={"content-type": "application/json"}))
        out["redeem"].append(code)
        tokens = [cand] + ([answer["token"]] if isinstance(answer, dict) and "token" in answer else [])
        for token in tokens:
            out["bearer"].append(status(urllib.request.Request(hub + "/api/runs",
                                                                headers={"Authorization": f"Bearer {token}"}))[0])
    print(json.dumps(out))
""")


@pytest.fixture
def shared(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory anyone may walk through and read in (a log there is world-readable), with the
    GraphMind home in it: only the files' own modes protect them."""
    path = Path(tempfile.mkdtemp(prefix="graphmind-leaks-"))
    path.chmod(0o755)
    (path / "attacker.py").write_text(ATTACKER)
    (path / "attacker.py").chmod(0o644)
    monkeypatch.setenv("GRAPHMIND_HOME", str(path / "home"))
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    monkeypatch.delenv("GRAPHMIND_TOKEN_FILE", raising=False)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def attack(shared: Path, hub: HubProcess, mode: str, *files: Path) -> dict[str, object]:
    proc = subprocess.run(
        [PYTHON, "-S", str(shared / "attacker.py"), hub.url, mode, *map(str, files)],
        user=NOBODY,
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/",
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def viewer_line(hub: HubProcess) -> str:
    line: str = wait_for(
        lambda: next((x for x in hub.stdout_lines if x.startswith("Open the viewer")), None),
        5,
        "the viewer line",
    )
    return line.rsplit(": ", 1)[1].strip()


def follow(link: str) -> str:
    """What the user's own browser does with the page: the code in the address it navigates to."""
    page = Path(link.removeprefix("file://")).read_text()
    return page.split("#code=", 1)[1].split('"', 1)[0]


@needs_root
@pytest.mark.faults
def test_a_world_readable_hub_log_gives_another_user_no_code(shared: Path) -> None:
    old = os.umask(0o022)
    try:
        with HubProcess(shared / "hub.db", args=["--token", "auto"]) as hub:
            link = viewer_line(hub)
            log = shared / "hub.log"  # `graphmind serve > hub.log`: what the hub printed, 0644
            log.write_text("\n".join(hub.stdout_lines) + "\n" + hub.stderr)
            log.chmod(0o644)
            seen = attack(shared, hub, "log", log)
            assert seen["saw_link"], "the log holds no viewer line: the test would prove nothing"
            assert seen["redeem"] and set(seen["redeem"]) == {403}, seen  # type: ignore[arg-type]
            assert seen["bearer"] and set(seen["bearer"]) == {401}, seen  # type: ignore[arg-type]
            assert seen["pages"] == {link.removeprefix("file://"): "PermissionError"}, seen
            # The user's own browser opens the same link.
            token = proto.token_file(hub.port).read_text().strip()
            assert hub.api("POST", "/api/viewer/redeem", {"code": follow(link)}) == (200, {"token": token})
    finally:
        os.umask(old)
    figure(
        "hub log read by uid 65534",
        f"viewer page PermissionError; {len(seen['redeem'])} redeem attempts 403, "  # type: ignore[arg-type]
        f"{len(seen['bearer'])} bearer attempts 401",  # type: ignore[arg-type]
    )


@needs_root
@pytest.mark.faults
def test_the_link_on_a_browsers_command_line_gives_another_user_nothing(shared: Path) -> None:
    with HubProcess(shared / "hub.db", args=["--token", "auto"]) as hub:
        link = viewer_line(hub)
        # A terminal click: `xdg-open LINK` starts `browser LINK`; its argv is in /proc for everyone.
        browser = subprocess.Popen(
            [PYTHON, "-S", "-c", "import sys; sys.stdin.read()", link], stdin=subprocess.PIPE
        )
        try:
            seen = attack(shared, hub, "proc")
        finally:
            browser.communicate(timeout=10)
        assert seen["saw_link"], "the attacker did not find the link in /proc: the test would prove nothing"
        assert set(seen["redeem"]) <= {403} and set(seen["bearer"]) <= {401}, seen  # type: ignore[arg-type]
        assert seen["pages"] == {link.removeprefix("file://"): "PermissionError"}, seen
        # The attacker lost the race it used to win: the user's browser redeems, after it.
        token = proto.token_file(hub.port).read_text().strip()
        code = follow(link)
        assert hub.api("POST", "/api/viewer/redeem", {"code": code}) == (200, {"token": token})
        assert hub.api("POST", "/api/viewer/redeem", {"code": code})[0] == 403  # once
        assert follow(link) != code  # the page holds a fresh code: it opens the viewer again
    figure(
        "link on a browser's argv, /proc read by uid 65534",
        f"page PermissionError; {len(seen['redeem'])} redeem 403, {len(seen['bearer'])} bearer 401",  # type: ignore[arg-type]
    )


def test_codes_work_once_and_links_expire() -> None:
    now = [0.0]
    codes = ViewerCodes("a-token-of-sixteen-chars", clock=lambda: now[0])
    link = codes.issue()
    assert codes.redeem(link) == "a-token-of-sixteen-chars" and codes.redeem(link) is None
    late = codes.issue()
    now[0] += LINK_TTL_S + 0.1
    assert codes.redeem(late) is None
    assert LINK_TTL_S <= 60


def test_a_link_code_from_the_api_works_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRAPHMIND_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    with HubProcess(tmp_path / "hub.db", args=["--token", "auto"]) as hub:
        token = proto.token_file(hub.port).read_text().strip()
        bearer = {"Authorization": f"Bearer {token}"}
        status, body = hub.api("POST", "/api/viewer/codes", {"link": True}, headers=bearer)
        assert status == 200 and body["expiresIn"] == LINK_TTL_S
        code = body["url"].split("#code=", 1)[1]
        assert hub.api("POST", "/api/viewer/redeem", {"code": code}) == (200, {"token": token})
        assert hub.api("POST", "/api/viewer/redeem", {"code": code})[0] == 403


SQUATTER = textwrap.dedent(r"""
    import http.server, sys
    class H(http.server.BaseHTTPRequestHandler):
        def _any(self):
            size = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(size) if size else b""
            sys.stdout.write(repr((self.requestline, str(self.headers), body)) + "\n")
            sys.stdout.flush()
            status = int(sys.argv[2])
            payload = b'{"url": "http://127.0.0.1/#code=forged", "gates": []}'
            self.send_response(status)
            if sys.argv[3] == "forge":
                self.send_header("x-graphmind-auth", "graphmind-hmac-sha256-v1")
                self.send_header("x-graphmind-server-nonce", "A" * 43)
                self.send_header("x-graphmind-server-proof", "0" * 64)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        do_GET = do_POST = do_PUT = _any
        def log_message(self, *a):
            pass
    class S(http.server.ThreadingHTTPServer):
        allow_reuse_address = True
    server = S(("127.0.0.1", int(sys.argv[1])), H)
    print("listening", flush=True)
    server.serve_forever()
""")


class Squatter:
    """An HTTP listener of uid 65534 on `port`; keeps every request it is sent."""

    def __init__(self, shared: Path, port: int, status: int, kind: str) -> None:
        script = shared / "squatter.py"
        script.write_text(SQUATTER)
        script.chmod(0o644)
        self.proc = subprocess.Popen(
            [PYTHON, "-S", str(script), str(port), str(status), kind],
            user=NOBODY,
            stdout=subprocess.PIPE,
            text=True,
            cwd="/",
        )
        assert self.proc.stdout is not None
        assert self.proc.stdout.readline().strip() == "listening"
        self.seen: list[str] = []
        self._pump = threading.Thread(target=self._read, daemon=True)
        self._pump.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.seen.append(line)

    def stop(self) -> str:
        self.proc.kill()
        self.proc.wait(10)
        self._pump.join(10)
        return "".join(self.seen)


@needs_root
@pytest.mark.faults
@pytest.mark.parametrize(("status", "kind"), [(200, "accept"), (200, "forge"), (401, "refuse")])
def test_viewer_url_and_graphmind_mcp_send_a_squatter_nothing(shared: Path, status: int, kind: str) -> None:
    hub = HubProcess(shared / "hub.db", args=["--token", "auto"])
    port = hub.port
    token = proto.token_file(port).read_text().strip()
    hub.kill()  # SIGKILL: the token file stays behind
    assert proto.token_file(port).exists()
    squatter = Squatter(shared, port, status, kind)
    try:
        env = {**os.environ, "GRAPHMIND_TELEMETRY": "off"}
        proc = subprocess.run(
            [sys.executable, "-m", "graphmind_server", "viewer-url", "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            env=env,
        )
        assert proc.returncode == 2 and proc.stdout == "", (proc.stdout, proc.stderr)
        assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr, proc.stderr
        assert "is not your hub" in proc.stderr and str(proto.token_file(port)) in proc.stderr
        with pytest.raises(HubUnreachable, match="is not your hub"):
            HubApi(port).gates()
        with pytest.raises(HubUnreachable, match="is not your hub"):
            HubApi(port).answer("g1", "continue", None, False)
    finally:
        received = squatter.stop()
    assert received.count("/api/auth/challenge") >= 3, received  # it was asked, and nothing more
    assert "/api/gates" not in received and "/api/viewer/codes" not in received
    assert token not in received and "authorization" not in received.lower()
    figure(
        f"squatter ({kind}, {status}) on a SIGKILLed hub's port",
        "0 tokens, 0 proofs, 0 requests beyond the challenge",
    )


def test_a_proof_pair_is_the_hubs_own_and_expires() -> None:
    now = [0.0]
    token = "the-hubs-token-0123456789"
    sessions = Sessions(token, clock=lambda: now[0])
    client = proto.new_nonce()
    headers = dict(sessions.challenge(client))
    server = headers[proto.SERVER_NONCE_HEADER]
    assert headers[proto.SERVER_PROOF_HEADER] == proto.proof(token, proto.HUB_PROOF_LABEL, client, server)
    mine = proto.proof(token, proto.APP_PROOF_LABEL, client, server)
    assert sessions.check(f"Graphmind-Proof {client} {server} {mine}")
    wrong = proto.proof("another-token-xxxxxxxxxx", proto.APP_PROOF_LABEL, client, server)
    assert not sessions.check(f"Graphmind-Proof {client} {server} {wrong}")
    assert not sessions.check(f"Graphmind-Proof {proto.new_nonce()} {server} {mine}")
    now[0] += 601
    assert not sessions.check(f"Graphmind-Proof {client} {server} {mine}")


def test_the_tools_work_against_the_real_hub_without_sending_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GRAPHMIND_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("GRAPHMIND_TOKEN", raising=False)
    with HubProcess(tmp_path / "hub.db", args=["--token", "auto"]) as hub:
        api = HubApi(hub.port)
        assert api.gates() == []
        assert api.set_debug({"mode": "run"})[0] == 200
        hub.restart()  # a new hub (same token file path, a new token): the tool proves itself again
        assert HubApi(hub.port).gates() == []


@needs_root
@pytest.mark.faults
async def test_the_graphmind_mcp_process_sends_a_squatter_nothing(shared: Path) -> None:
    """The same, through the real `graphmind mcp --allow-control` process and its MCP tools."""
    from mcp import ClientSession, StdioServerParameters, stdio_client

    hub = HubProcess(shared / "hub.db", args=["--token", "auto"])
    port = hub.port
    token = proto.token_file(port).read_text().strip()
    hub.kill()
    squatter = Squatter(shared, port, 200, "accept")
    try:
        params = StdioServerParameters(
            command=sys.executable,
            args=[
                "-m",
                "graphmind_server",
                "mcp",
                "--db",
                str(shared / "hub.db"),
                "--port",
                str(port),
                "--allow-control",
            ],
            env={**os.environ, "GRAPHMIND_TELEMETRY": "off"},
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.call_tool("list_held_gates", {})
            assert "is not your hub" in json.loads(listed.content[0].text)["source"]  # type: ignore[union-attr]
            answered = await session.call_tool("answer_gate", {"gate_id": "g1", "action": "continue"})
            assert answered.is_error and "is not your hub" in answered.content[0].text  # type: ignore[union-attr]
            steered = await session.call_tool("set_breakpoints", {"breakpoints": []})
            assert steered.is_error and "is not your hub" in steered.content[0].text  # type: ignore[union-attr]
    finally:
        received = squatter.stop()
    assert received.count("/api/auth/challenge") >= 3, received
    assert "/api/gates" not in received and "/api/debug" not in received
    assert token not in received and "authorization" not in received.lower()


def test_the_viewer_page_is_private_and_its_link_absolute_with_a_relative_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GRAPHMIND_HOME", "relative-home")
    codes = ViewerCodes("a-token-of-sixteen-chars")
    page = codes.write_file("http://127.0.0.1:4747", 4747)
    assert page.as_uri() == (tmp_path / "relative-home" / "viewer-4747.html").as_uri()
    assert page.stat().st_mode & 0o777 == 0o600 and page.parent.stat().st_mode & 0o777 == 0o700
    code = follow(page.as_uri())
    assert codes.redeem(code) == "a-token-of-sixteen-chars" and follow(page.as_uri()) != code
    codes.remove_file()
    assert not page.exists()
