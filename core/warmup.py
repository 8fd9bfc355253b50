"""Loading what the first question needs before anyone asks it: the models (MiniLM, spaCy, the
token encoding) and one workspace's read views (graph, mention graph, vector matrices, tree).

``warm_models()`` and ``warm_workspace(ws)`` do the work in the calling thread and are safe to call
again (everything they touch is loaded once per process or per workspace generation);
``start_warmup(ws)`` runs both in a daemon thread, at most once per process and workspace
generation, so a page that calls it on every rerun neither blocks nor repeats the work. Warming
reads only: it never writes to a workspace, and a failure is logged and ignored (the first question
then loads what it needs itself, as without a warm-up).

Memory of a long-running server (``start_housekeeping``, started with the first models' warm-up): once
the models are loaded, and again once a workspace's views are, ``gc.freeze()`` moves their millions of
objects out of the collector's view, so a
full collection costs milliseconds instead of about a second (the app's config turns Streamlit's
collection after every script run off for that second); then every ``HOUSEKEEPING_S`` a daemon thread
collects the cyclic garbage closed sessions leave (Streamlit's session objects, a page run's frames)
and hands freed heap pages back to the system (glibc's ``malloc_trim``), so the server's memory comes
back after a crowd of sessions has closed.
"""
from __future__ import annotations

import ctypes
import gc
import logging
import sys
import threading
import time
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from core.workspace import Workspace

log = logging.getLogger(__name__)

_LOCK = threading.Lock()
_STARTED: set[tuple[str, int]] = set()  # (workspace path, generation) warmed or being warmed; "" = models only
_THREADS: list[threading.Thread] = []

WARM_QUESTION = "Which city is the capital of the country where the river rises?"
COLLECTIONS = ("chunks", "entities", "relations", "tree")


def warm_models(embedder_too: bool = True) -> None:
    """Load spaCy, the cl100k encoding and (unless ``embedder_too`` is False) the default local MiniLM,
    each with one tiny call so their lazy parts are loaded too."""
    from core.extraction.query_terms import offline_keywords
    from core.tokens import count_tokens

    count_tokens("warm-up")
    offline_keywords(WARM_QUESTION)
    if embedder_too:  # the default local model (new workspaces'); a workspace of the other one loads its own
        from core.embeddings import local_embedder
        from core.onnx_embeddings import int8_embedder
        from core.settings import Settings

        embedder = int8_embedder() if Settings().embedder == "local-minilm-int8" else local_embedder()
        embedder.embed([WARM_QUESTION])
        embedder.embed_queries([WARM_QUESTION, "Warm", "warm, up"])  # the packed query path of the graph modes


def warm_workspace(ws: "Workspace") -> None:
    """Load one workspace's read views for its current generation (the graph, the mention graph and
    index, chunk order, document names, tree, every vector matrix, the LightRAG row costs and the sentence bank) and
    embed one question with the local embedder. Reads only."""
    views = ws.views
    graph = views.graph
    graph.relation_count()
    graph.aliases()
    graph.entities_with_word("the")
    views.mention_graph
    views.mention_index
    views.chunk_order
    views.doc_names
    views.tree_index
    for collection in COLLECTIONS:
        try:
            views.vectors.size(collection)
        except Exception:  # noqa: BLE001 - a workspace without that collection: nothing to load
            log.debug("no vectors for %s", collection, exc_info=True)
    from core.retrieval.token_counts import context_counter, graph_row_costs

    views.derived(graph_row_costs)  # the LightRAG modes' row token costs, once per generation
    from core.retrieval.anchoring import strongest_edges

    views.derived(strongest_edges)  # each node's edges by weight (anchored relations), once per generation

    context_counter(ws)  # the exact context counts' segment table, once per generation
    warm_sentences(ws)
    if ws.settings.embedder != "openai":  # a remote server is not called just to warm up
        ws.embedder.embed([WARM_QUESTION])


