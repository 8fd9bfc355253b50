"""Offline extraction with spaCy: one parse per chunk feeds both graphs.

* E2GraphRAG mention graph (``MentionRecord``): named entities of the configured types
  (keyed by ``normalize_name``) plus NOUN/PROPN lemmas of the tokens outside those entities;
  occurrence counts per chunk and sentence-level co-occurrence counts.
* Offline knowledge graph: one ``EntityRecord`` per distinct entity key of the chunk (profile =
  the sentences mentioning it) and one ``RelationRecord`` per pair of entities co-occurring in a
  sentence (keywords = content-word lemmas on the dependency path between them).

* Sentence records (``SentenceRecord``): every sentence with its typed mentions (names and values:
  DATE, MONEY, CARDINAL …), kept so that offline answers find "a sentence with a date near the
  bridge entity" without parsing anything per query.

The text parsed is ``core.extraction.markup.plain_text(chunk)`` (Markdown removed, blocks as
paragraphs), each paragraph parsed on its own (``core.extraction.nlp.parse_texts``), with the
entity spans cleaned by the pipeline's ``ragscope_entity_spans`` component.

Everything is deterministic: records come out in order of first appearance in the chunk.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import combinations
from typing import Any, Callable, Iterable, Optional

import numpy as np

from core.extraction.nlp import MAX_PARSE_CHARS, NAME_LABELS, TITLE_LABEL, display_name, load_nlp, normalize_name, parse_texts  # first: spaCy without torch
from spacy.attrs import HEAD, IS_STOP, LEMMA, POS
from spacy.symbols import ADJ, AUX, NOUN, PROPN, VERB

from core.extraction.markup import plain_text
from core.extraction.title_splits import join_title_spans
from core.types import ChunkExtraction, EntityRecord, MentionRecord, RelationRecord, SentenceRecord

TERM_POS = frozenset({"NOUN", "PROPN"})
# Co-occurrence pairs grow quadratically with the terms of a sentence: only the first 30 distinct
# terms of a sentence are paired (at most 435 pairs), so run-on "sentences" (tables, lists, a 50k
# character line) cannot blow up the mention graph. Occurrence counts still include every term.
MAX_TERMS_PER_SENTENCE = 30
# Same idea for relations: the first 20 distinct entities of a sentence (at most 190 pairs).
MAX_ENTITIES_PER_SENTENCE = 20
MAX_DESCRIPTION_SENTENCES = 3  # sentences kept in an entity's / a relation's chunk-level profile
MAX_SENTENCE_CHARS = 1000  # a longer "sentence" is cut (word boundary, "…") inside descriptions
_WORD = re.compile(r"^[^\W\d_]+(?:[-'’][^\W\d_]+)*$")  # letters, with inner hyphens/apostrophes
_WS = re.compile(r"\s+")


@dataclass
class Occurrence:
    """One term occurrence: the mention-graph term, its label, and the entity span (None for nouns)."""

    term: str
    label: str
    span: Any = None


@dataclass
class _EntityInfo:
    surfaces: Counter = field(default_factory=Counter)
    labels: Counter = field(default_factory=Counter)
    sentences: list[int] = field(default_factory=list)


@dataclass
class _RelationInfo:
    keywords: list[str] = field(default_factory=list)
    descriptions: list[str] = field(default_factory=list)
    weight: float = 0.0


def _most_frequent(counter: dict[str, int]) -> str:
    """The most frequent key; ties go to the key seen first (dicts keep insertion order)."""
    best, best_count = "", -1
    for key, count in counter.items():
        if count > best_count:
            best, best_count = key, count
    return best


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    return frozenset(load_nlp().Defaults.stop_words)


_POS_NAMES = {NOUN: "NOUN", PROPN: "PROPN"}
_TERM_POS_IDS = frozenset({NOUN, PROPN})
_KEYWORD_POS_IDS = frozenset({VERB, NOUN, ADJ, PROPN})
_FALLBACK_POS_IDS = frozenset({VERB, AUX})
_MODIFIER_DEPS = frozenset({"amod", "compound"})
_LEMMA_CACHE: dict[int, str] = {}  # lemma hash -> casefolded lemma if it is a usable word, else ""


class TokenTable:
    """Per-Doc arrays of POS ids, stop flags, lemma hashes and absolute heads.

    Reading these once (``Doc.to_array``) avoids creating a ``Token`` object per token, which
    was the main Python-side cost of extraction; results are the same as the Token attributes.
    """

    def __init__(self, doc: Any) -> None:
        self.strings = doc.vocab.strings
        if len(doc):
            arr = doc.to_array([POS, IS_STOP, LEMMA, HEAD])
            self.pos = arr[:, 0].tolist()
            self.stop = arr[:, 1].tolist()
            self.lemma = arr[:, 2].tolist()
            self.head = (arr[:, 3].view(np.int64) + np.arange(len(doc), dtype=np.int64)).tolist()
        else:
            self.pos, self.stop, self.lemma, self.head = [], [], [], []

    def word(self, i: int) -> str:
        """The casefolded lemma of token ``i`` if it is a usable word (≥ 2 letters, no digits,
        not a stop word), else ""."""
        h = self.lemma[i]
        cached = _LEMMA_CACHE.get(h)
        if cached is None:
            lemma = self.strings[h].casefold()
            ok = len(lemma) > 1 and _WORD.match(lemma) is not None and lemma not in _stop_words()
            cached = lemma if ok else ""
            if len(_LEMMA_CACHE) > 500_000:
                _LEMMA_CACHE.clear()
            _LEMMA_CACHE[h] = cached
        return cached

    def term(self, i: int) -> str:
        """The mention-graph term of a non-entity token, or "" when it is not a kept noun."""
        if self.pos[i] not in _TERM_POS_IDS or self.stop[i]:
            return ""
        return self.word(i)

    def keyword(self, i: int) -> str:
        """The relation keyword of token ``i`` (VERB/NOUN/ADJ/PROPN content word), or ""."""
        if self.pos[i] not in _KEYWORD_POS_IDS or self.stop[i]:
            return ""
        return self.word(i)

    def fallback(self, i: int) -> str:
        """The lemma of a verb/auxiliary root (stop words allowed), or ""."""
        if self.pos[i] not in _FALLBACK_POS_IDS:
            return ""
        lemma = self.strings[self.lemma[i]].casefold()
        return lemma if _WORD.match(lemma) else ""

    def path(self, a: int, b: int) -> list[int]:
        """Token indices from ``a`` up to the lowest common ancestor and down to ``b`` (both ends
        included); empty when the two tokens share no ancestor (different sentences)."""
        head = self.head
        chain = [a]
        while head[chain[-1]] != chain[-1]:
            chain.append(head[chain[-1]])
        index = {tok: n for n, tok in enumerate(chain)}
        down: list[int] = []
        tok = b
        while tok not in index:
            down.append(tok)
            if head[tok] == tok:
                return []
            tok = head[tok]
        return chain[: index[tok] + 1] + down[::-1]


def sentence_occurrences(
    doc: Any, entity_types: Iterable[str], table: Optional[TokenTable] = None, sents: Optional[list[Any]] = None
) -> list[list[Occurrence]]:
    """Per sentence of a parsed Doc, its term occurrences in text order.

    An entity of a kept type is one occurrence (term = ``normalize_name``); its tokens are never
    counted again as nouns. An entity crossing a sentence boundary belongs to the sentence where
    it starts. Entities whose name normalises to "" (pure digits, punctuation) are skipped.
    """
    kept = set(entity_types) | {TITLE_LABEL}
    table = table or TokenTable(doc)
    covered = bytearray(len(doc))
    starts: dict[int, Occurrence] = {}
    for ent in doc.ents:
        if ent.label_ not in kept:
            continue
        covered[ent.start : ent.end] = b"\x01" * (ent.end - ent.start)
        key = normalize_name(ent.text)
        if key:
            starts[ent.start] = Occurrence(key, ent.label_, ent)
    result: list[list[Occurrence]] = []
    for sent in doc.sents if sents is None else sents:
        occurrences: list[Occurrence] = []
        for i in range(sent.start, sent.end):
            occ = starts.get(i)
            if occ is not None:
                occurrences.append(occ)
            elif not covered[i]:
                lemma = table.term(i)
                if lemma:
                    occurrences.append(Occurrence(lemma, _POS_NAMES[table.pos[i]]))
        result.append(occurrences)
    return result


def _sentence_text(doc_text: str, sent: Any) -> str:
    text = _WS.sub(" ", doc_text[sent.start_char : sent.end_char]).strip()
    if len(text) > MAX_SENTENCE_CHARS:
        cut = text[:MAX_SENTENCE_CHARS]
        space = cut.rfind(" ")
        text = (cut[:space] if space > MAX_SENTENCE_CHARS // 2 else cut).rstrip() + "…"
    return text


def _mention_record(per_sentence: list[list[Occurrence]]) -> MentionRecord:
    counts: dict[str, int] = {}
    label_counts: dict[str, dict[str, int]] = {}
    cooccurrence: dict[tuple[str, str], int] = {}
    for occurrences in per_sentence:
        distinct: dict[str, None] = {}
        for occ in occurrences:
            term = occ.term
            counts[term] = counts.get(term, 0) + 1
            by_label = label_counts.setdefault(term, {})
            by_label[occ.label] = by_label.get(occ.label, 0) + 1
            distinct[term] = None
        terms = list(distinct)[:MAX_TERMS_PER_SENTENCE]
        for a, b in combinations(terms, 2):
            pair = (a, b) if a < b else (b, a)
            cooccurrence[pair] = cooccurrence.get(pair, 0) + 1
    labels: dict[str, str] = {}
    for term, by_label in label_counts.items():
        # A term the NER labelled at least once keeps its (most frequent) entity label.
        named = {lab: n for lab, n in by_label.items() if lab not in TERM_POS}
        labels[term] = _most_frequent(named or by_label)
    return MentionRecord(counts=counts, labels=labels, cooccurrence=cooccurrence)


def relation_keywords(
    table: TokenTable, a_span: Any, b_span: Any, sent: Any, entity_tokens: set[int]
) -> list[str]:
    """Lemmas of content words on the dependency path between the roots of two entity spans.

    Tokens of any kept named entity of the sentence (``entity_tokens``) are skipped, so partial
    names never become keywords. A noun on the path brings its adjective and compound modifiers
    first ("native language", not just "language": RAGScope's choice, so that the high-level
    keywords of a question meet the words of the relation). Falls back to the sentence root's
    lemma when it is a verb (or auxiliary) and the path has no content word.
    """
    keywords: list[str] = []
    doc = a_span.doc
    for i in table.path(a_span.root.i, b_span.root.i):
        if i in entity_tokens:
            continue
        lemma = table.keyword(i)
        if not lemma:
            continue
        if table.pos[i] == NOUN:
            for child in doc[i].lefts:
                if child.dep_ in _MODIFIER_DEPS and child.i not in entity_tokens:
                    modifier = table.keyword(child.i)
                    if modifier and modifier not in keywords:
                        keywords.append(modifier)
        if lemma not in keywords:
            keywords.append(lemma)
    if not keywords:
        root = sent.root.i
        lemma = table.fallback(root) if root not in entity_tokens else ""
        if lemma:
            keywords.append(lemma)
    return keywords


def _cap_join(sentences: list[str]) -> str:
    return " ".join(sentences[:MAX_DESCRIPTION_SENTENCES])


def extract_doc(doc: Any, entity_types: Iterable[str], dropped: Optional[list[str]] = None) -> ChunkExtraction:
    """Build the mention record, entities and relations of one parsed chunk."""
    sents = join_title_spans(doc, list(doc.sents))  # no sentence ends at "Hon." before a name
    doc_text = doc.text  # Doc.text re-joins every token on each access: read it once
    table = TokenTable(doc)
    per_sentence = sentence_occurrences(doc, entity_types, table, sents)
    mentions = _mention_record(per_sentence)

    entities: dict[str, _EntityInfo] = {}
    texts: dict[int, str] = {}

    def sentence_text(s_idx: int) -> str:
        if s_idx not in texts:
            texts[s_idx] = _sentence_text(doc_text, sents[s_idx])
        return texts[s_idx]

    pending: dict[tuple[str, str], _RelationInfo] = {}
    for s_idx, occurrences in enumerate(per_sentence):
        first_span: dict[str, Any] = {}
        entity_tokens: set[int] = set()
        for occ in occurrences:
            if occ.span is None:
                continue
            info = entities.setdefault(occ.term, _EntityInfo())
            info.surfaces[display_name(occ.span.text) or occ.term] += 1
            info.labels[occ.label] += 1
            if not info.sentences or info.sentences[-1] != s_idx:
                info.sentences.append(s_idx)
            first_span.setdefault(occ.term, occ.span)
            entity_tokens.update(range(occ.span.start, occ.span.end))
        if len(first_span) < 2:
            continue
        text = sentence_text(s_idx)
        keys = list(first_span)[:MAX_ENTITIES_PER_SENTENCE]
        for a, b in combinations(keys, 2):
            if b < a:
                a, b = b, a
            rel = pending.setdefault((a, b), _RelationInfo())
            for kw in relation_keywords(table, first_span[a], first_span[b], sents[s_idx], entity_tokens):
                if kw not in rel.keywords:
                    rel.keywords.append(kw)
            if text not in rel.descriptions:
                rel.descriptions.append(text)
            rel.weight += 1.0

    sentence_records = _sentence_records(doc, sents, sentence_text, set(entity_types) | {TITLE_LABEL})
    names = {key: _most_frequent(info.surfaces) for key, info in entities.items()}
    entity_records: list[EntityRecord] = []
    for key, info in entities.items():
        described: list[str] = []
        for s_idx in info.sentences:
            text = sentence_text(s_idx)
            if text and text not in described and normalize_name(text) != key:  # not the bare title line
                described.append(text)
            if len(described) >= MAX_DESCRIPTION_SENTENCES:
                break
        entity_records.append(EntityRecord(names[key], _most_frequent(info.labels), _cap_join(described),
                                           type_votes=dict(info.labels)))
    relation_records = [
        RelationRecord(names[a], names[b], rel.keywords, _cap_join(rel.descriptions), rel.weight)
        for (a, b), rel in pending.items()
    ]
    return ChunkExtraction(entities=entity_records, relations=relation_records, mentions=mentions,
                           dropped=list(dropped or []), sentences=sentence_records)


def _sentence_records(doc: Any, sents: list[Any], sentence_text: Any, kept: set[str]) -> list[SentenceRecord]:
    """Each sentence's text with its typed mentions: [label, surface, key] (key only for kept names)."""
    by_sentence: dict[int, list[list[str]]] = {}
    starts = [s.start for s in sents]
    s_idx = 0
    for ent in doc.ents:
        while s_idx + 1 < len(starts) and starts[s_idx + 1] <= ent.start:
            s_idx += 1
        surface = " ".join(ent.text.split())
        key = normalize_name(ent.text) if ent.label_ in kept and ent.label_ in NAME_LABELS else ""
        by_sentence.setdefault(s_idx, []).append([ent.label_, surface, key])
    records = []
    for i in range(len(sents)):
        text = sentence_text(i)
        if text:
            records.append(SentenceRecord(text, by_sentence.get(i, [])))
    return records


