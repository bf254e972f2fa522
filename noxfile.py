"""Sessions beyond the default suite: the framework-version matrix and the wheel smoke.

    uv run nox -s tests                 # the default suite (same as `uv run pytest`: xdist workers, one per core)
    uv run nox -s lint                  # ruff check, ruff format --check, mypy --strict on every package's src (CI runs it)
    uv run nox -s wheels                # build every package, install each wheel alone in a fresh venv, smoke it
    uv run nox -s faults                # the whole fault suite at full scale (the default run: a slice of it)
    uv run nox -s huge                  # the viewer on a 1,000,000-event run (the default run uses 20,000)
    uv run nox -s "openai(openai='3')"  # one cell of the matrix; `uv run nox -t matrix` runs them all
    uv run nox -s crewai                # graphmind-crewai in its own environment (CrewAI pins openai<3; CI runs it)

The matrix tests each adapter against the newest release and the previous major of its framework.
"""

from __future__ import annotations

import glob
import os
import pathlib

import nox

nox.options.default_venv_backend = "uv"
nox.options.sessions = ["tests"]

ROOT = pathlib.Path(__file__).parent
PACKAGES = [
    "graphmind-core",
    "graphmind-server",
    "graphmind-openai",
    "graphmind-langchain",
    "graphmind-anthropic",
    "graphmind-mcp",
    "graphmind-llamaindex",
    "graphmind-litellm",
    "graphmind-google-adk",
    "graphmind-openai-agents",
    "graphmind-pydantic-ai",
    "graphmind-claude-agent-sdk",
    "graphmind-google-genai",
    "graphmind-strands",
]
# The workspace wheels a package's wheel needs beside graphmind-core (its smoke installs them too).
WHEEL_DEPS = {"graphmind-claude-agent-sdk": ["graphmind-anthropic"]}
# Packages left out of the workspace's lock (pyproject.toml, [tool.uv.workspace] exclude).
OUTSIDE_WORKSPACE = ["graphmind-crewai"]
# One row per adapter: its package, the framework distribution, the versions to test, its tests.
MATRIX = {
    "openai": ("graphmind-openai", "openai", ["3", "2"], ["packages/graphmind-openai/tests"]),
    "langchain": (
        "graphmind-langchain",
        "langchain-core",
        ["1", "0.3"],
        ["packages/graphmind-langchain/tests"],
    ),
    "anthropic": ("graphmind-anthropic", "anthropic", ["2", "1"], ["packages/graphmind-anthropic/tests"]),
    "mcp": ("graphmind-mcp", "mcp", ["2.3", "2.2"], ["packages/graphmind-mcp/tests"]),
    "llamaindex": (
        "graphmind-llamaindex",
        "llama-index-core",
        ["0.14", "0.14.5"],
        ["packages/graphmind-llamaindex/tests"],
    ),
    # The newest line and the one before it (never 1.107.0: reported compromised; the range excludes it).
    "litellm": ("graphmind-litellm", "litellm", ["1.110", "1.109"], ["packages/graphmind-litellm/tests"]),
    # The newest minor and the one before it (google-adk 2.x needs Python 3.11).
    "google_adk": (
        "graphmind-google-adk",
        "google-adk",
        ["2.13", "2.12"],
        ["packages/graphmind-google-adk/tests"],
    ),
    # The newest minor and the one before it (0.x: a minor is the SDK's breaking step).
    "openai_agents": (
        "graphmind-openai-agents",
        "openai-agents",
        ["0.24", "0.23"],
        ["packages/graphmind-openai-agents/tests"],
    ),
    # The newest line and 2.62, the release that added `AbstractCapability.get_wrapper_model` (the
    # hook every model request goes through; docs/pydantic-ai.md), the range's floor.
    "pydantic_ai": (
        "graphmind-pydantic-ai",
        "pydantic-ai-slim",
        ["2.68", "2.62"],
        ["packages/graphmind-pydantic-ai/tests"],
    ),
    # The newest 0.2 release and the range's floor (each wheel bundles its own CLI).
    "claude_agent_sdk": (
        "graphmind-claude-agent-sdk",
        "claude-agent-sdk",
        ["0.2.190"],
        ["packages/graphmind-claude-agent-sdk/tests"],
    ),
    # The newest line and 2.34, the range's floor (the workspace's, pulled by google-adk; needs Python 3.11).
    "google_genai": (
        "graphmind-google-genai",
        "google-genai",
        ["3.6", "2.34"],
        ["packages/graphmind-google-genai/tests"],
    ),
    # The newest line (1.62, the release the hooks were read in, is the range's floor).
    "strands": (
        "graphmind-strands",
        "strands-agents",
        ["1.62"],
        ["packages/graphmind-strands/tests"],
    ),
}
# Workspace packages a row's tests use beyond its own (graphmind-litellm's tests use FakeOpenAI).
TEST_PACKAGES = {
    "litellm": ["graphmind-openai"],
    "openai_agents": ["graphmind-openai"],
    "pydantic_ai": ["graphmind-openai"],
    "claude_agent_sdk": ["graphmind-anthropic"],
    "strands": ["graphmind-openai"],
}
TEST_DEPS = [
    "pytest>=8",
    "pytest-asyncio>=0.24",
    "pytest-timeout>=2.3",
    "pytest-xdist>=3.6",
    "httpx>=0.27",
    "respx>=0.22",
]  # xdist: the root conftest.py implements its hook


