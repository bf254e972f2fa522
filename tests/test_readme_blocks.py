"""Every Python block of README.md and of each package README runs as printed.

Each block is a script of its own (it defines what it uses), run in a subprocess against a real hub
process, with each SDK pointed at its fake provider through its own variable (`OPENAI_BASE_URL` ->
`graphmind_openai.testing.FakeOpenAI`, `ANTHROPIC_BASE_URL` -> `graphmind_anthropic.testing.FakeAnthropic`;
add a row to FAKE_PROVIDERS for a new one; no network). The block must exit 0, and every run it made must be stored with
status `finished`. Blocks are discovered in `packages/*/README.md`, so a new package's README is
covered the day it lands.

A block may opt out only with a marker line that says why, e.g.
`# readme-test: skip (a fragment of the block above: it needs that block's agent)`.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphmind_server.testing import HubProcess

ROOT = Path(__file__).resolve().parent.parent
READMES = [ROOT / "README.md", *sorted(ROOT.glob("packages/*/README.md"))]
BLOCK = re.compile(r"^```python[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
SKIP = re.compile(r"^\s*#\s*readme-test:\s*skip\b(.*)$", re.MULTILINE)
TERMINAL = {"finished", "error", "aborted", "abandoned"}


def python_blocks() -> list[Any]:
    params = []
    for readme in READMES:
        text = readme.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            name = f"{readme.relative_to(ROOT)}:{line}"
            params.append(pytest.param(match.group(1), id=name))
    return params


def docs_model_reply(body: dict[str, Any]) -> Any:
    """A model that uses its tools once, then answers: each block's agent loop ends in two steps.

    The first request that offers tools gets a call of the first tool, with an example value for
    every required parameter of its JSON schema; a request that already carries a tool result, or
    offers no tools, gets a plain answer. It reads OpenAI chat, OpenAI Responses, Anthropic and
    Gemini request bodies, and answers in core's reply shape, which every fake provider takes.
    """
    tools = body.get("tools") or []
    if not tools or _has_tool_result(body):
        return "Done: everything you asked for is booked."
    first = tools[0]
    first = (first.get("functionDeclarations") or [first])[0]  # Gemini: a tool holds its functions
    function = first.get("function") or first  # chat nests it; Responses and Anthropic do not
    schema = function.get("parameters") or function.get("input_schema") or {}
    properties = schema.get("properties") or {}
    args = {name: _example(properties.get(name) or {}) for name in schema.get("required") or []}
    return {
        "content": None,
        "tool_calls": [{"id": None, "name": function["name"], "arguments": json.dumps(args)}],
    }


def _has_tool_result(body: dict[str, Any]) -> bool:
    items = [
        *(body.get("messages") or []),
        *(body.get("input") if isinstance(body.get("input"), list) else []),
    ]
    for content in body.get("contents") or []:  # Gemini: a function's result is a functionResponse part
        if any(isinstance(p, dict) and "functionResponse" in p for p in content.get("parts") or []):
            return True
    for item in items:
        if not isinstance(item, dict):
            continue
        if item.get("role") == "tool" or item.get("type") == "function_call_output":
            return True
        content = item.get("content")
        if isinstance(content, list) and any(
            isinstance(c, dict) and c.get("type") == "tool_result" for c in content
        ):
            return True
    return False


def _example(schema: dict[str, Any]) -> Any:
    kind = str(schema.get("type") or "").lower()  # Gemini spells types in capitals
    return {"integer": 2, "number": 2.5, "boolean": True, "array": [], "object": {}}.get(kind, "CAI")


# The fake providers a block's SDK is pointed at through its own environment variable (no network).
# (module, class, base-URL variable, key variable): a package not installed is left out.
FAKE_PROVIDERS = [
    ("graphmind_openai.testing", "FakeOpenAI", "OPENAI_BASE_URL", "OPENAI_API_KEY"),
    ("graphmind_anthropic.testing", "FakeAnthropic", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
    ("graphmind_google_genai.testing", "FakeGemini", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_API_KEY"),
]


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HubProcess]:
    with HubProcess(tmp_path_factory.mktemp("readme") / "hub.db") as h:
        yield h
    assert "Traceback" not in h.stderr, h.stderr


class GateAnswerer(threading.Thread):
    """The person at the viewer: a block that holds (a breakpoint in code, an error caught by the
    block under the hub's default pause-on-error) is answered `continue`, as a reader would."""

    def __init__(self, hub: HubProcess) -> None:
        super().__init__(name="readme-gate-answerer", daemon=True)
        self.hub = hub
        self.answered: list[dict[str, Any]] = []
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.05):
            status, body = self.hub.api("GET", "/api/gates")
            for gate in body.get("gates", []) if status == 200 else []:
                if self.hub.api("POST", f"/api/gates/{gate['gateId']}", {"action": "continue"})[0] == 200:
                    self.answered.append(gate)


@pytest.fixture
def answerer(hub: HubProcess) -> Iterator[GateAnswerer]:
    thread = GateAnswerer(hub)
    thread.start()
    yield thread
    thread.done.set()
    thread.join(5)


