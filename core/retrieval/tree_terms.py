"""The tree mode's query terms, RAGScope's way (``core.retrieval.strategies.NamedTreeQuery``): the
question's names linked to the mention graph, its rare nouns as extra occurrence weights, and the
count of question terms per chunk used to break E2GraphRAG's ties. Below the tree mode and the
strategy module, so it imports neither."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from core.extraction.query_terms import labelled_query_entities, name_spans
from core.retrieval.entity_linking import dictionary_names, link_names
from core.retrieval.query import QueryContext


# RAGScope: rare nouns of the question (in at most max(RARE_NOUN_CHUNKS, RARE_NOUN_SHARE of the chunks))
# also count in the occurrence weights of the global branch, though never in the local branch's pairs
RARE_NOUN_CHUNKS = 10
RARE_NOUN_SHARE = 0.01


@dataclass
class QuestionTermCounts:
    """A question's term count per chunk, worked out once (kept in ``QuestionState.attached``)."""

    by_chunk: Optional[dict[str, float]] = None


def question_term_counts(ctx: QueryContext) -> dict[str, float]:
    """chunk id → how many of the question's mention-graph terms (names and every noun) it holds,
    read from the mention index (no embedding): RAGScope's tie-break for chunks that E2GraphRAG's
    ranking leaves tied, where the paper falls back to corpus order."""
    memo = ctx.state.attached(QuestionTermCounts)
    if memo.by_chunk is None:
        index = ctx.ws.views.mention_index
        counts: dict[str, float] = {}
        for term, _ in labelled_query_entities(ctx.question, ctx.settings.entity_types):
            for chunk_id in index.get(term, {}):
                counts[chunk_id] = counts.get(chunk_id, 0.0) + 1.0
        memo.by_chunk = counts
    return memo.by_chunk


def rare_nouns(ctx: QueryContext) -> list[str]:
    """The question's rare nouns: they weigh occurrences (a bridge chunk holds "airport", "hotel")
    without pairing with everything in the local branch as common nouns would."""
    index = ctx.ws.mention_index()
    limit = max(RARE_NOUN_CHUNKS, RARE_NOUN_SHARE * len(ctx.ws.chunk_order()))
    return [t for t, label in labelled_query_entities(ctx.question, ctx.settings.entity_types)
            if label in ("NOUN", "PROPN") and 0 < len(index.get(t, {})) <= limit]


def named_query_terms(ctx: QueryContext, graph: Any) -> tuple[list[str], list[str]]:
    """RAGScope's query entities: the question's names only, linked to the graph by name, alias or
    containment (``core.retrieval.entity_linking``, no embedding): a common noun ("city", "person",
    "language") pairs with everything within h hops and floods the local branch with unrelated
    chunks, and an exact name ("Philbrook Museum") may be indexed under a longer one ("Philbrook
    Museum of Art"). Also returns the nouns left out."""
    labelled = labelled_query_entities(ctx.question, ctx.settings.entity_types)
    s = ctx.settings
    if not ctx.strategies.paper and getattr(ctx.keyword_extractor, "name", "") == "spacy":
        names = ctx.link_names()  # the same list (RAGScope's names, offline), once per question
    else:
        names = list(dict.fromkeys(dictionary_names(ctx.ws, ctx.question) + name_spans(ctx.question)))
    seeds = link_names(ctx, names, s.lightrag_top_k, s.cosine_threshold, s.seed_relative_cutoff, vectors=False)
    terms = [seed.key for seed in seeds if seed.key in graph]
    terms += [term for term, label in labelled if label not in ("NOUN", "PROPN") and term in graph]
    terms = list(dict.fromkeys(terms))
    dropped = [term for term, label in labelled if label in ("NOUN", "PROPN") and term not in terms]
    return terms, dropped