def _install_workspace(session: nox.Session, *packages: str) -> None:
    session.install(*[f"-e{ROOT / 'packages' / p}" for p in packages])


@nox.session
def tests(session: nox.Session) -> None:
    session.run("uv", "sync", "--all-packages", "--quiet", external=True)
    session.run("uv", "run", "pytest", *session.posargs, external=True)


@nox.session(venv_backend="none")
def lint(session: nox.Session) -> None:
    """What CI checks before the tests: lint rules, formatting, and strict types on every package's
    src (the files are named in pyproject.toml's [tool.mypy])."""
    session.run("uv", "run", "--quiet", "ruff", "check", ".", external=True)
    session.run("uv", "run", "--quiet", "ruff", "format", "--check", ".", external=True)
    session.run("uv", "run", "--quiet", "mypy", "--strict", external=True)


def _matrix_session(name: str) -> None:
    package, framework, versions, paths = MATRIX[name]

    @nox.session(name=name, tags=["matrix"])
    @nox.parametrize(framework.replace("-", "_"), versions)
    def run(session: nox.Session, **kwargs: str) -> None:
        version = next(iter(kwargs.values()))
        _install_workspace(
            session, "graphmind-core", "graphmind-server", package, *TEST_PACKAGES.get(name, [])
        )
        # One resolution: a later `install("langgraph")` would upgrade langchain-core past the cell's version.
        extra = {"langchain-core": ["langgraph"], "mcp": ["mcp-server-time"]}.get(framework, [])
        session.install(*TEST_DEPS, f"{framework}=={version}.*", *extra)
        session.run(
            "python",
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-o",
            "addopts=--import-mode=importlib -q",
            *paths,
            *session.posargs,
            env={"GRAPHMIND_KIT_FULL": "1"},  # a kit too slow for the default run takes every case here
        )


for _name in MATRIX:
    _matrix_session(_name)


# graphmind-crewai is outside the workspace lock (pyproject.toml, [tool.uv.workspace] exclude):
# CrewAI 1.15 pins openai<3, mcp<2 and pydantic<2.13. Its cells install CrewAI's real pins with
# graphmind-core, graphmind-server and graphmind-openai (its tests' fake provider, which works on
# openai 2.x) from the workspace paths, in one resolution, then type-check the package and run its
# tests there. docs/crewai.md, "Installing".
CREWAI_VERSIONS = ["1.15"]
CREWAI_SUITE_VERSION = "1.15.30"  # the release the hook table was read in (docs/crewai.md)
CREWAI_DEPS = [*TEST_DEPS, "pytest-xdist>=3.6", "anyio>=4", "mypy>=1.10"]


