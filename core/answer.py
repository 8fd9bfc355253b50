"""Answers from a mode's context. Offline: an *extractive* answer — the context sentences most
similar to the question (embedder cosine), a few, in reading order, each citing its source
(document name, chunk). With an LLM configured, a generated answer (see ``core.llm``).
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Optional

import numpy as np

from core.summarize import split_sentences
from core.types import Answer, RetrievalResult

MAX_CANDIDATES = 40  # sentences embedded per answer (pre-selected lexically)
MIN_WORDS = 6  # shorter lines (headings, list labels) are not quoted
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STOP = frozenset("the a an of in on at to for and or is was were be by with as from that which who what when "
                  "where why how did does do this these those it its his her their there".split())


@dataclass
class Candidate:
    text: str
    source: str
    position: tuple[int, int]  # (source rank, sentence index) = reading order


def _candidates(result: RetrievalResult) -> list[Candidate]:
    out: list[Candidate] = []
    seen: set[str] = set()

    def add(text: str, source: str, rank: int) -> None:
        for i, sentence in enumerate(split_sentences(text)):
            sentence = sentence.lstrip("#-*•> \t").strip()
            if len(sentence.split()) < MIN_WORDS or sentence in seen:
                continue
            seen.add(sentence)
            out.append(Candidate(sentence, source, (rank, i)))

    rank = 0
    for chunk in result.chunks:
        add(chunk.get("text", ""), f"{chunk.get('doc_name') or chunk.get('doc_id')}, chunk {chunk.get('order', 0) + 1}",
            rank)
        rank += 1
    for summary in result.summaries:
        add(summary.get("text", ""), f"summary {summary.get('node_id')}", rank)
        rank += 1
    for entity in result.entities:
        add(entity.get("description", ""), f"entity {entity.get('name')}", rank)
        rank += 1
    for relation in result.relations:
        add(relation.get("description", ""), f"relation {relation.get('source')} – {relation.get('target')}", rank)
        rank += 1
    return out


def _lexical_prefilter(question: str, candidates: list[Candidate]) -> list[Candidate]:
    if len(candidates) <= MAX_CANDIDATES:
        return candidates
    terms = Counter(w.lower() for w in _WORD.findall(question) if w.lower() not in _STOP)

    def overlap(c: Candidate) -> float:
        words = set(w.lower() for w in _WORD.findall(c.text))
        return sum(1 for t in terms if t in words)

    scored = sorted(range(len(candidates)), key=lambda i: (-overlap(candidates[i]), i))
    return [candidates[i] for i in sorted(scored[:MAX_CANDIDATES])]


def extractive_answer(result: RetrievalResult, embed, sentences: int = 4) -> Answer:
    """Quote the ``sentences`` context sentences closest to the question, with their sources."""
    candidates = _lexical_prefilter(result.query, _candidates(result))
    if not candidates:
        return Answer("No answer: the retrieved context is empty.", "extractive", "")
    vectors = embed([result.query] + [c.text for c in candidates])
    scores = vectors[1:] @ vectors[0]
    best = sorted(np.argsort(-scores, kind="stable")[:sentences], key=lambda i: candidates[i].position)
    lines = [f"- {candidates[i].text} [{candidates[i].source}]" for i in best]
    return Answer("\n".join(lines), "extractive", "")


def cached_embedder(embed, cache: dict):
    """Wrap ``embed`` so texts seen before (e.g. by another mode of the same comparison) are reused."""
    def embed_cached(texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in cache]
        if missing:
            cache.update(zip(missing, embed(missing)))
        return np.stack([cache[t] for t in texts])
    return embed_cached


def answer(result: RetrievalResult, ws, llm: Optional[object] = None, cache: Optional[dict] = None) -> Answer:
    """The answer for a result: generated when an LLM is given, otherwise extractive."""
    if llm is not None:
        from core.llm.answers import generate_answer

        return generate_answer(llm, result)
    embed = cached_embedder(ws.embedder.embed, cache if cache is not None else {})
    return extractive_answer(result, embed, ws.settings.answer_sentences)