@pytest.fixture(scope="module")
def provider_env() -> Iterator[dict[str, str]]:
    """Every installed fake provider, started, as the environment variables that point SDKs at it."""
    env: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        for module, name, url_var, key_var in FAKE_PROVIDERS:
            try:
                fake_class = getattr(importlib.import_module(module), name)
            except ImportError:
                continue
            fake = stack.enter_context(fake_class(default_reply=docs_model_reply))
            env[url_var] = fake.base_url
            env[key_var] = "test-key-not-used"
        # LiteLLM fetches a model cost map from the internet at import unless told to use its own copy.
        env["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
        yield env


def run_ids(hub: HubProcess) -> set[str]:
    status, body = hub.api("GET", "/api/runs?limit=1000")
    assert status == 200, body
    return {run["id"] for run in body["runs"]}


def settled_runs(hub: HubProcess, ids: set[str], timeout: float = 10.0) -> dict[str, dict[str, Any]]:
    """The runs, once each has left `running` (or as they are after `timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        runs = {run_id: hub.api("GET", f"/api/runs/{run_id}")[1] for run_id in ids}
        if all(run.get("status") in TERMINAL for run in runs.values()) or time.monotonic() > deadline:
            return runs
        time.sleep(0.05)


@pytest.mark.parametrize("code", python_blocks())
def test_the_block_runs_as_printed_and_its_run_is_finished(
    code: str, hub: HubProcess, provider_env: dict[str, str], answerer: GateAnswerer, tmp_path: Path
) -> None:
    skip = SKIP.search(code)
    if skip is not None:
        why = skip.group(1).strip(" :()—-")
        assert len(why.split()) >= 3, f"a skipped block must say why on its marker line: {skip.group(0)!r}"
        pytest.skip(why)
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHMIND", "OPENAI_", "ANTHROPIC_"))}
    env.update(provider_env, GRAPHMIND_URL=hub.ingest_url)
    before = run_ids(hub)
    result = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, f"the block failed:\n{code}\nstderr:\n{result.stderr}"
    assert "Traceback" not in result.stderr, result.stderr
    new = run_ids(hub) - before
    runs = settled_runs(hub, new)
    statuses = {run["name"]: run["status"] for run in runs.values()}
    assert new, f"the block made no run on the hub:\n{code}\nstderr:\n{result.stderr}"
    assert set(statuses.values()) == {"finished"}, f"{statuses}\n{code}\nstderr:\n{result.stderr}"


def test_readme_blocks_are_found_in_every_package_readme() -> None:
    found = {param.id.split(":")[0] for param in python_blocks()}
    assert "README.md" in found
    for readme in ROOT.glob("packages/*/README.md"):
        if BLOCK.search(readme.read_text(encoding="utf-8")):
            assert str(readme.relative_to(ROOT)) in found


@pytest.mark.parametrize("readme", sorted(ROOT.glob("packages/*/README.md")), ids=lambda p: p.parent.name)
def test_package_readmes_link_absolutely(readme: Path) -> None:
    """A package README is shown on PyPI, where a relative link leads nowhere."""
    prose = re.sub(r"^```.*?^```", "", readme.read_text(encoding="utf-8"), flags=re.MULTILINE | re.DOTALL)
    prose = re.sub(r"`[^`\n]*`", "", prose)  # code spans are not links either
    links = re.findall(r"\]\(([^)\s]+)\)", prose)
    relative = [link for link in links if not re.match(r"^(https?://|mailto:|#)", link)]
    assert relative == [], f"{readme.relative_to(ROOT)} links relatively: {relative}"


def test_the_compatibility_table_is_each_pyprojects_pins() -> None:
    """README's compatibility table: the `supported` column is exactly what each pyproject pins."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = text.split("## Compatibility", 1)[1].split("\n## ", 1)[0]
    rows = [
        [c.strip() for c in line.strip("|").split("|")]
        for line in table.splitlines()
        if line.startswith("| graphmind")
    ]
    assert rows, "no compatibility rows"
    for package, framework, supported, _tested in rows:
        pyproject = (ROOT / "packages" / package / "pyproject.toml").read_text(encoding="utf-8")
        if framework == "Python":
            pin = re.search(r'requires-python = "([^"]+)"', pyproject)
        else:
            pin = re.search(rf'"{re.escape(framework)}([<>=!~][^"]*)"', pyproject)
        assert pin, f"{package} pins no {framework}"
        # an environment marker (`; python_version >= '3.11'`) is not part of the range
        spec = sorted(part.strip() for part in pin.group(1).split(";")[0].split(","))
        supported = re.sub(r"\s*\([^)]*\)", "", supported)  # a note in parentheses is not a pin
        shown = sorted(
            part.strip().replace("≥ ", ">=").replace("< ", "<").replace("≠ ", "!=")
            for part in supported.split(",")
        )
        assert shown == spec, f"{package}: README says {supported!r}, pyproject pins {pin.group(1)!r}"


def test_the_install_table_names_every_package() -> None:
    root = Path(__file__).resolve().parents[1]
    table = (root / "README.md").read_text(encoding="utf-8")
    for package in sorted(p.name for p in (root / "packages").iterdir() if (p / "pyproject.toml").exists()):
        assert f"| `{package}` |" in table, f"README's install table lacks {package}"


def test_pytest_addopts_leave_the_summary_line_to_a_q_on_the_command_line() -> None:
    """`uv run pytest -q` prints its summary line only if addopts has no -q of its own (-qq prints none)."""
    import tomllib

    root = Path(__file__).resolve().parents[1]
    addopts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]["addopts"]
    assert "-q" not in addopts.split()
