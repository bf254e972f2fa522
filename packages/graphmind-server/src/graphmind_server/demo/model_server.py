"""The scripted model on loopback: an OpenAI-compatible `/v1/chat/completions` (JSON and SSE).

A `ThreadingHTTPServer` on 127.0.0.1 with an ephemeral port, answering with whatever `reply(messages)`
returns, so the demo's agent talks to it through the real OpenAI SDK with no key and no network.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[[list[dict[str, Any]]], dict[str, Any]]


class ScriptedModel:
    def __init__(self, reply: Reply, model: str = "scripted-travel-model") -> None:
        self._reply = reply
        self.model = model
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep the demo's terminal readable
                pass

            def do_POST(self) -> None:
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"the scripted model serves /v1/chat/completions, not {self.path}"}})
                    return
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)))
                    message = outer._reply(body.get("messages") or [])
                except Exception as exc:
                    self._send(400, {"error": {"message": f"bad request: {exc}"}})
                    return
                outer.requests += 1
                completion = outer._completion(message)
                if body.get("stream"):
                    self._stream(completion)
                else:
                    self._send(200, completion)

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, completion: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                message = completion["choices"][0]["message"]
                base = {k: completion[k] for k in ("id", "object", "created", "model")} | {"object": "chat.completion.chunk"}
                delta: dict[str, Any] = {"role": "assistant"}
                if message.get("tool_calls"):
                    delta["tool_calls"] = [dict(call, index=i) for i, call in enumerate(message["tool_calls"])]
                chunks = [delta]
                for word in (message.get("content") or "").split(" "):
                    chunks.append({"content": word + " "})
                for piece in chunks:
                    self._event(base | {"choices": [{"index": 0, "delta": piece, "finish_reason": None}]})
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                self._event(base | {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": completion["usage"]})
                self.wfile.write(b"data: [DONE]\n\n")

            def _event(self, payload: dict[str, Any]) -> None:
                self.wfile.write(f"data: {json.dumps(payload)}\n\n".encode())
                self.wfile.flush()

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="graphmind-demo-model", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def _completion(self, message: dict[str, Any]) -> dict[str, Any]:
        prompt_tokens, completion_tokens = 40 + 25 * self.requests, 12
        return {
            "id": f"chatcmpl-demo-{self.requests}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if message.get("tool_calls") else "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens, "total_tokens": prompt_tokens + completion_tokens},
        }

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