@nox.session(tags=["matrix"])
@nox.parametrize("crewai", CREWAI_VERSIONS)
def crewai(session: nox.Session, crewai: str) -> None:
    packages = ("graphmind-core", "graphmind-server", "graphmind-openai", "graphmind-crewai")
    session.install(*[f"-e{ROOT / 'packages' / p}" for p in packages], *CREWAI_DEPS, f"crewai=={crewai}.*")
    # A cache of its own: the workspace's mypy cache holds mcp 2.x, this environment mcp 1.x.
    cache = str(ROOT / ".nox" / "crewai-mypy-cache")
    session.run("python", "-m", "mypy", "--strict", "--cache-dir", cache, "packages/graphmind-crewai/src")
    session.run(
        "python",
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-o",
        "addopts=--import-mode=importlib -q",
        "-W",
        "ignore::DeprecationWarning",
        "packages/graphmind-crewai/tests",
        *session.posargs,
    )


@nox.session
def crewai_bench(session: nox.Session) -> None:
    """bench/crewai_overhead.py in CrewAI's own environment, next to openinference-instrumentation-crewai."""
    packages = ("graphmind-core", "graphmind-server", "graphmind-openai", "graphmind-crewai")
    session.install(
        *[f"-e{ROOT / 'packages' / p}" for p in packages],
        f"crewai=={CREWAI_VERSIONS[0]}.*",
        "openinference-instrumentation-crewai>=1",
        "opentelemetry-sdk",
    )
    session.run("python", "bench/crewai_overhead.py", *session.posargs)


@nox.session
def huge(session: nox.Session) -> None:
    """The viewer on a 1,000,000-event run (issue 32): a timeline click's detail < 100 ms, an in-run
    search < 300 ms, the open still interactive < 1 s. Prints every figure."""
    session.run("uv", "sync", "--all-packages", "--quiet", external=True)
    session.run(
        "uv",
        "run",
        "pytest",
        "tests/browser/test_cockpit_huge_run.py",
        "-s",
        "-p",
        "no:randomly",
        "-o",
        "timeout=3600",
        *session.posargs,
        env={"GRAPHMIND_HUGE_EVENTS": "1000000"},
        external=True,
    )


@nox.session
def faults(session: nox.Session) -> None:
    """The fault suite at full scale (tests/faults; docs/reliability.md): 10,000 examples per fuzzed
    route, 8,000 events of 500 KB, a 10 s tight loop, 100,000 events before dispose(). Prints every figure."""
    session.run("uv", "sync", "--all-packages", "--quiet", external=True)
    session.run(
        "uv",
        "run",
        "pytest",
        "tests/faults",
        "-s",
        "-o",
        "timeout=3600",
        *session.posargs,
        external=True,
        env={"GRAPHMIND_FAULT_SCALE": "full"},
    )


@nox.session
def wheels(session: nox.Session) -> None:
    """Each wheel, alone (with graphmind-core and its framework), in an empty venv: import, wrap, run detached."""
    dist = ROOT / "dist"
    for path in glob.glob(str(dist / "*")):
        os.remove(path)
    for package in PACKAGES:
        session.run("uv", "build", "--package", package, "--out-dir", str(dist), "--quiet", external=True)
    # graphmind-crewai is outside the workspace (pyproject.toml): built from its directory; its venv
    # resolves CrewAI's own pins (openai<3), as a user's does.
    for package in OUTSIDE_WORKSPACE:
        session.run(
            "uv", "build", str(ROOT / "packages" / package), "--out-dir", str(dist), "--quiet", external=True
        )
    core = glob.glob(str(dist / "graphmind_core-*.whl"))[0]
    for package in [*PACKAGES, *OUTSIDE_WORKSPACE]:
        module = package.replace("-", "_")
        wheel = glob.glob(str(dist / f"{module}-*.whl"))[0]
        venv = ROOT / ".nox" / f"smoke-{package}"
        session.run("uv", "venv", "--quiet", "--clear", str(venv), external=True)
        python = str(venv / "bin" / "python")
        deps = [
            glob.glob(str(dist / f"{dep.replace('-', '_')}-*.whl"))[0] for dep in WHEEL_DEPS.get(package, [])
        ]
        session.run("uv", "pip", "install", "--quiet", "--python", python, core, *deps, wheel, external=True)
        session.run(python, str(ROOT / "scripts" / "smoke" / f"smoke_{module}.py"), external=True)


