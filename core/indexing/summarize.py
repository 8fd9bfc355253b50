"""Extractive summaries for the offline provider.

* ``extractive_summary`` — LexRank: sentence centrality (PageRank, ``networkx.pagerank``) on cosine
  similarities of TF-IDF vectors (scikit-learn's ``TfidfVectorizer``; default, as in the original
  LexRank) or of the embedder's vectors; the most
  central sentences are kept in their original order up to a token budget. Used for summary-tree
  nodes. TF-IDF is the default because embedding every sentence of the corpus costs more than the
  rest of offline indexing together (measured; see the README's benchmark section).
* ``merge_fragments`` — cheap lexical centrality over description fragments, used to cap merged
  entity/relation profiles without embedding every fragment.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Sequence

import networkx as nx
import numpy as np

from core.tokens import count_tokens

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n{2,}|\n(?=[#\-*•])")
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)


def split_sentences(text: str) -> list[str]:
    """Split text into sentences (punctuation/paragraph based; robust for any script)."""
    parts = [p.strip() for p in _SENTENCE_SPLIT.split(text or "")]
    out: list[str] = []
    for part in parts:
        if not part:
            continue
        # very long unpunctuated runs are cut so one line cannot swallow a summary budget
        while count_tokens(part) > 120 and len(part) > 600:
            out.append(part[:600].strip())
            part = part[600:]
        out.append(part.strip())
    return [s for s in out if s]


def tfidf_vectors(sentences: Sequence[str]) -> np.ndarray:
    """Unit TF-IDF vectors of sentences (classic LexRank similarity; no model needed)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        matrix = TfidfVectorizer(stop_words="english", token_pattern=r"(?u)\b\w\w+\b").fit_transform(sentences)
    except ValueError:  # empty vocabulary (only stop words / symbols)
        return np.eye(len(sentences), dtype=np.float32)
    dense = matrix.toarray().astype(np.float32)
    norms = np.linalg.norm(dense, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return dense / norms


def lexrank_scores(vectors: np.ndarray, damping: float = 0.85) -> np.ndarray:
    """Stationary distribution of the similarity graph of unit vectors (continuous LexRank): PageRank
    of the graph weighted by the positive cosine similarities (a sentence similar to none gets the
    teleport share only)."""
    n = len(vectors)
    if n == 0:
        return np.zeros(0)
    if n == 1:
        return np.ones(1)
    sim = np.clip(vectors @ vectors.T, 0.0, None)
    np.fill_diagonal(sim, 0.0)
    ranks = nx.pagerank(nx.from_numpy_array(sim), alpha=damping, weight="weight", tol=1e-10, max_iter=1000)
    return np.array([ranks[i] for i in range(n)])


def select_central(sentences: Sequence[str], scores: np.ndarray, max_tokens: int) -> str:
    """Keep the highest-scoring sentences within the budget, in their original order."""
    order = sorted(range(len(sentences)), key=lambda i: (-float(scores[i]), i))
    chosen: list[int] = []
    used = 0
    for i in order:
        cost = count_tokens(sentences[i])
        if used + cost > max_tokens and chosen:
            continue
        chosen.append(i)
        used += cost
        if used >= max_tokens:
            break
    return " ".join(sentences[i] for i in sorted(chosen))


def extractive_summary(texts: Sequence[str], embed, max_tokens: int = 300) -> str:
    """LexRank summary of the concatenated texts; ``embed(list[str]) -> unit vectors``."""
    sentences: list[str] = []
    seen: set[str] = set()
    for text in texts:
        for sentence in split_sentences(text):
            if sentence not in seen:
                seen.add(sentence)
                sentences.append(sentence)
    if not sentences:
        return ""
    if sum(count_tokens(s) for s in sentences) <= max_tokens:
        return " ".join(sentences)
    vectors = embed(sentences)
    return select_central(sentences, lexrank_scores(vectors), max_tokens)


def merge_fragments(fragments: Sequence[str], max_fragments: int, max_tokens: int, summary_tokens: int) -> str:
    """Merge description fragments: deduplicate; if too many or too long, keep the most central ones.

    Centrality is lexical (shared content words, weighted by how many fragments use them), so
    merging stays cheap; fragments are kept in first-seen order.
    """
    unique: list[str] = []
    seen: set[str] = set()
    for fragment in fragments:
        fragment = fragment.strip()
        if fragment and fragment not in seen:
            seen.add(fragment)
            unique.append(fragment)
    joined = " ".join(unique)
    if len(unique) < max_fragments and count_tokens(joined) < max_tokens:
        return joined
    words = [set(w.lower() for w in _WORD.findall(f)) for f in unique]
    document_frequency = Counter(w for ws in words for w in ws)
    scores = np.array([sum(document_frequency[w] - 1 for w in ws) / (1 + len(ws)) ** 0.5 for ws in words])
    return select_central(unique, scores, summary_tokens)
