"""Offline LlamaIndex fakes for tests, examples and benchmarks: no network, no model download.

- `ScriptedFunctionCallingLLM`: a real `FunctionCallingLLM` that answers from a script, so a
  `FunctionAgent` runs exactly as with a provider (tool calls are `ToolCallBlock`s, the form
  llama-index-core 0.14 reads in `get_tool_calls_from_response`).
- `HashEmbedding`: a deterministic bag-of-words embedding, so a `VectorStoreIndex` over a few
  documents retrieves by word overlap with real scores.
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections.abc import AsyncGenerator, Generator, Sequence
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    LLMMetadata,
    MessageRole,
    TextBlock,
    ToolCallBlock,
)
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import ToolSelection

Reply = Any  # str | {"content", "tool_calls": [{"id", "name", "arguments"}]} | BaseException

__all__ = ["HashEmbedding", "ScriptedFunctionCallingLLM", "tool_call"]


def tool_call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    """One scripted tool call: `tool_call("search", "call_1", query="x")`."""
    return {"id": call_id, "name": name, "arguments": arguments}


def _message(reply: Reply) -> ChatMessage:
    if isinstance(reply, str):
        return ChatMessage(role=MessageRole.ASSISTANT, content=reply)
    if not isinstance(reply, dict):
        raise TypeError(f"a scripted reply is a string, a dict or an exception, got {type(reply).__name__}")
    blocks: list[Any] = []
    if reply.get("content"):
        blocks.append(TextBlock(text=reply["content"]))
    for call in reply.get("tool_calls") or []:
        blocks.append(
            ToolCallBlock(
                tool_call_id=call["id"], tool_name=call["name"], tool_kwargs=call.get("arguments", {})
            )
        )
    return ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)


class ScriptedFunctionCallingLLM(FunctionCallingLLM):
    """Answers each chat call with the next scripted reply (a string, a dict with `content` and
    `tool_calls`, or an exception to raise); after the script, `default` (if set) answers.

    `usage` is put in `raw` as OpenAI reports it, so token usage shows up like a provider's.
    `chunk_size`: a streamed reply's text arrives in pieces of this many characters.
    """

    model: str = "scripted"
    default: Any = None
    usage: dict[str, int] | None = None
    chunk_size: int = 4
    _script: list[Reply] = PrivateAttr(default_factory=list)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _calls: list[list[ChatMessage]] = PrivateAttr(default_factory=list)

    def __init__(self, replies: Sequence[Reply] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._script = list(replies)

    @classmethod
    def class_name(cls) -> str:
        return "ScriptedFunctionCallingLLM"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name=self.model, is_chat_model=True, is_function_calling_model=True)

    @property
    def calls(self) -> list[list[ChatMessage]]:
        """The messages of every call the script answered (the body ran), oldest first."""
        return self._calls

    def add(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def _next(self, messages: Sequence[ChatMessage]) -> ChatResponse:
        with self._lock:
            self._calls.append(list(messages))
            if self._script:
                reply = self._script.pop(0)
            elif self.default is not None:
                reply = self.default
            else:
                raise RuntimeError("ScriptedFunctionCallingLLM: the script has no reply left for this call")
        if isinstance(reply, BaseException):
            raise reply
        message = _message(reply)
        raw = {"model": self.model, "usage": dict(self.usage)} if self.usage else {"model": self.model}
        return ChatResponse(message=message, raw=raw, delta=message.content or None)

    def _chunks(self, response: ChatResponse) -> list[ChatResponse]:
        text = response.message.content or ""
        calls = [b for b in response.message.blocks if isinstance(b, ToolCallBlock)]
        pieces = [text[i : i + self.chunk_size] for i in range(0, len(text), self.chunk_size)] or [""]
        out: list[ChatResponse] = []
        so_far = ""
        for index, piece in enumerate(pieces):
            so_far += piece
            last = index == len(pieces) - 1
            blocks: list[Any] = [TextBlock(text=so_far)] if so_far else []
            if last:
                blocks.extend(calls)
            message = ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks)
            out.append(ChatResponse(message=message, delta=piece, raw=response.raw if last else None))
        return out

    # ---- chat -------------------------------------------------------------------------------
    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._next(messages)

    @llm_chat_callback()
    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._next(messages)

    @llm_chat_callback()
    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        response = self._next(messages)

        def gen() -> Generator[ChatResponse, None, None]:
            yield from self._chunks(response)

        return gen()

    @llm_chat_callback()
    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseAsyncGen:
        response = self._next(messages)

        async def gen() -> AsyncGenerator[ChatResponse, None]:
            for chunk in self._chunks(response):
                yield chunk

        return gen()

    # ---- completion (a prompt is one user message) ---------------------------------------------
    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(
            text=self._next([ChatMessage(role="user", content=prompt)]).message.content or ""
        )

    @llm_completion_callback()
    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        response: CompletionResponse = self.complete(prompt, formatted, **kwargs)
        return response

    @llm_completion_callback()
    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponseGen:
        text = self.complete(prompt, formatted, **kwargs).text

        def gen() -> Generator[CompletionResponse, None, None]:
            yield CompletionResponse(text=text, delta=text)

        return gen()

    @llm_completion_callback()
    async def astream_complete(
        self, prompt: str, formatted: bool = False, **kwargs: Any
    ) -> CompletionResponseAsyncGen:
        text = self.complete(prompt, formatted, **kwargs).text

        async def gen() -> AsyncGenerator[CompletionResponse, None]:
            yield CompletionResponse(text=text, delta=text)

        return gen()

    # ---- function calling -------------------------------------------------------------------
    def _prepare_chat_with_tools(
        self,
        tools: Sequence[Any],
        user_msg: str | ChatMessage | None = None,
        chat_history: list[ChatMessage] | None = None,
        verbose: bool = False,
        allow_parallel_tool_calls: bool = False,
        tool_required: bool = False,
        **kwargs: Any,
    ) -> dict[str, Any]:
        messages = list(chat_history or [])
        if user_msg is not None:
            messages.append(
                ChatMessage(role="user", content=user_msg) if isinstance(user_msg, str) else user_msg
            )
        specs = [t.metadata.to_openai_tool() for t in tools]
        return {"messages": messages, "tools": specs, **kwargs}

    def get_tool_calls_from_response(
        self, response: ChatResponse, error_on_no_tool_call: bool = True, **kwargs: Any
    ) -> list[ToolSelection]:
        calls = [b for b in response.message.blocks if isinstance(b, ToolCallBlock)]
        if not calls and error_on_no_tool_call:
            raise ValueError(f"expected at least one tool call, got {len(calls)}")
        return [
            ToolSelection(
                tool_id=c.tool_call_id or "",
                tool_name=c.tool_name,
                tool_kwargs=c.tool_kwargs if isinstance(c.tool_kwargs, dict) else {},
            )
            for c in calls
        ]


_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedding(BaseEmbedding):
    """A bag-of-words vector (each word hashed into one of `dim` buckets), normalised."""

    dim: int = 64
    model_name: str = "hash-embedding"

    @classmethod
    def class_name(cls) -> str:
        return "HashEmbedding"

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self.dim
        for word in _WORD.findall(text.lower()):
            vec[int.from_bytes(hashlib.blake2b(word.encode(), digest_size=4).digest(), "big") % self.dim] += (
                1.0
            )
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return [v / norm for v in vec]

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._vector(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)

    async def _aget_text_embedding(self, text: str) -> list[float]:
        return self._vector(text)