# ~17 MB per 1,000 chunks on dev_musique_full; a larger workspace loads them as questions reach them
PRELOAD_SENTENCE_CHUNKS = 5_000


def warm_sentences(ws: "Workspace") -> int:
    """Every chunk's stored sentences and sentence vectors in the generation's sentence bank (the offline
    answers' candidates), read in a few batched queries instead of a few chunks per mode per question;
    skipped above ``PRELOAD_SENTENCE_CHUNKS`` chunks. Returns the number of chunks loaded."""
    from core.answers.sentences import sentence_bank

    chunk_ids = ws.records.all_chunk_ids()
    if len(chunk_ids) > PRELOAD_SENTENCE_CHUNKS:
        return 0
    bank = sentence_bank(ws)
    bank.get(chunk_ids)
    bank.vectors(chunk_ids)
    return len(chunk_ids)


HOUSEKEEPING_S = 20.0
_HOUSEKEEPING: list[threading.Thread] = []


def release_memory() -> int:
    """One full collection, then freed heap pages back to the system where glibc allows it; returns the
    number of objects collected."""
    collected = gc.collect()
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        except (OSError, AttributeError):  # not glibc (e.g. musl): the pages stay with the allocator
            pass
    return collected


def _housekeeping(period_s: float) -> None:
    while True:
        time.sleep(period_s)
        try:
            release_memory()
        except Exception:  # noqa: BLE001 - housekeeping must never stop the server
            log.debug("memory housekeeping failed", exc_info=True)


def start_housekeeping(period_s: float = HOUSEKEEPING_S) -> Optional[threading.Thread]:
    """Freeze what is loaded now (the models) out of the collector's view and start the periodic
    collection (module docstring); once per process (None when already started)."""
    with _LOCK:
        if _HOUSEKEEPING:
            return None
        gc.collect()
        gc.freeze()
        thread = threading.Thread(target=_housekeeping, args=(period_s,), name="ragscope-memory", daemon=True)
        _HOUSEKEEPING.append(thread)
    thread.start()
    return thread


def refreeze() -> None:
    """Freeze what is loaded now (a new generation's views) out of the collector's view, after giving back
    to it what was frozen before: an older generation's views, once nothing uses them, are then collected
    with their reference cycles instead of being kept frozen for the life of the process (one full
    collection per new generation, on the warm-up thread)."""
    with _LOCK:
        gc.unfreeze()
        gc.collect()
        gc.freeze()


def _run(ws: Optional["Workspace"], embedder_too: bool, housekeeping: bool = False) -> None:
    try:
        warm_models(embedder_too=embedder_too)
        if housekeeping:
            start_housekeeping()  # the models are loaded: freeze them, then collect closed sessions' garbage
        if ws is not None:
            warm_workspace(ws)
            if housekeeping:  # the generation's views live as long as the models: out of the collector's view too
                refreeze()  # (on dev_musique_full ~330k objects: each full collection paused a Compare ~200 ms)
    except Exception:  # noqa: BLE001 - warming is an optimisation: the first question loads what it needs
        log.warning("warm-up failed (the first question will load the models itself)", exc_info=True)


def start_warmup(ws: Optional["Workspace"] = None, housekeeping: bool = False) -> Optional[threading.Thread]:
    """Warm the models (and ``ws``'s views) in a daemon thread; None when this process already
    started warming them (for this workspace generation). ``housekeeping`` (the app's server): then
    ``start_housekeeping()`` once the models are loaded."""
    key = ("", 0) if ws is None else (str(ws.path), int(ws.views.generation))
    with _LOCK:
        if key in _STARTED:
            return None
        _STARTED.add(key)
        embedder_too = ws is None or ws.settings.embedder != "openai"
        thread = threading.Thread(target=_run, args=(ws, embedder_too, housekeeping), name="ragscope-warmup",
                                  daemon=True)
        _THREADS.append(thread)
    thread.start()
    return thread
