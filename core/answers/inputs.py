"""Per-question inputs shared by the answer builders of all modes of one comparison.

``AnswerInputs`` holds the workspace, its knowledge graph, the sentence bank, the question frame
(answer types, IDF-weighted terms, question entities) and the question's embedding. Besides the
question's names (linked once per question, as the modes link them), that is the only vector the
answer stage needs; everything else reuses vectors stored at indexing time and already in memory:
the chunk vectors rank an entity's or a relation's source chunks so that only the few closest to
the question are read, and the relation and entity vectors say how close to the question what a
sentence states is (one dot product per relation or entity a candidate sentence names, memoised per
question). The frame and the memoised cosines live in the answers' own cache (``core.answers.cache``),
attached to the question's state: the comparison's ``QueryContext.state``, shared by all its modes.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

import numpy as np

from core.answers.cache import AnswerCache, answer_cache, question_state
from core.answers.question import QuestionFrame, make_frame, sentence_stems, stem
from core.answers.scoring import Pick, score_sentence
from core.answers.sentences import Sentence, SentenceBank, sentence_bank
from core.retrieval.query import QuestionState
from core.storage.graph_view import as_graph_view
from core.storage.ports import GraphView
from core.storage.records import node_pair

if TYPE_CHECKING:
    from core.retrieval.query import QueryContext, SeedSelection
    from core.workspace import Workspace


def question_names(ws: "Workspace", question: str, seeds: Optional["SeedSelection"] = None,
                   ctx: Optional["QueryContext"] = None) -> list[str]:
    """The names of the question that entity linking looks up offline, by the seed strategy
    (``core.retrieval.strategies``; default RAGScope's): the graph's own names found verbatim in it,
    then its name spans (as ``QueryContext.link_names``, whose result for this question ``ctx``
    already holds when it links offline with the same strategy)."""
    from core.extraction.query_terms import name_spans
    from core.retrieval.strategies import RAGSCOPE

    strategy = seeds or RAGSCOPE.seeds
    if (ctx is not None and getattr(ctx, "question", None) == question and ctx.strategies.seeds is strategy
            and getattr(ctx.keyword_extractor, "name", "") == "spacy"):
        return ctx.link_names()  # the same names, worked out once per question
    return strategy.names(ws, question, name_spans(question))


def question_entity_keys(ws: "Workspace", question: str, ctx: Optional["QueryContext"] = None) -> set[str]:
    """The question's entities in the knowledge graph: each name of the question linked as the
    modes link it (exact name, alias, containment, else that name's best vector hit; see
    ``core.retrieval.entity_linking``), keeping only the links that stand for a name of the question.
    The same for every mode and whatever ran before (the name embeddings are the comparison's cached
    ones when ``ctx`` is given)."""
    from core.retrieval.entity_linking import link_names
    from core.retrieval.registry import query_context

    link_ctx = ctx if ctx is not None and getattr(ctx, "question", None) == question else query_context(ws, question)
    s = link_ctx.settings
    strategy = link_ctx.strategies.seeds
    names = question_names(ws, question, strategy, link_ctx)
    shared = getattr(link_ctx, "state", None) or QuestionState(question)
    if strategy.shares_mode_seeds and names and shared.seed_names == names and shared.seeds is not None:
        seeds = shared.seeds  # a mode already linked exactly these names this way: the same result
    else:
        seeds = link_names(link_ctx, names, s.lightrag_top_k, s.cosine_threshold, s.seed_relative_cutoff)
    return {seed.key for seed in seeds if seed.question}


def _build_stem_idf(ws: "Workspace") -> Callable[[str], float]:
    df: dict[str, int] = {}
    for term, chunks in ws.mention_index().items():
        for word in set(_WORDS.findall(str(term).lower())):
            key = stem(word)
            df[key] = max(df.get(key, 0), len(chunks))
    total = max(1, len(ws.chunk_order()))
    default = max(1.0, total / 100)
    base = math.log(1 + total / default)

    def idf(key: str) -> float:
        return max(0.2, math.log(1 + total / max(1, df.get(key, default))) / base)
    return idf


def stem_idf(ws: "Workspace") -> Callable[[str], float]:
    """Inverse document frequency of a word stem over the chunks, from the mention index (names and
    nouns; a stem it lacks, e.g. a verb, gets the value of a word in 1% of the chunks), normalised so
    that such a word weighs 1. Built once per workspace generation."""
    return ws.views.derived(_build_stem_idf)


PAIR_KEYS = 8  # entities of a sentence whose pairs are looked up as relations
ENTITY_FACTOR = 0.5  # a sentence naming one entity: that entity's vector cosine, times this
_WORDS = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass
class AnswerInputs:
    """What every mode's answer builder reads."""

    ws: "Workspace"
    graph: GraphView
    bank: SentenceBank
    frame: QuestionFrame
    lines: int  # lines of the answer: the best sentence, then the mode's evidence lines
    ctx: Optional["QueryContext"] = None
    cache: Optional[QuestionState] = None  # the question's shared state (a new one when not given)

    def __post_init__(self) -> None:
        self.graph = as_graph_view(self.graph)
        self.cache = question_state(self.frame.text, self.cache, self.ctx)

    @property
    def _memo(self) -> AnswerCache:
        assert self.cache is not None
        return answer_cache(self.cache)

    def question_vector(self) -> np.ndarray:
        """The question's embedding (the comparison's cached one when a QueryContext is given)."""
        if self.ctx is not None and getattr(self.ctx, "question", None) == self.frame.text:
            return self.ctx.embed(self.frame.text)
        if self._memo.question_vector is None:
            self._memo.question_vector = self.ws.embedder.embed([self.frame.text])[0]
        return self._memo.question_vector

    def similarity(self, chunk_ids: Iterable[str]) -> dict[str, float]:
        """Cosine of each chunk to the question from the stored chunk vectors (a chunk's best window;
        0 for chunks without one, e.g. summaries), memoised per question."""
        return self._memoised_cosines("chunks", self._memo.chunk_similarity, chunk_ids)

    def _memoised_cosines(self, collection: str, memo: dict, keys: Iterable) -> dict:
        """``memo`` filled with the question's cosine to the stored vector of each key not in it yet
        (0 for a key without a vector): only the rows asked for are multiplied."""
        missing = [k for k in dict.fromkeys(keys) if k not in memo]
        if missing:
            vector = np.asarray(self.question_vector(), dtype=np.float32)
            memo.update(self.ws.views.vectors.cosines(collection, vector, missing))
            memo.update({k: 0.0 for k in missing if k not in memo})
        return memo

    def _pair_cosines(self, pairs: list[tuple[str, str]]) -> list[float]:
        """Cosine to the question of the stored vector of each relation (sorted key pair; 0 when the
        pair has no vector), memoised per question: only the rows asked for are multiplied."""
        memo = self._memoised_cosines("relations", self._memo.pair_cosines, pairs)
        return [memo[p] for p in pairs]

    def pair_similarity(self, a: str, b: str) -> float:
        """Cosine of the stored vector of relation a–b to the question (0 when there is none)."""
        return self._pair_cosines([node_pair(a, b)])[0]

    def relation_similarity(self, sentence: Sentence) -> float:
        """The best cosine to the question of a stored relation vector between two entities the
        sentence names (what the sentence states, as the index embedded it); 0 when it names none."""
        keys = sorted(sentence.keys)[:PAIR_KEYS]
        if len(keys) < 2:
            return self.entity_similarity(keys[0]) * ENTITY_FACTOR if keys and ENTITY_FACTOR else 0.0
        pairs = [(a, b) for i, a in enumerate(keys) for b in keys[i + 1:]]
        return max(self._pair_cosines(pairs))

    def entity_similarity(self, key: str) -> float:
        """Cosine of an entity's stored vector (name + profile) to the question (0 without one)."""
        memo = self._memo.entity_cosines
        if key not in memo:
            vector = np.asarray(self.question_vector(), dtype=np.float32)
            cosine = self.ws.views.vectors.cosine("entities", vector, key)
            memo[key] = cosine if cosine is not None else 0.0
        return memo[key]

    def score(self, sentence: Sentence, role: str, rank: int, label: str, exclude: Iterable[str] = ()) -> Pick:
        """``score_sentence`` with the similarity of what the sentence states to the question."""
        similarity = self.relation_similarity(sentence)
        return score_sentence(self.frame, sentence, self.graph, role, rank, label, similarity, frozenset(exclude),
                              memo=self._memo.sentence_parts, link=self.link(sentence),
                              meaning=self.meaning(sentence) or 0.0)

    def meaning(self, sentence: Sentence) -> Optional[float]:
        """Cosine of the question's vector to the sentence's own stored vector (pooled at indexing from
        the chunk window's token outputs); None when it has none. Lookups and one dot product per chunk,
        memoised per question."""
        memo = self._memo.sentence_cosines
        key = (sentence.chunk_id, sentence.span)
        if key not in memo:
            if sentence.span is None:
                return None
            stored = self.bank.vectors([sentence.chunk_id])[sentence.chunk_id]
            if stored:
                spans = list(stored)
                question = np.asarray(self.question_vector(), dtype=np.float32)
                cosines = np.stack([stored[s] for s in spans]) @ question
                memo.update({(sentence.chunk_id, s): float(c) for s, c in zip(spans, cosines)})
            if key not in memo:
                memo[key] = None
        return memo[key]

    def ranked_by_meaning(self, picks: Iterable[Pick]) -> bool:
        """Did any of these candidates have a sentence vector (else the ranking was the lexical one)?"""
        return any(self.meaning(p.sentence) is not None for p in picks)

    def link(self, sentence: Sentence) -> float:
        """For a question asking how its entities are connected: 1.0 when the sentence names two of
        them, 0.5 when it names one in a document named after another (the flood article's sentence on
        the lighthouse keeper's warning), else 0."""
        question = self.frame.entity_keys
        if not self.frame.connection or len(question) < 2:
            return 0.0
        named = sentence.keys & question
        if len(named) >= 2:
            return 1.0
        if not named:
            return 0.0
        document = sentence_stems((sentence.doc or sentence.cite.rsplit(", ", 1)[0]).replace("-", " ").replace("_", " "))
        for key in question - named:
            name = sentence_stems(self.graph.name(key) if key in self.graph else key)
            if name and name <= document:
                return 0.5
        return 0.0

    def closest_chunks(self, chunk_ids: Iterable[str], limit: int, first: Iterable[str] = ()) -> list[str]:
        """Up to ``limit`` of ``chunk_ids``: those also in ``first`` (the mode's own chunks) in that
        order, then the rest by cosine to the question (stored chunk vectors; no new embedding)."""
        ids = list(dict.fromkeys(chunk_ids))
        if len(ids) <= limit:
            return ids
        wanted = set(ids)
        ordered = [c for c in dict.fromkeys(first) if c in wanted][:limit]
        rest = [c for c in ids if c not in set(ordered)]
        if len(ordered) < limit and rest:
            similarity = self.similarity(rest)
            ordered += sorted(rest, key=lambda c: -similarity[c])[: limit - len(ordered)]
        return ordered


    def described(self, key: str, description: Any, role: str, label: str, own: Iterable[str], chunks: int,
                  exclude: Iterable[str] = ()) -> list[Pick]:
        """Evidence-only picks for an entity whose description the mode's context shows: the stored
        sentences naming ``key`` whose opening appears in that description, read from its ``chunks``
        source chunks closest to the question (the mode's ``own`` chunks first)."""
        if not key or key not in self.graph:
            return []
        shown = " ".join(str(description or "").split())
        ids = self.closest_chunks(self.graph.attributes(key).get("source_chunk_ids") or [], chunks, own)
        return [self.score(s, role, 0, label, exclude=exclude)
                for s in self.bank.sentences(ids) if key in s.keys and s.text[:80] in shown]

def answer_inputs(ws: "Workspace", question: str, lines: int, ctx: Optional["QueryContext"] = None,
                  cache: Optional[QuestionState] = None) -> AnswerInputs:
    """Inputs for one question; the frame is computed once per question (and workspace generation)
    and kept in the question's state (``cache``, else the comparison's ``ctx.state``)."""
    state = question_state(question, cache, ctx)
    views = ws.views
    frames = answer_cache(state).frames
    frame = frames.get(views.generation)
    if frame is None:
        frame = frames[views.generation] = make_frame(
            question, question_entity_keys(ws, question, ctx), stem_idf(ws))
    return AnswerInputs(ws, views.graph, sentence_bank(ws), frame, lines, ctx, state)
