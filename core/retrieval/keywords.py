"""Keyword extractors behind one interface: offline (spaCy) now, LLM JSON keywords with offline fallback."""
from __future__ import annotations

from core.extraction.query_terms import offline_keywords


class OfflineKeywords:
    """LightRAG's dual-level keywords from spaCy: entity/proper-noun spans are low-level,
    other lemmatised noun chunks high-level; the question itself when both are empty."""

    name = "spacy"
    last_usage: dict[str, int] = {}

    def extract(self, question: str) -> tuple[list[str], list[str]]:
        return offline_keywords(question)