@nox.session
def phoenix(session: nox.Session) -> None:
    """On demand (not in the default run): a recorded run posted to a local Arize Phoenix opens there
    with every span (`graphmind record --otlp-endpoint`, docs/export.md)."""
    _install_workspace(session, "graphmind-core", "graphmind-server")
    session.install("arize-phoenix", "opentelemetry-proto>=1.27")
    session.run("python", str(ROOT / "scripts" / "phoenix_roundtrip.py"))


# One row per adapter: the framework's distribution, its workspace adapter, what its own suite needs
# (from the suite's dev/test dependency groups; suite_table.py says which tests run and how).
SUITES = {
    "openai": (
        "openai",
        "graphmind-openai",
        [
            "openai[aiohttp,realtime,datalib,bedrock,vertex]",
            "pytest",
            "pytest-asyncio",
            "pytest-xdist",
            "pytest-timeout",
            "inline-snapshot",
            "trio",
            "rich",
            "respx",
            "Pillow",
            "azure-identity",
            "griffe",
            "cryptography",
            "requests",
            "tomli",
        ],
    ),
    "anthropic": (
        "anthropic",
        "graphmind-anthropic",
        [
            "anthropic[aiohttp,vertex,bedrock,webhooks]",
            "pytest",
            "pytest-asyncio",
            "pytest-xdist",
            "pytest-timeout",
            "respx",
            "time-machine",
            "dirty-equals",
            "rich",
            "hypothesis",
            "inline-snapshot",
            "griffe",
            "http-snapshot[httpx]==0.1.9",
            "packaging",
            "httpx2",
            "opentelemetry-sdk",
            "importlib-metadata",
        ],
    ),
    "langchain": (
        "langchain-core",
        "graphmind-langchain",
        [
            "pytest",
            "pytest-asyncio",
            "pytest-xdist",
            "pytest-timeout",
            "freezegun",
            "pytest-mock",
            "syrupy",
            "grandalf",
            "responses",
            "pytest-socket",
            "blockbuster<1.6",
            "numpy",
            "langchain-tests",
            "pytest-benchmark",
        ],
    ),
    # mcp's `dev` group, minus the type checker, linter and coverage; `mcp-example-stories` is the
    # source's own examples/ package (installed from the unpacked source below).
    "mcp": (
        "mcp",
        "graphmind-mcp",
        [
            "mcp[cli]",
            "pydantic-settings>=2.5.2",
            "pytest>=8.4.0",
            "trio>=0.26.2",
            "pytest-xdist>=3.6.1",
            "pytest-examples>=0.0.14",
            "pytest-pretty>=1.2.0",
            "pytest-timeout",
            "inline-snapshot>=0.23.0",
            "dirty-equals>=0.9.0",
            "pillow>=12.0",
            "logfire>=3.0.0",
            "opentelemetry-sdk>=1.39.1",
            "blockbuster>=1.5.27",
        ],
    ),
    # llama-index-core's `dev` group, the parts its unit tests import.
    "llamaindex": (
        "llama-index-core",
        "graphmind-llamaindex",
        [
            "pytest",
            "pytest-asyncio",
            "pytest-mock",
            "pytest-timeout",
            "pytest-xdist",
            "openai",
            "pandas",
            "tree-sitter-language-pack",
            "pypdf",
            "aiohttp",
        ],
    ),
    # The Agents SDK's `dev` group, the parts its runner tests import (suite_table.py names the selection).
    "openai-agents": (
        "openai-agents",
        "graphmind-openai-agents",
        [
            "pytest>=9.0.3",
            "pytest-asyncio",
            "pytest-mock>=3.14.0",
            "pytest-xdist",
            "pytest-timeout",
            "inline-snapshot>=0.20.7",
            "rich>=13.1.0,<15",
            "fastapi>=0.110.0,<1",
            "eval-type-backport>=0.2.2",
            "httpx",  # its runner tests build httpx errors (openai 3 itself sends with httpx2)
        ],
    ),
    # litellm's test dependencies for its mocked unit tests (tests/test_litellm); orjson and backoff
    # are its proxy extra's, which the selected modules import at their top.
    "litellm": (
        "litellm",
        "graphmind-litellm",
        [
            "pytest",
            "pytest-asyncio",
            "pytest-mock",
            "pytest-timeout",
            "pytest-xdist",
            "respx",
            "fastapi",
            "orjson",
            "backoff",
        ],
    ),
    # google-adk's `test` extra, the parts its unit tests import (anthropic, litellm, langgraph and
    # llama-index are the workspace's already; the tests that need others fail bare and are not compared).
    "google_adk": (
        "google-adk",
        "graphmind-google-adk",
        [
            "pytest",
            "pytest-asyncio",
            "pytest-mock",
            "pytest-timeout",
            "pytest-xdist",
            "anthropic",
            "litellm>=1.108,!=1.107.0,<2",
            "langgraph",
            "a2a-sdk",
        ],
    ),
    # pydantic-ai's root `dev` group, the parts the selected tests import (suite_table.py names them).
    "pydantic_ai": (
        "pydantic-ai-slim",
        "graphmind-pydantic-ai",
        [
            "pydantic-ai-slim[openai,anthropic,mcp]",
            "pytest",
            "anyio",
            "pytest-mock",
            "pytest-timeout",
            "pytest-xdist",
            "pytest-recording",
            "inline-snapshot",
            "dirty-equals",
            "httpx",
            "httpx2",
            "vcrpy",
            "devtools",
            "blockbuster>=1.5.26,<1.6",
        ],
    ),
    # claude-agent-sdk's `dev` extra, the parts its tests import.
    "claude_agent_sdk": (
        "claude-agent-sdk",
        "graphmind-claude-agent-sdk",
        ["anyio[trio]", "pytest", "pytest-asyncio", "pytest-timeout", "pytest-xdist"],
    ),
    # google-genai's tests ship in its wheel; what its AFC tests import beyond the SDK.
    "google_genai": (
        "google-genai",
        "graphmind-google-genai",
        ["pytest", "pytest-asyncio", "pytest-mock", "pytest-timeout", "pytest-xdist", "mcp"],
    ),
    # strands-agents' hatch-test dependencies, the parts its unit tests import; openai (3, beside
    # the workspace) and litellm for tests/strands/models/test_openai.py and test_litellm.py, anthropic
    # for test_anthropic.py. Its mcp<2.2 pin is kept here (the suite's own range; the workspace
    # overrides it, docs/strands.md).
    "strands": (
        "strands-agents",
        "graphmind-strands",
        [
            "pytest>=9,<10",
            "pytest-asyncio>=1,<1.5",
            "pytest-timeout",
            "pytest-xdist",
            "moto>=5.1,<6",
            "openai>=3",
            "aws-bedrock-token-generator",
            "anthropic<1",
            "litellm>=1.108,!=1.107.0,<2",
        ],
    ),
    # crewai's `dev` group, the parts the selected tests import (suite_table.py names the selection).
    # Not in the workspace's lock: its version is CREWAI_VERSIONS' newest installed (docs/crewai.md).
    "crewai": (
        "crewai",
        "graphmind-crewai",
        [
            "pytest",
            "pytest-asyncio",
            "pytest-xdist",
            "pytest-timeout",
            "pytest-subprocess",
            "pytest-recording",
            "vcrpy==8.2.1",
            "aiohttp",
            "python-dotenv",
        ],
    ),
}
# The source package's own directory that holds its tests, installed into the session first.
SUITE_LOCAL_PACKAGES = {"mcp": ["examples"]}
# Frameworks whose source distribution ships no tests (llama-index-core's sdist holds the package
# only; litellm's also needs a Rust toolchain to build its metadata): the tests come from the
# framework's repository at the locked version, a directory named by GRAPHMIND_SUITE_TESTS whose
# tests/ is copied to .nox/suite-src/<dist>-<version>-tests and run against the installed
# package. docs/compatibility.md says how (and which commits the figures used);
# scripts/suites/tests_dir.py writes such a directory from a local git copy of the repository.
# google-adk's sdist ships the package only too.
TESTS_ELSEWHERE = {"llama-index-core", "litellm", "google-adk", "pydantic-ai-slim", "crewai"}
# Frameworks whose wheel ships their tests inside the package (google/genai/tests): they run from the
# session's own site-packages, where a pytest.ini makes it the rootdir (and not this repository).
TESTS_IN_WHEEL = {"google-genai"}
TESTS_FROM_ENV = "GRAPHMIND_SUITE_TESTS"