def prepare_text(text: Optional[str], limit: Optional[int] = None) -> tuple[str, list[str]]:
    """Cut a text longer than ``limit`` (default ``MAX_PARSE_CHARS``; at a space when possible)
    and say so in the returned notes."""
    text = text or ""
    limit = MAX_PARSE_CHARS if limit is None else limit
    if len(text) <= limit:
        return text, []
    cut = text[:limit]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut, [f"text cut from {len(text)} to {len(cut)} characters before parsing"]


def extract_chunks(
    texts: list[str], entity_types: list[str], batch_size: int = 32, n_process: int = 1,
    titles: Optional[list[Optional[str]]] = None, on_parsed: Optional[Callable[[int, int], None]] = None,
) -> list[ChunkExtraction]:
    """Parse each chunk once (``nlp.pipe``) and return one ``ChunkExtraction`` per text, in order.

    ``n_process > 1`` starts worker processes (spaCy multiprocessing); it only pays off for
    large batches, so small inputs are parsed in-process. Outputs do not depend on either knob.
    ``titles[i]`` is the document title text ``i`` starts with, if any (see ``parse_texts``).
    """
    if not texts:
        return []
    prepared = [prepare_text(plain_text(t)) for t in texts]
    workers = n_process if n_process > 1 and len(texts) >= 4 * batch_size else 1
    docs = parse_texts([t for t, _ in prepared], batch_size=batch_size, n_process=workers,
                       titles=[plain_text(t) if t else None for t in titles] if titles else None,
                       on_parsed=on_parsed)
    return [extract_doc(doc, entity_types, notes) for doc, (_, notes) in zip(docs, prepared)]
