"""Candidate sentences for offline answers, read from the sentence records stored at indexing time.

Each chunk's sentences (markup removed, typed mentions ``[label, surface, key]``) are read once per
workspace generation and kept in memory (``SentenceBank``), so no sentence is parsed per query. At
load time every mention key is resolved to its knowledge-graph entity (merged aliases:
"Brightwater" → "brightwater robotics"), and a sentence that opens with a pronoun or with "the
<noun>" ("It was bought …", "The company is headquartered …"), also after an opening time phrase
("Since 1985 the festival …", ``OPENING_TIME``), is also counted as mentioning the entity it most likely
refers to: for "the <noun>", the latest entity named in the last ``LOOKBACK`` sentences whose name that noun
heads ("the cooperative" after "… formed the Tidewater Shipping Cooperative", ``NAMED_NOUN``); else the
entity an earlier sentence of the chunk (at most ``LOOKBACK`` back) is about, of a fitting type (a person
for he/she, an ORG for "the company", a place for "the town", anything for it/they).
A sentence the parse split after a title abbreviation ("… is Hon." | "Winnie Kiiza of …") is joined on
read (``core.extraction.title_splits``; its vector is the mean of its parts' vectors), so workspaces indexed
before the indexing rule quote it whole without a re-index.
Workspaces indexed before sentence records existed fall back to the chunk text split into sentences
(``core.indexing.summarize.unparsed_sentences``), without mentions.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Optional

import numpy as np

from core.answers.question import _NOUN_TYPES, sentence_stems
from core.citations import citation_body, quote_where
from core.extraction.title_splits import join_title_rows
from core.sentence_vectors import decode_vector, sentence_spans
from core.storage.graph_view import as_graph_view

if TYPE_CHECKING:
    from core.workspace import Workspace

MIN_WORDS = 5  # shorter lines (headings, list labels) are never quoted
MAX_CHARS = 600  # a longer "sentence" (a table row run, a list) is cut for display
LOOKBACK = 4  # sentences searched backwards for the entity a pronoun refers to

_PERSONAL = frozenset("he she his her him".split())
_NEUTER = frozenset("it its they their this".split())
# the sentence's first words, after an opening time phrase ("Since 1985 the festival …", "In 2012, it …")
_OPENING = re.compile(r"^\W*(?:(?:in|since|from|by|after|before|during|until|around)\s+(?:the\s+)?\d[\ds–-]*,?\s+)?"
                      r"(\w+)(?:\s+(\w+))?", re.UNICODE | re.IGNORECASE)
OPENING_TIME = True  # an opening time phrase is skipped before the pronoun or "the <noun>" (False: the old reading)
NAMED_NOUN = True  # "the <noun>" refers first to a recent entity whose name holds the noun (False: the topic only)


@dataclass
class Sentence:
    """One stored sentence with resolved entity keys and its citation."""

    text: str
    chunk_id: str
    ord: int
    cite: str  # "document name, p. n" (the sentence's own page) or "document name, chunk n" (no pages)
    mentions: list[tuple[str, str, str]] = field(default_factory=list)  # (label, surface, resolved key)
    keys: frozenset[str] = frozenset()  # entities it names, plus the one its opening pronoun refers to
    stems: frozenset[str] = frozenset()
    refers_to: str = ""  # the entity key an opening pronoun / "the company" was resolved to
    doc: str = ""  # the document's name (the citation without its place)
    span: Optional[tuple[int, int]] = None  # characters of the chunk text it was read from (its vector's key)


def _resolve(key: str, graph: Any, aliases: Mapping[str, str]) -> str:
    if not key or key in graph:
        return key
    return aliases.get(key, key)


def _wanted_label(opening: str, second: str) -> Optional[frozenset[str]]:
    """Which labels the sentence's opening pronoun can refer to (None: no anaphora)."""
    if opening in _PERSONAL:
        return frozenset({"PERSON"})
    if opening in _NEUTER:
        return frozenset()  # any entity
    if opening == "the" and second in _NOUN_TYPES:
        return frozenset(_NOUN_TYPES[second])
    return None


def _opening(text: str) -> tuple[str, str]:
    """The sentence's first two words (lowercase), past an opening time phrase when ``OPENING_TIME``."""
    match = _OPENING.match(text) if OPENING_TIME else re.match(r"^\W*(\w+)(?:\s+(\w+))?", text, re.UNICODE)
    return (match.group(1).lower(), (match.group(2) or "").lower()) if match else ("", "")


