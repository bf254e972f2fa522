"""Which tests of each framework run_suite.py runs, and how (one row per suite), and the tests that
differ instrumented by design.

A row: `plugin` (the `-p` pytest plugin that instruments the framework in the instrumented runs),
`args` (pytest's arguments; the first is the suite's root, replaced by `paths` when given, and by
the test paths named on the command line), `paths` (a selection; globs expanded in the source
dir), `env` (set in all three runs alike), `leaks` (names a suite leaves in the system's temp dir:
its runs get a TMPDIR of their own, and such a file appearing there fails the run).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

SUITES: dict[str, dict[str, Any]] = {
    "openai": {
        "plugin": "gm_suite_openai",
        # tests/api_resources talk to the SDK's Prism mock server (TEST_API_BASE_URL, port 4010).
        "args": [
            "tests",
            "--ignore=tests/api_resources",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "-o",
            "addopts=",
            "--timeout=120",
        ],
    },
    "anthropic": {
        "plugin": "gm_suite_anthropic",
        # Like openai's: tests/api_resources need the Prism mock server; its addopts loads a needed plugin.
        "args": [
            "tests",
            "--ignore=tests/api_resources",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "-o",
            "addopts=-p tests._alias_httpx",
            "--timeout=120",
        ],
    },
    "langchain": {
        "plugin": "gm_suite_langchain",
        # The Makefile's --disable-socket would also stop GraphMind's own connection to the hub.
        "args": ["tests/unit_tests", "-p", "no:cacheprovider", "-n", "2", "-q", "--timeout=120"],
    },
    "mcp": {
        "plugin": "gm_suite_mcp",
        # The whole suite: every test is offline (in-memory transports, loopback servers). Its
        # addopts without --color (a file, not a terminal); -p anyio / -p examples load its plugins.
        "args": [
            "tests",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "-o",
            "addopts=--capture=fd -p anyio -p examples",
            "--timeout=120",
        ],
    },
    "llamaindex": {
        "plugin": "gm_suite_llamaindex",
        # The whole of llama-index-core's tests/ (`make test`), all offline (MockLLM, MockEmbedding,
        # in-memory stores); `integration`-marked ones are skipped by its conftest unless --integration.
        # A test module that cannot be imported against the installed release (tests from another
        # version, docs/compatibility.md) fails bare and is not compared, instead of stopping the run.
        "args": [
            "tests",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "--timeout=120",
            "--continue-on-collection-errors",
        ],
    },
    "openai-agents": {
        "plugin": "gm_suite_openai_agents",
        # A selection (the "paths" below replace "tests"): the runner, streamed and sync runs,
        # agents as tools, function tools, guardrails, handoffs, hooks, cancellation, max turns,
        # tool-use behaviour, step execution and the SDK's own tracing of runs. The SDK's fake models
        # (tests/fake_model.py) are the models gated. The rest of tests/ covers realtime, voice,
        # sandboxes, memory backends and MCP servers, none of which this adapter hooks.
        "paths": [
            "tests/test_agent_runner.py",
            "tests/test_agent_runner_streamed.py",
            "tests/test_agent_runner_sync.py",
            "tests/test_agent_as_tool.py",
            "tests/test_function_tool.py",
            "tests/test_function_tool_decorator.py",
            "tests/test_guardrails.py",
            "tests/test_tool_guardrails.py",
            "tests/test_handoff_tool.py",
            "tests/test_global_hooks.py",
            "tests/test_agent_hooks.py",
            "tests/test_run_hooks.py",
            "tests/test_cancel_streaming.py",
            "tests/test_max_turns.py",
            "tests/test_tool_use_behavior.py",
            "tests/test_run_step_execution.py",
            "tests/test_agent_tracing.py",
        ],
        "args": ["tests", "-p", "no:cacheprovider", "-n", "2", "-q", "--timeout=120"],
    },
    "litellm": {
        "plugin": "gm_suite_litellm",
        # In every run, as litellm's CI sets it: else each process fetches the model cost map at
        # import (no network here: three attempts and their back-off sleeps, about 7 s).
        "env": {"LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        # A selection of tests/test_litellm (the offline unit tests, `make test-unit`; the rest of
        # tests/ calls real providers): the tests that go through the functions the adapter gates
        # (`completion` / `acompletion` with mocked clients or `mock_response`, the router, the
        # responses API, the bridge between them) and the OpenAI and Anthropic provider tests.
        # Globs are expanded in the source dir. Not the proxy's (a server with its own database),
        # the other providers' (thousands of request-shape tests that never reach
        # `litellm.completion`), nor the import-time tests that start a Python process per test
        # (test_eager_tiktoken_load.py, test_lazy_imports.py: 30 minutes a run on 2 cores).
        "paths": [
            "tests/test_litellm/test_main.py",
            "tests/test_litellm/test_router*.py",
            "tests/test_litellm/test_responses_api_bridge_non_stream.py",
            "tests/test_litellm/test_acompletion_session_reuse_e2e.py",
            "tests/test_litellm/test_shared_session_integration.py",
            "tests/test_litellm/test_exception_*.py",
            "tests/test_litellm/test_nested_drop_params.py",
            "tests/test_litellm/responses",
            "tests/test_litellm/llms/openai",
            "tests/test_litellm/llms/anthropic",
        ],
        "args": [
            "tests/test_litellm",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "--timeout=120",
            "--continue-on-collection-errors",
        ],
    },
    "google_adk": {
        "plugin": "gm_suite_google_adk",
        # tests/unittests: offline (mock models, in-memory services); tests/integration call Gemini.
        "args": ["tests/unittests", "-p", "no:cacheprovider", "-n", "2", "-q", "--timeout=120"],
    },
    "pydantic_ai": {
        "plugin": "gm_suite_pydantic_ai",
        # Its blocking-call detector off, as its CI runs every lane but one (its conftest's
        # `blockbuster` fixture); in all three runs alike.
        "env": {"BLOCKBUSTER_ENABLED": "false"},
        # A selection (docs/compatibility.md; the "paths" below replace "tests"): agents over
        # FunctionModel / TestModel with tools, deferred tools, streams, history processors,
        # concurrency limits, cancellation, nested sync runs, capabilities' event streams and
        # teardown, output schemas. Its warning filters as its pyproject.toml sets them.
        "paths": [
            "tests/test_tools.py",
            "tests/test_streaming.py",
            "tests/test_history_processor.py",
            "tests/test_concurrency.py",
            "tests/test_run_cancellation.py",
            "tests/test_nested_sync_agent.py",
            "tests/test_capability_process_event_stream.py",
            "tests/test_capability_stream_teardown.py",
            "tests/test_agent_output_schemas.py",
        ],
        # 60 s, not 120: its tests take milliseconds.
        "args": ["tests", "-p", "no:cacheprovider", "-n", "2", "-q", "--timeout=60"],
    },
    "claude_agent_sdk": {
        "plugin": "gm_suite_claude_agent_sdk",
        # Its whole offline suite: mock transports, and the bundled CLI where a test starts it. Left
        # out: the session-store examples that need Postgres, Redis or S3, and the changelog check
        # (the source distribution ships no CHANGELOG.md).
        "args": [
            "tests",
            "--ignore=tests/test_example_postgres_session_store.py",
            "--ignore=tests/test_example_redis_session_store.py",
            "--ignore=tests/test_example_redis_session_store_live.py",
            "--ignore=tests/test_example_s3_session_store.py",
            "--ignore=tests/test_example_s3_session_store_live.py",
            "--deselect=tests/test_changelog.py",
            # Its fake CLI answers only once stdin is closed, and the SDK keeps stdin open until the
            # first result whenever hooks are registered (its own TestNoTimeoutForHooksAndMcpServers):
            # instrumented (GraphMind registers hooks) the two wait on each other. A real CLI sends
            # its result with stdin open, so apps are unaffected (docs/claude-agent-sdk.md).
            "--deselect=tests/test_streaming_client.py::TestQueryWithAsyncIterable::test_query_with_async_iterable",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "-o",
            "addopts=--import-mode=importlib -p anyio",
            "--timeout=120",
        ],
    },
    "google_genai": {
        "plugin": "gm_suite_google_genai",
        # The SDK's tests ship in its wheel (google/genai/tests) and run from the session's
        # site-packages (noxfile.py, TESTS_IN_WHEEL). Its conftest records against the real API
        # when no replay file exists (`--mode auto`): `--mode replay` keeps every run offline (a test
        # with no replay file fails bare and is not compared). The AFC tests: models over a mocked
        # API client, the function map, argument conversion, the AFC loops (sync, async, streams).
        "env": {"GOOGLE_GENAI_REPLAYS_DIRECTORY": ".", "GOOGLE_API_KEY": "test-key"},
        "paths": ["google/genai/tests/afc"],
        "args": [
            "google/genai/tests",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "-o",
            "addopts=",
            "-o",
            "consider_namespace_packages=true",
            "--mode",
            "replay",
            "--timeout=60",
        ],
    },
    "strands": {
        "plugin": "gm_suite_strands",
        # Its BM25 index goes beside the storage directory (`.__strands_<dir>-fts5.sqlite`,
        # strands/storage/search/bm25.py), so test_bm25.py's TemporaryDirectory() left one in /tmp
        # per test: the run gets a TMPDIR of its own, and a file of these names in the system's
        # temp dir after it fails the run (run_suite.py, `leaks`).
        "leaks": [".__strands_*-fts5.sqlite"],
        # tests/strands, the unit tests its sdist ships (tests_integ call Bedrock and other providers).
        # Left out: the modules whose optional providers or extras the session does not install
        # (a2a, cedar, gemini, llama-api, mistral, ollama, sagemaker, writer, web fetch, the OTLP
        # exporter) and the bidirectional-streaming tests (audio devices, Python 3.12+ extras).
        "args": [
            "tests/strands",
            "--ignore=tests/strands/bidi",
            "--ignore=tests/strands/experimental/bidi",
            "--ignore=tests/strands/agent/test_a2a_agent.py",
            "--ignore=tests/strands/multiagent/a2a",
            "--ignore=tests/strands/models/test_gemini.py",
            "--ignore=tests/strands/models/test_llamaapi.py",
            "--ignore=tests/strands/models/test_mistral.py",
            "--ignore=tests/strands/models/test_ollama.py",
            "--ignore=tests/strands/models/test_sagemaker.py",
            "--ignore=tests/strands/models/test_writer.py",
            "--ignore=tests/strands/telemetry/test_config.py",
            "--ignore=tests/strands/vended_interventions/cedar",
            "--ignore=tests/strands/vended_plugins/context_injector/test_integration.py",
            "--ignore=tests/strands/vended_tools/test_a2a_client.py",
            "--ignore=tests/strands/vended_tools/test_web_fetch.py",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-q",
            "-o",
            "addopts=",
            "--timeout=120",
        ],
    },
}

# crewai: the tests import CrewAI, which writes under ~/.config and ~/.local at import: a HOME of
# their own, the same in all three runs; its telemetry off (CrewAI's CI sets the same).
SUITES["crewai"] = {
    "plugin": "gm_suite_crewai",
    "env": {
        "HOME": os.path.join(tempfile.gettempdir(), "graphmind-suite-crewai-home"),
        "CREWAI_DISABLE_TELEMETRY": "true",
        "CREWAI_TRACING_ENABLED": "false",
    },
    # A selection (docs/compatibility.md): the hooks (CrewAI's own before/after model and tool
    # hooks, which the adapter's rows sit next to), the tools (BaseTool.run, @tool, structured tools,
    # usage limits, failures, coworker tools) and the native tool calling of an agent's executor,
    # each from VCR cassettes (`--block-network`: nothing leaves the machine).
    "paths": [
        "tests/lib/crewai/tests/hooks",
        "tests/lib/crewai/tests/tools",
        "tests/lib/crewai/tests/agents/test_native_tool_calling.py",
        "tests/lib/crewai/tests/agents/test_lite_agent.py",
    ],
    # Its pyproject's `--block-network` (pytest-recording) would refuse the GraphMind client's
    # loopback connection to the hub: loopback allowed, in all three runs alike.
    "args": [
        "tests",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "-n",
        "2",
        "-q",
        "--timeout=120",
        "--allowed-hosts=127.0.0.1,localhost",
    ],
}

# Tests that differ instrumented by design, each named with why in docs/compatibility.md. Loop
# holds are not among them: the instrumented runs warn instead (ON_LOOP), and the tests whose
# calls would have been held are listed from the warnings.
EXPECTED_DIFFERENT: dict[str, set[str]] = {
    "mcp": set(),
    "llamaindex": set(),
    "litellm": set(),
    "openai-agents": set(),
    "openai": set(),
    "anthropic": set(),
    "google_adk": set(),
    "claude_agent_sdk": {
        # It asserts the transport got the very options object the app made; GraphMind hands it a
        # copy with its hooks and model gate added (the app's own object is never changed).
        "tests.test_streaming_client.TestClaudeSDKClientStreaming::test_client_with_options[asyncio]",
        "tests.test_streaming_client.TestClaudeSDKClientStreaming::test_client_with_options[trio]",
    },
    "google_genai": set(),
    "strands": set(),
    "langchain": {
        # `trace_as_chain_group`'s manager is configured, so it holds the hook's handler too: `len == 1` fails.
        "tests.unit_tests.runnables.test_config::test_merge_config_callbacks",
    },
    "crewai": set(),
    "pydantic_ai": {
        # It replaces the agent's private root capability with its own and asserts that capability's
        # `wrap_run_event_stream` is what the run calls; a run capability (ours, or any other given
        # to `agent.iter(capabilities=...)`, bare) combines with it and is dispatched leaf by leaf.
        "tests.test_capability_stream_teardown::test_agent_stream_closes_custom_async_iterator",
    },
}