def _locked_version(distribution: str) -> str:
    import tomllib

    if distribution == "crewai":  # outside the workspace's lock (pyproject.toml): the version its cells read
        return CREWAI_SUITE_VERSION

    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    versions = [p["version"] for p in lock["package"] if p["name"] == distribution]  # a fork may lock two
    return max(versions, key=lambda v: tuple(int(x) if x.isdigit() else 0 for x in v.split(".")))


def _suite_source(session: nox.Session, distribution: str, version: str) -> pathlib.Path:
    """The unpacked source distribution (cached in .nox/suite-src); for a framework whose source
    distribution ships no tests, a directory of the tests alone (they import the installed package)."""
    import shutil

    src_root = ROOT / ".nox" / "suite-src"
    stem = f"{distribution.replace('-', '_')}-{version}"
    if distribution in TESTS_IN_WHEEL:
        site = session.run(
            "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", silent=True
        )
        src = pathlib.Path(str(site).strip())
        (src / "pytest.ini").write_text("[pytest]\n")
        return src
    if distribution in TESTS_ELSEWHERE:
        tests = pathlib.Path(os.environ.get(TESTS_FROM_ENV, "")) / "tests"
        if not os.environ.get(TESTS_FROM_ENV) or not tests.is_dir():
            session.error(
                f"{distribution} {version}'s source distribution ships no tests: set {TESTS_FROM_ENV} to a "
                f"directory holding its tests/ from the repository at that version (docs/compatibility.md)"
            )
        src = src_root / f"{stem}-tests"
        shutil.rmtree(src, ignore_errors=True)
        shutil.copytree(tests, src / "tests")
        # The framework's own pytest configuration when given; else an empty one, which stops
        # pytest's search for one at the source dir (it would find this repository's pyproject.toml).
        configs = [c for c in ("pyproject.toml", "pytest.ini", "setup.cfg") if (tests.parent / c).is_file()]
        for config in configs:
            shutil.copy(tests.parent / config, src / config)
        if not configs:
            (src / "pytest.ini").write_text("[pytest]\n")
        return src
    src = src_root / stem
    if not src.is_dir():
        src_root.mkdir(parents=True, exist_ok=True)
        session.run(
            "python",
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-binary",
            ":all:",
            "--no-deps",
            f"{distribution}=={version}",
            "-d",
            str(src_root),
        )
        archive = next(src_root.glob(f"{stem}.tar.gz"))
        session.run("tar", "-xzf", str(archive), "-C", str(src_root), external=True)
    return src