def opening_reference(text: str) -> Optional[tuple[int, int]]:
    """Characters of the words by which the sentence's opening refers to an earlier entity ("it", "the
    festival" in "Since 1985 the festival has been organised by …"); None when it opens otherwise."""
    match = _OPENING.match(text) if OPENING_TIME else re.match(r"^\W*(\w+)(?:\s+(\w+))?", text, re.UNICODE)
    if not match or _wanted_label(match.group(1).lower(), (match.group(2) or "").lower()) is None:
        return None
    return match.start(1), match.end(2) if match.group(1).lower() == "the" else match.end(1)


def _named_by_noun(noun: str, recent: list[list[str]], graph: Any) -> str:
    """The most recent entity (of the last ``LOOKBACK`` sentences' mentions) whose name's head noun is
    ``noun``: "the cooperative" after "… formed the Tidewater Shipping Cooperative" is that cooperative, whatever
    the earlier sentence was about; "the university" is the University of Dunmore, "the bay" not the Hollow Bay
    Tidal Project ("" when none fits)."""
    for keys in reversed(recent[-LOOKBACK:]):
        for key in keys:
            if head_noun(str(graph.name(key) if key in graph else key)) == noun:
                return key
    return ""


def head_noun(name: str) -> str:
    """The head noun of a name: its last word, or the last word before "of" ("University of Dunmore")."""
    words = re.findall(r"\w+", name.lower())
    if "of" in words[1:]:
        words = words[:words.index("of", 1)]
    return words[-1] if words else ""


def _fits(key: str, label: str, labels: frozenset[str], graph: Any) -> bool:
    kind = str(graph.attributes(key).get("type", "")) if key in graph else ""
    return not labels or label in labels or kind in labels


def build_sentences(chunk_id: str, cite: str, rows: list[tuple[str, list[list[str]]]], graph: Any,
                    aliases: Mapping[str, str]) -> list[Sentence]:
    """Sentence records of one chunk with resolved keys and anaphora (see the module docstring);
    ``graph`` is a ``GraphView`` (a networkx graph is wrapped)."""
    graph = as_graph_view(graph)
    out: list[Sentence] = []
    topics: list[tuple[str, str]] = []  # per sentence: (entity it is about, that entity's label)
    named: list[list[str]] = []  # per sentence: the entities it names, in order
    for ord_, (text, mentions) in enumerate(rows):
        text = " ".join(str(text).split())
        if len(text) > MAX_CHARS:
            text = text[:MAX_CHARS].rsplit(" ", 1)[0] + " …"
        resolved = [(str(m[0]), str(m[1]), _resolve(str(m[2]) if len(m) > 2 else "", graph, aliases))
                    for m in mentions if len(m) >= 2]
        sentence = Sentence(text, chunk_id, ord_, cite, resolved, frozenset(k for _, _, k in resolved if k),
                            sentence_stems(text))
        opening, second = _opening(text)
        labels = _wanted_label(opening, second) if opening else None
        topic = ("", "")
        by_noun = _named_by_noun(second, named, graph) if NAMED_NOUN and labels and opening == "the" else ""
        if by_noun:
            sentence.refers_to = by_noun
            sentence.keys = sentence.keys | {by_noun}
            kind = str(graph.attributes(by_noun).get("type", "")) if by_noun in graph else ""
            topic = (by_noun, kind)
        elif labels is not None:
            for key, label in reversed(topics[-LOOKBACK:]):
                if key and _fits(key, label, labels, graph):
                    sentence.refers_to = key
                    sentence.keys = sentence.keys | {key}
                    topic = (key, label)
                    break
        else:
            first = next(((label, key) for label, _, key in resolved if key), None)
            if first is not None:
                topic = (first[1], first[0])
        topics.append(topic)
        named.append([k for _, _, k in resolved if k] + ([sentence.refers_to] if sentence.refers_to else []))
        out.append(sentence)
    return [s for s in out if len(s.text.split()) >= MIN_WORDS]


