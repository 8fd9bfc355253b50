"""Fault injection between RAGScope and the real llama.cpp server.

A small threading HTTP proxy on 127.0.0.1 forwards to the server and, following a script,
answers chat-completion requests with 429, 500, a stalled connection (timeout), a truncated body,
a non-JSON body, 401, 404 or a scripted reply ("reply:TEXT") instead. Checks: transient faults are retried and the work finishes;
retries are bounded (counted at the proxy); configuration errors fail at once with a message
naming the setting; a document whose calls keep failing is marked failed with a clear reason,
and indexes once the server is healthy again.
"""
from __future__ import annotations

import http.client
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest

from conftest import MODEL_NAME, index_document, llm_settings, shared_server

pytestmark = [pytest.mark.llm, pytest.mark.slow]

STALL_S = 3.0  # a "timeout" fault holds the connection this long (the client times out first)


class FaultProxy:
    """Forwards to ``upstream``; ``plan`` holds the faults for the next chat requests
    (``always`` repeats a fault for every request)."""

    def __init__(self, upstream: str) -> None:
        parts = urlsplit(upstream)
        self.upstream_host, self.upstream_port = parts.hostname, parts.port
        self.plan: list[str] = []
        self.always: str | None = None
        self.chat_requests = 0
        self.faults_served: list[str] = []
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def do_GET(self) -> None:
                self._forward(b"")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.endswith("/chat/completions"):
                    fault = proxy.next_fault()
                    if fault != "pass" and self._inject(fault):
                        return
                self._forward(body)

            def _send(self, status: int, body: bytes, ctype: str = "application/json", extra=None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for key, value in (extra or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

            def _inject(self, fault: str) -> bool:
                if fault == "429":
                    self._send(429, b'{"error": {"message": "slow down"}}', extra={"Retry-After": "0"})
                elif fault == "500":
                    self._send(500, b'{"error": {"message": "internal error"}}')
                elif fault == "401":
                    self._send(401, b'{"error": {"message": "invalid api key"}}')
                elif fault == "404model":
                    self._send(404, b'{"error": {"message": "The model does not exist"}}')
                elif fault == "nonjson":
                    self._send(200, b"<html><body>proxy says hello</body></html>")
                elif fault.startswith("reply:"):  # a well-formed completion whose text is the rest of the fault
                    body = json.dumps({"id": "fault", "object": "chat.completion", "created": 0, "model": MODEL_NAME,
                                       "choices": [{"index": 0, "finish_reason": "stop",
                                                    "message": {"role": "assistant", "content": fault[6:]}}],
                                       "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
                    self._send(200, body.encode())
                elif fault == "timeout":
                    time.sleep(STALL_S)
                    self.close_connection = True
                elif fault == "truncated":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", "400")
                    self.end_headers()
                    self.wfile.write(b'{"id": "x", "choices": [{"message": {"content": "entity | Al')
                    self.wfile.flush()
                    self.close_connection = True
                else:
                    return False
                return True

            def _forward(self, body: bytes) -> None:
                conn = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port, timeout=300)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
                conn.request(self.command, self.path, body=body or None, headers=headers)
                response = conn.getresponse()
                data = response.read()
                self._send(response.status, data, response.getheader("Content-Type", "application/json"))
                conn.close()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def next_fault(self) -> str:
        with self.lock:
            self.chat_requests += 1
            fault = self.plan.pop(0) if self.plan else (self.always or "pass")
            if fault != "pass":
                self.faults_served.append(fault)
            return fault

    def reset(self, plan=(), always=None) -> None:
        with self.lock:
            self.plan, self.always, self.chat_requests, self.faults_served = list(plan), always, 0, []

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def proxy(tmp_path_factory):
    upstream = shared_server(tmp_path_factory.mktemp("llama"))
    fault_proxy = FaultProxy(upstream)
    yield fault_proxy
    fault_proxy.close()


def make_chat(url: str, retries: int = 5, conn=None, timeout_s: float = STALL_S / 2):
    from core.llm.provider import chat_from_settings

    settings = llm_settings(url, llm_max_retries=retries, llm_timeout_s=timeout_s)
    return chat_from_settings(settings, None, conn, backoff_base=0.01, backoff_max=0.05)


PING = [{"role": "user", "content": "Say hello."}]


def test_transient_faults_are_retried_until_success(proxy):
    proxy.reset(plan=["429", "500", "timeout", "truncated", "nonjson"])
    chat = make_chat(proxy.url, retries=5)
    reply = chat.complete(PING, stage="answer", max_tokens=8)
    assert reply.text.strip() and not reply.cached
    assert proxy.chat_requests == 6 and proxy.faults_served == ["429", "500", "timeout", "truncated", "nonjson"]
    assert chat.inner.inner.retries == 5


def test_retries_are_bounded(proxy):
    from core.llm.client import LLMUnavailableError

    proxy.reset(always="500")
    chat = make_chat(proxy.url, retries=3)
    with pytest.raises(LLMUnavailableError, match=r"after 4 attempt\(s\): HTTP 500"):
        chat.complete(PING, stage="answer", max_tokens=8)
    assert proxy.chat_requests == 4


@pytest.mark.parametrize("fault, setting", [("401", "OPENAI_API_KEY"), ("404model", "Settings → LLM model")])
def test_configuration_errors_fail_at_once(proxy, fault, setting):
    from core.llm.client import LLMConfigError

    proxy.reset(always=fault)
    chat = make_chat(proxy.url, retries=5)
    with pytest.raises(LLMConfigError) as info:
        chat.complete(PING, stage="answer", max_tokens=8)
    assert setting in str(info.value)
    assert proxy.chat_requests == 1


def test_cancellation_stops_between_retries(proxy):
    from core.llm.client import LLMCancelled

    proxy.reset(always="500")
    chat = make_chat(proxy.url, retries=10)
    chat.inner.inner.backoff_base = chat.inner.inner.backoff_max = 5.0
    threading.Timer(0.3, chat.cancel).start()
    started = time.perf_counter()
    with pytest.raises(LLMCancelled):
        chat.complete(PING, stage="answer", max_tokens=8)
    assert time.perf_counter() - started < 4.0 and proxy.chat_requests == 1


TEXT = ("Elsa Marrow founded the Harwick Observatory near Lindqvist in 1911. Her assistant Jonas Pell "
        "photographed a comet and sent the plates to the Royal Astronomical Society in London.")


def test_indexing_survives_intermittent_faults(proxy, tmp_path):
    from core.workspace import Workspace

    proxy.reset(plan=["500", "pass", "429", "pass", "nonjson", "truncated"])
    ws = Workspace(tmp_path / "ws", settings=llm_settings(proxy.url, llm_max_retries=5, llm_timeout_s=60,
                                                          llm_concurrency=1))
    chat = make_chat(proxy.url, retries=5, conn=ws.store.conn, timeout_s=60)
    report = index_document(ws, chat, TEXT, "faults.txt")
    assert report.processed == 1 and not report.failed, report.failed
    assert ws.status()["extractor"] == f"llm:{MODEL_NAME}"
    assert sorted(proxy.faults_served) == sorted(["500", "429", "nonjson", "truncated"])
    assert chat.inner.inner.retries == 4
    ws.close()


def test_a_document_fails_with_a_clear_reason_and_recovers(proxy, tmp_path):
    from core.indexing.pipeline import process_pending, retry_failed
    from core.llm.provider import index_components
    from core.workspace import Workspace

    proxy.reset(always="500")
    ws = Workspace(tmp_path / "ws", settings=llm_settings(proxy.url, llm_max_retries=2))
    chat = make_chat(proxy.url, retries=2, conn=ws.store.conn, timeout_s=60)
    report = index_document(ws, chat, TEXT, "broken.txt")
    assert report.processed == 0 and len(report.failed) == 1
    reason = report.failed[0]["reason"]
    assert "failed after 3 attempt(s)" in reason and "HTTP 500" in reason, reason
    [doc] = ws.store.documents()
    assert doc.status == "failed" and "HTTP 500" in doc.error
    assert proxy.chat_requests == 3  # one chunk: 1 try + 2 retries, then the document fails
    proxy.reset()  # the server is healthy again: nothing was lost
    with ws.writer():
        assert retry_failed(ws) == 1
        report = process_pending(ws, **index_components(ws, chat))
    chat.flush()
    assert report.processed == 1 and not report.failed
    assert ws.store.documents()[0].status == "processed"
    ws.close()