@nox.session(tags=["suites"])
@nox.parametrize("framework", list(SUITES))
def suite(session: nox.Session, framework: str) -> None:
    """On demand (slow, not in the default run): the framework's own offline test suite, from its source
    package at the version in uv.lock, run bare, then with every client instrumented detached and
    attached to a real hub (scripts/suites/run_suite.py); fails, in one line, if a test that passes bare
    does not, never ran (a crashed worker), or if any gate held attached (scripts/suites/judge.py)."""
    distribution, adapter, deps = SUITES[framework]
    version = _locked_version(distribution)
    # Copies, not uv's default hard links into its cache: nltk (llama-index-core's text splitters)
    # refuses to open a data file with more than one link (nltk/pathsec.py, "refusing
    # multiply-linked file"), so with links the tests that load its stopwords or punkt pass or
    # fail by which test loaded them first in the worker, and the three runs differ by xdist's split.
    session.env["UV_LINK_MODE"] = "copy"
    if framework == "crewai":  # one resolution: CrewAI's pins (openai<3) decide, graphmind-openai follows
        session.install(
            *[f"-e{ROOT / 'packages' / p}" for p in ("graphmind-core", "graphmind-server", adapter)],
            "pip",
            *deps,
            f"{distribution}=={version}",
        )
    else:
        _install_workspace(
            session, "graphmind-core", "graphmind-server", *WHEEL_DEPS.get(adapter, []), adapter
        )
        session.install("pip", *deps, f"{distribution}=={version}")
    src = _suite_source(session, distribution, version)
    for local in SUITE_LOCAL_PACKAGES.get(framework, []):
        session.install("--no-deps", "-e", str(src / local))
    session.run(
        "python", str(ROOT / "scripts" / "suites" / "run_suite.py"), framework, str(src), *session.posargs
    )