class SentenceBank:
    """Sentences per chunk, loaded on demand and kept for the workspace generation."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.graph = ws.views.graph
        self.aliases = self.graph.aliases()
        self.by_chunk: dict[str, list[Sentence]] = {}
        self.vectors_by_chunk: dict[str, dict[tuple[int, int], np.ndarray]] = {}
        # chunk -> span of a sentence joined on read (``join_title_rows``) -> the stored spans it is made of
        self.joined: dict[str, dict[tuple[int, int], list[tuple[int, int]]]] = {}
        self.lock = threading.Lock()

    def get(self, chunk_ids: Iterable[str]) -> dict[str, list[Sentence]]:
        """Sentences of each chunk (chunks that vanished map to nothing)."""
        ids = list(dict.fromkeys(chunk_ids))
        missing = [c for c in ids if c not in self.by_chunk]
        if missing:
            self._load(missing)
        return {c: self.by_chunk.get(c, []) for c in ids}

    def sentences(self, chunk_ids: Iterable[str]) -> list[Sentence]:
        """All sentences of these chunks, chunk by chunk in the given order."""
        return [s for sentences in self.get(chunk_ids).values() for s in sentences]

    def vectors(self, chunk_ids: Iterable[str]) -> dict[str, dict[tuple[int, int], np.ndarray]]:
        """Stored sentence vectors of each chunk by span (empty for a chunk without any: indexed before
        they were stored, or with an embedder that gives no token outputs), read once per generation."""
        ids = list(dict.fromkeys(chunk_ids))
        missing = [c for c in ids if c not in self.vectors_by_chunk]
        if missing:
            with self.lock:
                rows = self.ws.records.sentence_vectors(missing)
            for chunk_id in missing:
                vectors = {(a, b): decode_vector(data) for a, b, data in rows.get(chunk_id, [])}
                for span, pieces in self.joined.get(chunk_id, {}).items():
                    if span not in vectors and pieces and all(p in vectors for p in pieces):
                        pooled = np.mean([vectors[p] for p in pieces], axis=0)  # its stored parts' mean
                        vectors[span] = pooled / (np.linalg.norm(pooled) or 1.0)
                self.vectors_by_chunk[chunk_id] = vectors
        return {c: self.vectors_by_chunk[c] for c in ids}

    def _load(self, chunk_ids: list[str]) -> None:
        records = self.ws.records
        chunks = records.chunks_by_id(chunk_ids)
        names = self.ws.doc_names()
        with self.lock:
            rows = records.chunk_sentences(chunk_ids)
            positions = records.positions({c.doc_id for c in chunks.values()})
        for chunk_id in chunk_ids:
            chunk = chunks.get(chunk_id)
            if chunk is None:
                self.by_chunk[chunk_id] = []
                continue
            doc = names.get(chunk.doc_id, chunk.doc_id)
            stored = rows.get(chunk_id)
            if stored is None:  # indexed before sentence records existed: plain sentences, no mentions
                from core.indexing.summarize import unparsed_sentences

                stored = [(s, []) for s in unparsed_sentences(chunk.text)]
            original = sentence_spans(chunk.text, [text for text, _ in stored])  # as the vectors were keyed
            stored, parts = join_title_rows(stored)  # a sentence split at "Hon." (indexed before the rule)
            spans = [_joined_span([original[i] for i in group]) for group in parts]
            for span, group in zip(spans, parts):
                if len(group) > 1 and span is not None:
                    self.joined.setdefault(chunk_id, {})[span] = [part for part in (original[i] for i in group) if part]
            built = build_sentences(chunk_id, citation_body(doc, None, None, int(chunk.order)), stored,
                                    self.graph, self.aliases)
            for sentence in built:
                sentence.doc = doc
                sentence.span = spans[sentence.ord] if sentence.ord < len(spans) else None
                where = quote_where(positions.get(chunk.doc_id), chunk.start_char, chunk.text, sentence.text)
                if any(part is not None for part in where):
                    sentence.cite = citation_body(doc, where.page_start, where.page_end, None, where.section,
                                                  where.line_start, where.line_end)
            self.by_chunk[chunk_id] = built


def _joined_span(spans: list[Optional[tuple[int, int]]]) -> Optional[tuple[int, int]]:
    """The span from the first stored sentence's start to the last one's end (None when one is not found)."""
    first, last = (spans[0], spans[-1]) if spans else (None, None)
    if first is None or last is None or any(span is None for span in spans):
        return None
    return first[0], last[1]


def sentence_bank(ws: Workspace) -> SentenceBank:
    """The workspace's sentence bank for its current generation (rebuilt after any index change)."""
    return ws.views.derived(SentenceBank)
