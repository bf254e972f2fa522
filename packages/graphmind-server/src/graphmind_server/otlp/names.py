"""The one table of OTLP attribute names the hub writes (`graphmind record --format otlp`, the
forwarder) and reads (`POST /v1/traces`), with the conventions they follow.

- OpenInference semantic conventions, as in openinference-semantic-conventions 0.1.x
  (https://github.com/Arize-ai/openinference/blob/main/spec/semantic_conventions.md).
- OpenTelemetry GenAI semantic conventions 1.37 (`gen_ai.*`, development status; the message
  attributes `gen_ai.input.messages` / `gen_ai.output.messages` are JSON texts of role + parts)
  (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/), reading the older
  `gen_ai.prompt` / `gen_ai.completion` and `gen_ai.usage.prompt_tokens` spellings too.
- `graphmind.*`: ours, so a GraphMind run exported and posted back keeps its node ids and kinds.
"""

from __future__ import annotations

OPENINFERENCE_VERSION = "openinference-semantic-conventions 0.1"
GENAI_VERSION = "OpenTelemetry semantic conventions 1.37 (gen_ai, development)"

# -- OpenInference -------------------------------------------------------------------------------
SPAN_KIND = "openinference.span.kind"
INPUT_VALUE = "input.value"
INPUT_MIME = "input.mime_type"
OUTPUT_VALUE = "output.value"
OUTPUT_MIME = "output.mime_type"
METADATA = "metadata"
LLM_MODEL = "llm.model_name"
LLM_PROVIDER = "llm.provider"
LLM_SYSTEM = "llm.system"
LLM_INPUT_MESSAGES = "llm.input_messages"  # .{i}.message.role / .content / .tool_calls.{j}.tool_call.…
LLM_OUTPUT_MESSAGES = "llm.output_messages"
LLM_TOOLS = "llm.tools"  # .{i}.tool.json_schema
LLM_INVOCATION_PARAMETERS = "llm.invocation_parameters"
LLM_FINISH_REASON = "llm.finish_reason"
TOKENS_PROMPT = "llm.token_count.prompt"
TOKENS_COMPLETION = "llm.token_count.completion"
TOKENS_TOTAL = "llm.token_count.total"
TOKENS_CACHE_READ = "llm.token_count.prompt_details.cache_read"
COST_TOTAL = "llm.cost.total"
COST_PROMPT = "llm.cost.prompt"
COST_COMPLETION = "llm.cost.completion"
TOOL_NAME = "tool.name"
TOOL_CALL_ID = "tool_call.id"
TOOL_CALL_NAME = "tool_call.function.name"
TOOL_CALL_ARGUMENTS = "tool_call.function.arguments"
AGENT_NAME = "agent.name"
SESSION_ID = "session.id"
# Inside one message (after the `llm.input_messages.{i}.` prefix).
MESSAGE_ROLE = "message.role"
MESSAGE_CONTENT = "message.content"
MESSAGE_CONTENTS = "message.contents"  # .{k}.message_content.type / .text
MESSAGE_NAME = "message.name"
MESSAGE_TOOL_CALL_ID = "message.tool_call_id"
MESSAGE_TOOL_CALLS = "message.tool_calls"  # .{j}.tool_call.id / .function.name / .function.arguments

# Our node kinds → openinference.span.kind (a kind the app made up goes out as CHAIN).
OPENINFERENCE_KIND = {
    "llm": "LLM",
    "tool": "TOOL",
    "agent": "AGENT",
    "retriever": "RETRIEVER",
    "chain": "CHAIN",
    "embedding": "EMBEDDING",
    "reranker": "RERANKER",
    "guardrail": "GUARDRAIL",
}
# openinference.span.kind → our node kind (EVALUATOR, PROMPT, UNKNOWN and anything newer: custom).
NODE_KIND = {theirs: ours for ours, theirs in OPENINFERENCE_KIND.items()}

