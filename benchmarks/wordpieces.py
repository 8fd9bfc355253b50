"""Counting what indexing embeds, in MiniLM wordpieces (benchmark helper for ``index_throughput.py``).

``CountingEmbedder`` wraps the local MiniLM (the int8 one or torch's): every ``embed`` and ``token_states``
call's texts are tokenised with the model's own tokenizer (truncated at 256, [CLS]/[SEP] included: what
the model computes, padding excluded) and the wordpieces are booked to what the texts were for: ``chunk
windows`` (the window pass, ``core.sentence_vectors``, or ``core.embeddings.embed_chunk_windows``),
``entities``, ``relations`` and ``tree`` (the batch's graph texts, in ``core.indexing.vector_writes.graph_texts``
order), or ``other`` (summary similarity, reconciliation). It also books

* texts embedded more than once in the run (``repeated``);
* keys (an entity, a relation's endpoint pair, a tree node) whose vector was embedded again in a later
  batch because their text changed: ``superseded`` counts the wordpieces of the earlier embeddings, the
  ones a run that embedded each key once, when its text settles, would not have computed;
* every model call as a span on the wall clock with its thread (``calls``), for ``index_timeline.py``.

The tokenising happens outside the spans; the wrapper hands ``token_states`` through, so the pipeline
takes the same path (the window pass on its worker thread) as with the bare embedder.
"""
from __future__ import annotations

import sys
import threading
import time
from collections import Counter, deque
from typing import Any, Sequence

import numpy as np


def _caller_kind() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_name
        if name in ("embed_chunk_windows", "submit_chunk_texts", "window_states"):
            return "chunk windows"
        if name == "embed_texts" and frame.f_code.co_filename.endswith("batch.py"):
            return "graph"
        frame = frame.f_back  # type: ignore[assignment]
    return "other"


def _length_counter(inner: Any):  # type: ignore[no-untyped-def]
    """texts -> wordpieces per text, with the model's own tokenizer and truncation."""
    tokenizer = getattr(inner, "_tokenizer", None)
    if tokenizer is not None and hasattr(tokenizer, "encode_batch"):  # the int8 embedder (tokenizers, cut at 256)
        return lambda texts: [len(e.ids) for e in tokenizer.encode_batch(list(texts))]
    model = inner._model  # sentence-transformers
    hf, limit = model.tokenizer, int(model.max_seq_length)
    return lambda texts: [len(i) for i in hf(list(texts), truncation=True, max_length=limit)["input_ids"]]


