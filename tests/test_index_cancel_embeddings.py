"""The indexing job's Cancel reaches an embeddings retry wait: an embeddings server that answers
503 with ``Retry-After: 30`` keeps the client waiting to retry; setting the run's cancel event ends
the run within about a second, as a resumable stop (documents pending, nothing committed). With an
instant extractor the indexing thread is certainly blocked on its vectors when Cancel is pressed; the
spaCy case presses it while the chunk requests wait and the parse still runs (the parse stops at the
next paragraph spaCy hands back, i.e. after its current batch: seconds on a loaded machine)."""
from __future__ import annotations

import json
import threading
import time
from http.server import ThreadingHTTPServer

import pytest

from conftest import SAMPLES
from fake_openai import JsonHandler

DIM = 8


class OverloadedServer:
    """Answers the dimension probe, then 503 with ``Retry-After: 30`` to every embeddings request."""

    def __init__(self) -> None:
        self.refused = 0
        self.lock = threading.Lock()
        server = self

        class Handler(JsonHandler):

            def do_GET(self) -> None:
                self._send(200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if body.get("input") == ["dimension probe"]:
                    data = [{"object": "embedding", "index": 0, "embedding": [1.0] + [0.0] * (DIM - 1)}]
                    self._send(200, {"object": "list", "model": "fake-model", "data": data,
                                     "usage": {"prompt_tokens": 1, "total_tokens": 1}})
                    return
                with server.lock:
                    server.refused += 1
                self._send(503, {"error": {"message": "overloaded"}}, {"Retry-After": "30"})

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class InstantExtractor:
    """No entities, at once: the indexing thread goes straight on to wait for its vectors."""

    name = "instant"

    def extract(self, texts: list[str]) -> list:
        from core.types import ChunkExtraction

        return [ChunkExtraction() for _ in texts]


def in_function(thread: threading.Thread, filename: str, function: str) -> bool:
    """Is ``thread`` inside ``function`` of the file ending in ``filename`` right now?"""
    import sys

    frame = sys._current_frames().get(thread.ident or 0)
    while frame is not None:
        if frame.f_code.co_name == function and frame.f_code.co_filename.endswith(filename):
            return True
        frame = frame.f_back
    return False


@pytest.fixture()
def overloaded():
    server = OverloadedServer()
    yield server
    server.stop()


@pytest.mark.parametrize("overlap,spacy", [(False, False), (True, False), (False, True)],
                         ids=["retry-wait", "retry-wait-overlapped", "during-spacy-extraction"])
def test_cancel_ends_an_embeddings_retry_wait_within_a_second(overloaded, tmp_path, overlap, spacy):
    from core.indexing.pipeline import process_pending, register_documents
    from core.loaders import load_path
    from core.settings import Settings
    from core.types import Cancelled
    from core.workspace import Workspace

    settings = Settings(embedder="openai", embedding_base_url=overloaded.url, embedding_model="fake-model",
                        embedding_max_retries=10)  # backoff_max 20 s: each wait would last 20 s
    ws = Workspace(tmp_path / "ws", settings=settings)
    sources, _ = load_path(SAMPLES)
    sources = sources[:4]
    cancel = threading.Event()
    outcome: dict = {}

    def index() -> None:
        try:
            with ws.writer():
                register_documents(ws, sources)
                process_pending(ws, cancel=cancel, overlap=overlap, batch_tokens=600 if overlap else 100_000,
                                extractor=None if spacy else InstantExtractor())
            outcome["error"] = None
        except BaseException as exc:  # noqa: BLE001 - the test inspects it
            outcome["error"] = exc
        outcome["ended"] = time.perf_counter()

    if spacy:
        from core.extraction.nlp import load_nlp

        load_nlp()  # loaded beforehand, as the app does at start: a model load is not interruptible
    worker = threading.Thread(target=index, daemon=True)
    worker.start()
    try:
        # Cancel is pressed once the indexing thread is blocked on its vectors (a retry wait, 20 s capped)
        # or, with spaCy, parsing while its chunk requests wait to be retried
        places = [("core/remote_embeddings.py", "result")] + ([("core/extraction/nlp.py", "parse_texts")] if spacy else [])

        def waiting() -> bool:
            return bool(overloaded.refused) and any(in_function(worker, *place) for place in places)

        deadline = time.monotonic() + 120
        while not waiting() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert waiting(), "the indexing thread never waited"
        time.sleep(0.3)
        assert worker.is_alive()
        pressed = time.perf_counter()
        cancel.set()
        worker.join(30)
        assert not worker.is_alive(), "Cancel did not reach the embeddings retry wait"
        assert isinstance(outcome["error"], Cancelled), outcome
        # blocked on vectors: within the retry policy's poll (0.2 s) and the unwinding; during a parse: after
        # spaCy's current batch of paragraphs, in any case well before the 20 s retry wait would end
        limit = 12.0 if spacy else 1.5
        assert outcome["ended"] - pressed < limit, f"Cancel took {outcome['ended'] - pressed:.2f}s"
        status = ws.status()
        assert status["processed"] == 0 and status["failed"] == 0 and status["pending"] == len(sources)
        assert status["chunks"] == 0
    finally:
        cancel.set()
        worker.join(30)
        ws.close()