# -- OTel GenAI ----------------------------------------------------------------------------------
GENAI_OPERATION = "gen_ai.operation.name"
GENAI_PROVIDER = "gen_ai.provider.name"
GENAI_SYSTEM = "gen_ai.system"  # before 1.37
GENAI_REQUEST_MODEL = "gen_ai.request.model"
GENAI_RESPONSE_MODEL = "gen_ai.response.model"
GENAI_INPUT_TOKENS = "gen_ai.usage.input_tokens"
GENAI_OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
GENAI_PROMPT_TOKENS = "gen_ai.usage.prompt_tokens"  # before 1.27
GENAI_COMPLETION_TOKENS = "gen_ai.usage.completion_tokens"  # before 1.27
GENAI_INPUT_MESSAGES = "gen_ai.input.messages"
GENAI_OUTPUT_MESSAGES = "gen_ai.output.messages"
GENAI_SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
GENAI_PROMPT = "gen_ai.prompt"  # before 1.37: a JSON text of messages
GENAI_COMPLETION = "gen_ai.completion"
GENAI_FINISH_REASONS = "gen_ai.response.finish_reasons"
GENAI_TOOL_NAME = "gen_ai.tool.name"
GENAI_TOOL_CALL_ID = "gen_ai.tool.call.id"
GENAI_TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
GENAI_TOOL_RESULT = "gen_ai.tool.call.result"
GENAI_AGENT_NAME = "gen_ai.agent.name"
GENAI_COST = "gen_ai.usage.cost"  # not in the conventions; OpenLLMetry and others write it
ERROR_TYPE = "error.type"
# gen_ai.operation.name → our node kind.
GENAI_KIND = {
    "chat": "llm",
    "text_completion": "llm",
    "generate_content": "llm",
    "execute_tool": "tool",
    "invoke_agent": "agent",
    "create_agent": "agent",
    "embeddings": "embedding",
    "retrieval": "retriever",
}

# -- OpenLLMetry (traceloop), before it wrote gen_ai.operation.name -----------------------------------
TRACELOOP_KIND = "traceloop.span.kind"
TRACELOOP_ENTITY = "traceloop.entity.name"
LLM_REQUEST_TYPE = "llm.request.type"
TRACELOOP_KINDS = {"workflow": "chain", "task": "chain", "agent": "agent", "tool": "tool"}
REQUEST_TYPES = {"chat": "llm", "completion": "llm", "embedding": "embedding", "rerank": "reranker"}

# -- OTel general --------------------------------------------------------------------------------
SERVICE_NAME = "service.name"
EXCEPTION_EVENT = "exception"
EXCEPTION_TYPE = "exception.type"
EXCEPTION_MESSAGE = "exception.message"
EXCEPTION_STACKTRACE = "exception.stacktrace"

# -- ours ----------------------------------------------------------------------------------------
GM_RUN_ID = "graphmind.run_id"
GM_STATUS = "graphmind.status"
GM_CLIENT_ID = "graphmind.client_id"
GM_NODE_ID = "graphmind.node_id"
GM_INSTANCE_ID = "graphmind.instance_id"
GM_KIND = "graphmind.kind"
GM_ATTRS = "graphmind.attrs"
GM_HELD_MS = "graphmind.held_ms"
GM_INJECTED = "graphmind.injected"
GM_CUT_SHORT = "graphmind.cut_short"
GM_UNFINISHED = "graphmind.unfinished"
GM_GATE_HELD = "graphmind.gate.held"
GM_GATE_ANSWERED = "graphmind.gate.answered"
GM_GATE = "graphmind.gate"
GM_REASON = "graphmind.reason"
GM_GATE_ID = "graphmind.gate_id"
GM_ACTION = "graphmind.action"
GM_BY = "graphmind.by"

# The GraphMind adapter that would add gates to what an instrumentation scope observes: the
# viewer names it on an observe-only run. Matched on the scope name's last dotted part.
GATED_BY = {
    "openai": "graphmind-openai",
    "anthropic": "graphmind-anthropic",
    "langchain": "graphmind-langchain",
    "langgraph": "graphmind-langchain",
    "llama_index": "graphmind-llamaindex",
    "llamaindex": "graphmind-llamaindex",
    "litellm": "graphmind-litellm",
    "mcp": "graphmind-mcp",
}