class CountingEmbedder:
    """A local embedder that books the wordpieces it embeds (see the module docstring)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        self._lengths = _length_counter(inner)
        self.wordpieces: Counter[str] = Counter()
        self.texts: Counter[str] = Counter()
        self.seen: Counter[str] = Counter()
        self.repeated_wordpieces = 0
        self.graph_kinds: deque[tuple[str, str, int]] = deque()  # (kind, key, batch) of graph texts not embedded yet
        self.batch = 0  # batches whose graph texts were listed so far (embedded in order, by the main thread)
        self.last: dict[tuple[str, str], tuple[int, int]] = {}  # (kind, key) -> (batch, wordpieces) last embedded
        self.superseded: Counter[str] = Counter()  # wordpieces embedded for a key that a later batch embedded again
        self.superseded_texts: Counter[str] = Counter()
        self.model_seconds = 0.0
        self.calls: list[dict[str, Any]] = []
        self._guard = threading.Lock()

    def lengths(self, texts: Sequence[str]) -> list[int]:
        return self._lengths([t if t.strip() else " " for t in texts])

    def _book(self, kind: str, texts: Sequence[str], lengths: Sequence[int]) -> None:
        with self._guard:
            for text, n in zip(texts, lengths):
                label = kind
                if kind == "graph":
                    label, key, batch = self.graph_kinds.popleft() if self.graph_kinds else ("other", "", 0)
                    if key:
                        earlier = self.last.get((label, key))
                        if earlier is not None and earlier[0] < batch:
                            self.superseded[label] += earlier[1]
                            self.superseded_texts[label] += 1
                        self.last[(label, key)] = (batch, n)
                self.wordpieces[label] += n
                self.texts[label] += 1
                self.seen[text] += 1
                if self.seen[text] > 1:
                    self.repeated_wordpieces += n

    def _timed(self, kind: str, lengths: Sequence[int], call: Any, *args: Any) -> Any:
        started = time.perf_counter()
        out = call(*args)
        ended = time.perf_counter()
        with self._guard:
            self.model_seconds += ended - started
            self.calls.append({"kind": kind, "thread": threading.current_thread().name, "start": started,
                               "end": ended, "texts": len(lengths), "wordpieces": int(sum(lengths))})
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        kind = _caller_kind()
        lengths = self.lengths(texts) if texts else []
        self._book(kind, texts, lengths)
        return self._timed("graph" if kind == "graph" else kind, lengths, self.inner.embed, texts)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed(texts)

    @property
    def token_states(self) -> Any:
        """The inner embedder's token outputs (absent when it has none, so ``can_pool`` sees the same)."""
        states = getattr(self.inner, "token_states", None)
        if states is None:
            raise AttributeError("token_states")

        def counted(texts: Sequence[str]) -> Any:
            lengths = self.lengths(texts) if texts else []
            self._book("chunk windows", texts, lengths)
            return self._timed("chunk windows", lengths, states, texts)

        return counted

    def note_graph_texts(self, entities: Sequence[Any], relations: Sequence[Any], nodes: Sequence[Any]) -> None:
        with self._guard:
            self.batch += 1
            self.graph_kinds.extend([("entities", e.key, self.batch) for e in entities] +
                                    [("relations", f"{r.source}\x00{r.target}", self.batch) for r in relations] +
                                    [("tree", n.node_id, self.batch) for n in nodes])

    def report(self, corpus_tokens: int) -> dict[str, Any]:
        total = sum(self.wordpieces.values())
        per = lambda n: round(n / max(corpus_tokens, 1), 3)  # noqa: E731
        return {"corpus_tokens": corpus_tokens, "wordpieces": total, "per_corpus_token": per(total),
                "batches": self.batch,
                "by_kind": {k: {"texts": self.texts[k], "wordpieces": n, "per_corpus_token": per(n)}
                            for k, n in self.wordpieces.most_common()},
                "repeated_text_wordpieces": self.repeated_wordpieces,
                "superseded": {k: {"texts": self.superseded_texts[k], "wordpieces": n, "per_corpus_token": per(n)}
                               for k, n in self.superseded.most_common()},
                "superseded_per_corpus_token": per(sum(self.superseded.values())),
                "model_seconds": round(self.model_seconds, 2),
                "model_wordpieces_per_s": round(total / self.model_seconds, 1) if self.model_seconds else None}


def install(counter: CountingEmbedder) -> None:
    """Book the batch's graph texts by kind (wraps ``graph_texts`` where the batch indexer calls it)."""
    import core.indexing.batch as batch

    original = batch.graph_texts

    def graph_texts(entities, relations, nodes):  # type: ignore[no-untyped-def]
        counter.note_graph_texts(entities, relations, nodes)
        return original(entities, relations, nodes)

    batch.graph_texts = graph_texts


def calibrate(embedder: Any, texts: Sequence[str], lengths: Sequence[int], call_size: int = 256) -> float:
    """The embedder's wordpieces/s on ``texts`` embedded in calls of ``call_size`` (as indexing does)."""
    started = time.perf_counter()
    for i in range(0, len(texts), call_size):
        embedder.embed(list(texts[i: i + call_size]))
    seconds = time.perf_counter() - started
    return sum(lengths) / seconds if seconds else float("nan")
