"""Terms of a question, extracted offline with the same spaCy pipeline as the indexes.

* ``query_entities`` — the E2GraphRAG tree mode's query entities: exactly the mention-graph
  extractor (named entities keyed by ``normalize_name`` + NOUN/PROPN lemmas outside them).
* ``offline_keywords`` — LightRAG's (low-level, high-level) keywords without an LLM:
  low-level = named-entity and proper-noun spans (surface text), high-level = the remaining
  noun chunks, lemmatised, without determiners, wh-words or stop words.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

from core.extraction.nlp import NAME_LABELS, display_name, load_nlp, normalize_name, parse_texts
from core.extraction.spacy_extract import prepare_text, sentence_occurrences

# Numeric entity labels are not useful search keys ("two", "first"); other labels are kept.
_SKIPPED_LOW_LABELS = frozenset({"CARDINAL", "ORDINAL"})
_WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})
_LABELLED = "ragscope.labelled_query_entities"  # the key of their memo in the parse's ``user_data``
_DROPPED_POS = frozenset({"DET", "PRON", "PUNCT", "PART", "ADP", "CCONJ", "SCONJ", "NUM", "SYM", "SPACE", "X"})


@lru_cache(maxsize=64)
def _parse(question: str) -> Any:
    """Parse a question once (several modes of one comparison ask for its terms)."""
    text, _ = prepare_text(question)
    return parse_texts([text])[0]


def parse_question(question: str) -> Any:
    """The question's spaCy parse (the same cached parse the keywords and names come from)."""
    return _parse(question)


def query_entities(question: str, entity_types: Iterable[str]) -> list[str]:
    """Mention-graph terms of the question, deduplicated, in order of first appearance."""
    return [term for term, _ in labelled_query_entities(question, entity_types)]


def labelled_query_entities(question: str, entity_types: Iterable[str]) -> list[tuple[str, str]]:
    """(term, label) of the question's mention-graph terms: an entity label, or NOUN/PROPN."""
    if not (question or "").strip():
        return []
    doc = _parse(question)
    types = tuple(entity_types)
    memo = doc.user_data.get((_LABELLED, types))  # kept on the parse: the tree mode asks three times
    if memo is None:
        seen: dict[str, str] = {}
        for occurrences in sentence_occurrences(doc, list(types)):
            for occ in occurrences:
                seen.setdefault(occ.term, occ.label)
        memo = doc.user_data[(_LABELLED, types)] = tuple(seen.items())
    return list(memo)


def _low_level_spans(doc: Any) -> list[tuple[int, int]]:
    """Token ranges of named entities (non-numeric labels) and of PROPN runs outside them."""
    spans: list[tuple[int, int]] = []
    covered: set[int] = set()
    for ent in doc.ents:
        if ent.label_ in _SKIPPED_LOW_LABELS:
            continue
        spans.append((ent.start, ent.end))
        covered.update(range(ent.start, ent.end))
    i = 0
    while i < len(doc):
        if doc[i].pos_ == "PROPN" and i not in covered:
            j = i
            while j < len(doc) and doc[j].pos_ == "PROPN" and j not in covered:
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return sorted(spans)


def _chunk_phrase(chunk: Any, excluded: set[int], stop_words: frozenset[str]) -> str:
    words: list[str] = []
    for token in chunk:
        if token.i in excluded or token.pos_ in _DROPPED_POS or token.tag_ in _WH_TAGS:
            continue
        if token.is_stop or token.like_num:
            continue
        lemma = token.lemma_.casefold().strip()
        if len(lemma) < 2 or lemma in stop_words or not any(ch.isalpha() for ch in lemma):
            continue
        words.append(lemma)
    return " ".join(words)


def name_spans(question: str) -> list[str]:
    """The low-level keywords of a question that name things (named entities of name labels and
    proper-noun runs, at least one capital letter), without values such as dates or amounts: what
    entity linking looks up. Two names one lowercase word apart are also offered joined, first
    ("Bastien", "Bastienne" → "Bastien und Bastienne"): the small model often splits such titles."""
    if not (question or "").strip():
        return []
    doc = _parse(question)
    values = {(e.start, e.end) for e in doc.ents if e.label_ not in NAME_LABELS}
    spans = [(s, e) for s, e in _low_level_spans(doc) if (s, e) not in values
             and any(ch.isupper() for ch in doc[s:e].text)]
    out: list[str] = []
    for (s1, e1), (s2, e2) in zip(spans, spans[1:]):
        gap = doc[e1:s2]
        if len(gap) == 1 and gap[0].is_alpha and gap[0].text.islower():
            joined = display_name(doc[s1:e2].text)
            if joined and joined not in out:
                out.append(joined)
    for start, end in spans:
        surface = display_name(doc[start:end].text)
        if surface and normalize_name(surface) and surface not in out:
            out.append(surface)
    return out


def offline_keywords(question: str) -> tuple[list[str], list[str]]:
    """(low_level, high_level) keywords of a question, deterministic.

    If both lists come out empty the stripped question itself is the one low-level keyword
    (an empty question gives two empty lists).
    """
    stripped = (question or "").strip()
    if not stripped:
        return [], []
    doc = _parse(question)
    low: list[str] = []
    low_keys: set[str] = set()
    excluded: set[int] = set()
    for start, end in _low_level_spans(doc):
        excluded.update(range(start, end))
        surface = display_name(doc[start:end].text)
        key = normalize_name(surface)
        if key and key not in low_keys:
            low_keys.add(key)
            low.append(surface)
    high: list[str] = []
    stop_words = frozenset(load_nlp().Defaults.stop_words)
    for chunk in doc.noun_chunks:
        phrase = _chunk_phrase(chunk, excluded, stop_words)
        if phrase and phrase not in high and phrase not in low_keys:
            high.append(phrase)
    if not low and not high:
        low = [stripped]
    return low, high
