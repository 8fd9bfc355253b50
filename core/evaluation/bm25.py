"""A BM25 baseline over the workspace's chunks (BM25Okapi k1=1.5, b=0.75, stop words removed,
no stemming), so every evaluation table carries its own lexical reference row."""
from __future__ import annotations

import re
import time

import numpy as np
from rank_bm25 import BM25Okapi

from core.types import ChunkHit, RetrievalResult
from core.workspace import Workspace

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def _stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def tokenize(text: str, stop: frozenset[str]) -> list[str]:
    return [t for t in (m.lower() for m in _TOKEN.findall(text)) if t not in stop]


class BM25Baseline:
    """BM25 over all chunks of a workspace, built once per workspace generation."""

    name = "bm25"

    def __init__(self, ws: Workspace, k1: float = 1.5, b: float = 0.75) -> None:
        self.stop = _stop_words()
        self.chunk_ids = ws.records.all_chunk_ids()
        chunks = ws.records.chunks_by_id(self.chunk_ids)
        corpus = [tokenize(chunks[c].text, self.stop) or ["_empty_"] for c in self.chunk_ids]
        self.texts = {c: chunks[c].text for c in self.chunk_ids}
        self.bm25 = BM25Okapi(corpus, k1=k1, b=b) if corpus else None

    def retrieve(self, question: str, k: int = 10) -> RetrievalResult:
        started = time.perf_counter()
        result = RetrievalResult(mode=self.name, query=question, params={"k": k})
        if self.bm25 is None:
            return result
        scores = self.bm25.get_scores(tokenize(question, self.stop))
        order = np.argsort(-scores, kind="stable")[:k]
        ids = [self.chunk_ids[i] for i in order]
        result.chunks = [ChunkHit.make(c, scores[i], "BM25", self.texts[c]) for c, i in zip(ids, order)]
        result.evidence_chunk_ids = ids
        result.context_text = "\n\n".join(self.texts[c] for c in ids)
        result.timings_ms["retrieval"] = round((time.perf_counter() - started) * 1000, 3)
        return result
