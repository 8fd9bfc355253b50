"""A fake OpenAI-compatible server on 127.0.0.1 for the provider tests: it records every request
(path, headers, JSON body) and answers chat completions (streamed or not), embeddings, ``/v1/models``
and ``/props`` as the test configures it. Standard library only (``http.server`` in a thread)."""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator, Optional


class JsonHandler(BaseHTTPRequestHandler):
    """A quiet HTTP/1.1 handler with one JSON reply helper (the fake servers of the tests subclass it)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: Any, extra: Optional[dict[str, str]] = None) -> None:
        data = json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    _json = _send


class FakeOpenAI:
    """``chat`` = how chat completions are answered: "ok" (streamed "Hello world"), "slow" (a piece
    every ``piece_delay_s``, ``pieces`` of them), "stall" (nothing for ``stall_s``), "stall_after_text"
    (two pieces, then silence), "error400" (an error body with a payload), "context" (refuses prompts
    above ``refuse_above`` characters as too long for a ``window``-token context), "429"
    (Retry-After: ``retry_after``), "500"."""

    def __init__(self, model: str = "fake-model") -> None:
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.chat = "ok"
        self.reply = "Hello world"  # the content of a chat completion ("ok"; streamed as two pieces)
        self.embed = "ok"
        self.models_extra: dict[str, Any] = {}
        self.props: Optional[dict[str, Any]] = None
        self.piece_delay_s = 0.3
        self.pieces = 6
        self.stall_s = 3.0
        self.retry_after = "1"
        self.refuse_above = 10_000
        self.window = 1024
        self.error_payload = "<img src=x onerror=alert(1)> SECRET-UPSTREAM-DETAIL"
        self.lock = threading.Lock()
        fake = self

        class Handler(JsonHandler):
            def _record(self, body: Any) -> None:
                with fake.lock:
                    fake.requests.append({"method": self.command, "path": self.path,
                                          "auth": self.headers.get("Authorization", ""), "body": body})

            def do_GET(self) -> None:
                self._record(None)
                if self.path.endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": fake.model, "object": "model", "created": 0,
                                                                 "owned_by": "fake", **fake.models_extra}]})
                elif self.path == "/props" and fake.props is not None:
                    self._json(200, fake.props)
                else:
                    self._json(404, {"error": {"message": "no such route"}})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw or b"{}")
                self._record(body)
                if self.path.endswith("/embeddings"):
                    return self._embeddings(body)
                if self.path.endswith("/chat/completions"):
                    return self._chat(body)
                self._json(404, {"error": {"message": "no such route"}})

            def _embeddings(self, body: dict) -> None:
                if fake.embed == "error400":
                    return self._json(400, {"error": {"message": fake.error_payload}})
                if fake.embed == "500":
                    return self._json(500, {"error": {"message": "down"}})
                texts = body.get("input") or []
                data = [{"object": "embedding", "index": i, "embedding": [1.0, float(len(t) % 7), 0.5]}
                        for i, t in enumerate(texts)]
                self._json(200, {"object": "list", "data": data, "model": fake.model,
                                 "usage": {"prompt_tokens": 1, "total_tokens": 1}})

            def _chat(self, body: dict) -> None:
                mode = fake.chat
                if mode == "error400":
                    return self._json(400, {"error": {"message": fake.error_payload}})
                if mode == "429":
                    return self._json(429, {"error": {"message": "slow down " + fake.error_payload}},
                                      {"Retry-After": fake.retry_after})
                if mode == "500":
                    return self._json(500, {"error": {"message": "internal " + fake.error_payload}})
                if mode == "context":
                    size = sum(len(m.get("content") or "") for m in body.get("messages", []))
                    if size > fake.refuse_above:
                        return self._json(400, {"error": {"message": f"This model's maximum context length is "
                                                                     f"{fake.window} tokens."}})
                if mode == "stall":
                    time.sleep(fake.stall_s)
                    self.close_connection = True
                    return
                if not body.get("stream"):
                    return self._json(200, {"id": "c", "object": "chat.completion", "created": 0, "model": fake.model,
                                            "choices": [{"index": 0, "finish_reason": "stop",
                                                         "message": {"role": "assistant", "content": fake.reply}}],
                                            "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}})
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                half = len(fake.reply) // 2
                pieces = ([fake.reply[:half], fake.reply[half:]] if mode in ("ok", "context")
                          else [f"p{i} " for i in range(fake.pieces)])
                for i, piece in enumerate(pieces):
                    if mode == "slow" and i:
                        time.sleep(fake.piece_delay_s)
                    self._event({"choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}]})
                    if mode == "stall_after_text" and i == 1:
                        time.sleep(fake.stall_s)
                        self.close_connection = True
                        return
                self._event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                self._event({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": len(pieces),
                                                      "total_tokens": 7 + len(pieces)}})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
                self.close_connection = True

            def _event(self, payload: dict) -> None:
                payload = {"id": "s", "object": "chat.completion.chunk", "created": 0, "model": fake.model} | payload
                self.wfile.write(b"data: " + json.dumps(payload).encode() + b"\n\n")
                self.wfile.flush()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.root = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.url = self.root + "/v1"

    def chat_requests(self) -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def auths(self) -> set[str]:
        """Authorization headers received (``/props``, asked without a key by design, left out)."""
        with self.lock:
            return {r["auth"] for r in self.requests if r["path"] != "/props"}

    def reset(self) -> None:
        with self.lock:
            self.requests.clear()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def fresh_fake_openai() -> Iterator[FakeOpenAI]:
    """A ``FakeOpenAI`` with the provider registry and the LLM client's learned context windows reset
    before and after (the body of the ``fake`` fixture of the LLM tests)."""
    from core import providers
    from core.llm import client

    providers.reset()
    client._WINDOWS.clear()
    client._LEARNED.clear()
    server = FakeOpenAI()
    yield server
    server.close()
    providers.reset()
