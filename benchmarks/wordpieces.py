"""Counting what indexing embeds, in MiniLM wordpieces (benchmark helper for ``index_throughput.py``).

``CountingEmbedder`` wraps the local MiniLM: every ``embed`` call's texts are tokenised with the model's
own tokenizer (truncated at its ``max_seq_length``, [CLS]/[SEP] included: what the model computes,
padding excluded) and the wordpieces are booked to what the texts were for: ``chunk windows`` (a
chunk's windows, ``core.embeddings``), ``entities``, ``relations`` and ``tree`` (the batch's graph texts,
in ``core.indexing.vector_writes.graph_texts`` order), or ``other`` (summary similarity, reconciliation).
It also books texts embedded more than once in the run (``repeated``) and entity/relation keys whose
vector was embedded again in a later batch because their text changed (``re-embedded keys``), and the
seconds spent inside the model, from which the embedder's own wordpieces/s in the same run and dtype
follow. The tokenising happens outside the timed model call.
"""
from __future__ import annotations

import sys
import time
from collections import Counter, deque
from typing import Any, Sequence

import numpy as np


def _caller_kind() -> str:
    frame = sys._getframe(2)
    while frame is not None:
        name = frame.f_code.co_name
        if name in ("embed_chunk_windows", "submit_chunk_texts"):
            return "chunk windows"
        if name == "embed_texts" and frame.f_code.co_filename.endswith("batch.py"):
            return "graph"
        frame = frame.f_back  # type: ignore[assignment]
    return "other"


class CountingEmbedder:
    """A local embedder that books the wordpieces it embeds (see the module docstring)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name, self.dim = inner.name, inner.dim
        model = inner._model
        self._tokenizer, self._max = model.tokenizer, int(model.max_seq_length)
        self.wordpieces: Counter[str] = Counter()
        self.texts: Counter[str] = Counter()
        self.seen: Counter[str] = Counter()
        self.repeated_wordpieces = 0
        self.graph_kinds: deque[tuple[str, str]] = deque()  # (kind, key) of graph texts not embedded yet
        self.keys_embedded: Counter[tuple[str, str]] = Counter()
        self.reembedded_wordpieces = 0
        self.model_seconds = 0.0

    def lengths(self, texts: Sequence[str]) -> list[int]:
        ids = self._tokenizer(list(texts), truncation=True, max_length=self._max)["input_ids"]
        return [len(i) for i in ids]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        kind = _caller_kind()
        lengths = self.lengths([t if t.strip() else " " for t in texts]) if texts else []
        for text, n in zip(texts, lengths):
            label = kind
            if kind == "graph":
                label, key = self.graph_kinds.popleft() if self.graph_kinds else ("other", "")
                if key:
                    self.keys_embedded[(label, key)] += 1
                    if self.keys_embedded[(label, key)] > 1:
                        self.reembedded_wordpieces += n
            self.wordpieces[label] += n
            self.texts[label] += 1
            self.seen[text] += 1
            if self.seen[text] > 1:
                self.repeated_wordpieces += n
        started = time.perf_counter()
        out = self.inner.embed(texts)
        self.model_seconds += time.perf_counter() - started
        return out

    def note_graph_texts(self, entities: Sequence[Any], relations: Sequence[Any], nodes: Sequence[Any]) -> None:
        self.graph_kinds.extend([("entities", e.key) for e in entities] +
                                [("relations", f"{r.source}\x00{r.target}") for r in relations] +
                                [("tree", "") for _ in nodes])

    def report(self, corpus_tokens: int) -> dict[str, Any]:
        total = sum(self.wordpieces.values())
        return {"corpus_tokens": corpus_tokens, "wordpieces": total,
                "per_corpus_token": round(total / max(corpus_tokens, 1), 3),
                "by_kind": {k: {"texts": self.texts[k], "wordpieces": n,
                                "per_corpus_token": round(n / max(corpus_tokens, 1), 3)}
                            for k, n in self.wordpieces.most_common()},
                "repeated_text_wordpieces": self.repeated_wordpieces,
                "reembedded_key_wordpieces": self.reembedded_wordpieces,
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
