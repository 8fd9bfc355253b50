"""Extractive summaries for the offline provider, and the sentences they are made of.

* ``extractive_summary`` — LexRank: sentence centrality (PageRank, ``networkx.pagerank``) on cosine
  similarities of TF-IDF vectors (scikit-learn's ``TfidfVectorizer``; default, as in the original
  LexRank) or of the embedder's vectors; the most
  central sentences are kept in their original order up to a token budget. Used for summary-tree
  nodes. TF-IDF is the default because embedding every sentence of the corpus costs more than the
  rest of offline indexing together (measured; see the README's benchmark section).
* Sentences: the summary tree reads the sentences spaCy found in the chunks at extraction time (the
  ``sentences`` rows); ``split_known`` recovers them from a summary's text (a summary is its
  sentences joined by spaces), and ``unparsed_sentences`` — a punctuation regex over the plain text —
  splits only text no parse covers ("Dr. Smith" becomes two sentences there): an LLM's summary, a
  corpus-level summary, a chunk of a workspace indexed before sentence rows existed.
* ``readable_summary`` — a summary for reading: its sentences (cut at the known parsed ones), a title line
  ("The Velmora Coast", "Geography", a MuSiQue page title) standing between blank lines. The stored text
  keeps single spaces — what is embedded, ranked and counted is unchanged: setting titles apart in the
  stored text was measured and moved tree recall by ±4 points on whitespace alone, with more wrong bold
  answers (docs/methods.md).
* ``merge_fragments`` — cheap lexical centrality over description fragments, used to cap merged
  entity/relation profiles without embedding every fragment.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Sequence

import networkx as nx
import numpy as np

from core.extraction.markup import is_title, plain_text
from core.tokens import count_tokens

_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*|\n{2,}|\n(?=[#\-*•])")
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)


def _cut_long(sentence: str) -> list[str]:
    """A very long unpunctuated run cut into pieces, so one line cannot swallow a summary budget."""
    out: list[str] = []
    while count_tokens(sentence) > 120 and len(sentence) > 600:
        out.append(sentence[:600].strip())
        sentence = sentence[600:]
    out.append(sentence.strip())
    return [s for s in out if s]


def split_sentences(text: str) -> list[str]:
    """Split text into sentences (punctuation/paragraph based; robust for any script)."""
    return [piece for part in _SENTENCE_SPLIT.split(text or "") if part and part.strip()
            for piece in _cut_long(part.strip())]


def unparsed_sentences(text: str) -> list[str]:
    """Sentences of a text no parse covers: ``split_sentences`` of its plain text (markup removed)."""
    return split_sentences(plain_text(text))


def split_known(text: str, known: Iterable[str]) -> list[str]:
    """Sentences of ``text``, where text made of ``known`` sentences joined by whitespace (an extractive
    summary of parsed sentences) is cut exactly at them: a known sentence is tried at the start, after
    each known sentence found and at each regex boundary; what lies between found sentences is
    split by ``unparsed_sentences``."""
    by_word: dict[str, list[str]] = {}
    for sentence in sorted(set(known), key=lambda k: (-len(k), k)):
        if sentence:
            by_word.setdefault(sentence.split(None, 1)[0], []).append(sentence)
    if not by_word:
        return unparsed_sentences(text)
    text = text or ""
    boundaries = [m.end() for m in _SENTENCE_SPLIT.finditer(text)]
    out: list[str] = []
    gap = pos = 0  # gap: start of the text not matched yet
    while pos < len(text):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        word = text[pos:].split(None, 1)[0] if pos < len(text) else ""
        found = next((k for k in by_word.get(word, []) if text.startswith(k, pos)
                      and (pos + len(k) == len(text) or text[pos + len(k)].isspace())), None)
        if found is not None:
            out += unparsed_sentences(text[gap:pos])
            out.append(found)
            pos = gap = pos + len(found)
            continue
        pos = next((b for b in boundaries if b > pos), len(text))
    return out + unparsed_sentences(text[gap:])


def readable_summary(text: str, known: Iterable[str]) -> str:
    """``text`` cut at its sentences (``split_known``) and joined again by spaces, except that a title line
    stands between blank lines: a heading of its own, never glued onto the sentence before or after it
    ("The Velmora Coast The Velmora Coast is …" reads "The Velmora Coast" / "The Velmora Coast is …")."""
    sentences = split_known(text, known)
    out: list[str] = []
    for i, sentence in enumerate(sentences):
        if i:
            out.append("\n\n" if is_title(sentences[i - 1]) or is_title(sentence) else " ")
        out.append(sentence)
    return "".join(out)


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


def extractive_summary(sentences: Iterable[str], embed, max_tokens: int = 300) -> str:
    """LexRank summary of the sentences (in their order, each once; very long ones cut into pieces);
    ``embed(list[str]) -> unit vectors``."""
    unique = list(dict.fromkeys(piece for sentence in sentences for piece in _cut_long(sentence)))
    if not unique:
        return ""
    if sum(count_tokens(s) for s in unique) <= max_tokens:
        return " ".join(unique)
    vectors = embed(unique)
    return select_central(unique, lexrank_scores(vectors), max_tokens)


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
