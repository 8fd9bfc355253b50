"""RAGScope's choices and the papers' own, as small strategy objects chosen once per query.

Where LightRAG, PathRAG and E2GraphRAG leave a step open (or where their choice measured worse
offline), RAGScope makes its own choice. Each such step is one strategy pair below; the setting
``paper_strict`` picks the papers' member of every pair, and this module is the only place outside
the settings that reads it: ``strategies_for(settings)`` returns one ``Strategies`` bundle, which
``core.retrieval.registry.query_context`` passes to the ``QueryContext`` it builds (``ctx.strategies``)
and every mode asks. The protocols each member follows, the bundle and the records they return are
the question object's (``core.retrieval.query``), so the modes and searches below need not import
this module.

============== ============================================ =========================================
step           RAGScope                                     paper
============== ============================================ =========================================
seeds          ``LinkedNames``: each name of the question   ``JoinedSearch``: the keywords joined
               linked by name, alias, containment or its    with ", ", one vector search, top-N
               own vector search (``entity_linking``)       above the cosine threshold
relations      ``AnchoredRelations``: cosine + a bonus for  ``CosineRelations``: cosine to the
               touching a question entity (``anchoring``)   joined high-level keywords
paths          ``QuestionFirstPaths``: question entities    ``ReliabilityPaths``: top-N nodes of
               as seeds, paths on them first, missing       the joined keywords, reliability only
               pairs connected (``path_seeds``)
evidence       ``OwnerThenCosine``: owner score + cosine,   ``CosineOnly``: cosine to the question,
               closest source chunks first, off-question    corpus order, a summary's leaves at
               summary leaves after every item              its position
tree query     ``NamedTreeQuery``: the question's names     ``EveryTermTreeQuery``: every
               (+ rare nouns weigh occurrences)             mention-graph term of the question
============== ============================================ =========================================
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence

from core.extraction.query_terms import labelled_query_entities
from core.retrieval.entity_linking import dictionary_names, link_names, strict_hits
from core.retrieval.lightrag_search import anchored_hits, vector_hits
from core.retrieval.path_seeds import (connect_question_pairs, paper_nodes, question_priority, ragscope_nodes,
                                       reliability_text, why_kept)
from core.retrieval.query import NodeChoice, RelationSearch, Strategies
from core.retrieval.tree_terms import named_query_terms, question_term_counts, rare_nouns

if TYPE_CHECKING:
    from core.retrieval.path_flow import ScoredPath
    from core.retrieval.query import QueryContext, Seed, Stopwatch
    from core.storage.ports import GraphView
    from core.trace import TraceEvent
    from core.types import RetrievalResult
    from core.workspace import Workspace

STRICT_SETTING = "paper_strict"  # the setting that selects the papers' strategies


# --- seed selection ------------------------------------------------------------------------------
class LinkedNames:
    """RAGScope: the graph's own names found in the question, then its name spans, each linked alone."""

    shares_mode_seeds = True

    def names(self, ws: Workspace, question: str, spans: Sequence[str],
              before_parse: Optional[Sequence[str]] = None) -> list[str]:
        found = self.names_before_parse(ws, question) if before_parse is None else list(before_parse)
        return list(dict.fromkeys(found + list(spans)))

    def names_before_parse(self, ws: Workspace, question: str) -> list[str]:
        return dictionary_names(ws, question)

    def seeds(self, ctx: QueryContext, names: Sequence[str], fallback_terms: Sequence[str], top_n: int,
              fill: bool) -> list[Seed]:
        s = ctx.settings
        if not names:
            return strict_hits(ctx, list(fallback_terms), top_n, s.cosine_threshold)
        linked = link_names(ctx, names, top_n, s.cosine_threshold, s.seed_relative_cutoff)
        if not fill:
            return linked
        taken = {seed.key for seed in linked}
        extra = [seed for seed in strict_hits(ctx, list(names), top_n, s.cosine_threshold) if seed.key not in taken]
        return (linked + extra)[:top_n]

    def describe(self, has_names: bool, fill: bool) -> str:
        if not has_names:
            return "no name in the question: the keywords joined into one search"
        return "each name of the question linked by name, alias, containment or its own vector search" + (
            ", then the paper's joined search" if fill else "")


class JoinedSearch:
    """The papers: the name spans (or the keywords) joined with ", " into one vector search."""

    shares_mode_seeds = False

    def names(self, ws: Workspace, question: str, spans: Sequence[str],
              before_parse: Optional[Sequence[str]] = None) -> list[str]:
        return list(spans)

    def names_before_parse(self, ws: Workspace, question: str) -> list[str]:
        return []

    def seeds(self, ctx: QueryContext, names: Sequence[str], fallback_terms: Sequence[str], top_n: int,
              fill: bool) -> list[Seed]:
        return strict_hits(ctx, list(names) or list(fallback_terms), top_n, ctx.settings.cosine_threshold)

    def describe(self, has_names: bool, fill: bool) -> str:
        return "paper: keywords joined into one search"


# --- relation ranking (global) -------------------------------------------------------------------
class AnchoredRelations:
    """RAGScope: relations anchored to the question's entities (``core.retrieval.anchoring``)."""

    def search(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch) -> Optional[RelationSearch]:
        return anchored_hits(ctx, result, clock)


class CosineRelations:
    """LightRAG: the high-level keywords joined and matched against the relation vectors."""

    def search(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch) -> Optional[RelationSearch]:
        found = vector_hits(ctx, result, clock, "high", "relations")
        if found is None:
            return None
        triples = [(str(h.metadata.get("source", "")), str(h.metadata.get("target", "")), h.score) for h in found.hits]
        return RelationSearch(triples, None, found.graph, found.label)


# --- path ranking (path) -------------------------------------------------------------------------
class QuestionFirstPaths:
    """RAGScope: the question's entities (+ anchored relation endpoints) as seeds; paths on them first."""

    order = "question entities on the path first, then reliability"

    def nodes(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, kg: GraphView) -> NodeChoice:
        return NodeChoice(*ragscope_nodes(ctx, result, clock, kg))

    def priority(self, question: set[str]) -> Optional[Callable[[ScoredPath], tuple[int, int]]]:
        return question_priority(question)

    def connect(self, ctx: QueryContext, kg: GraphView, question: set[str], paths: list[ScoredPath],
                keys: Sequence[str]) -> tuple[list[ScoredPath], list[TraceEvent]]:
        if not question:
            return paths, []
        return connect_question_pairs(kg, question, paths, ctx.settings, keys)

    def why(self, path: ScoredPath, question: set[str], seed_why: dict[str, str], names: dict[str, str]) -> str:
        return why_kept(path, question, seed_why, names)


class ReliabilityPaths:
    """PathRAG: top-N nodes of the joined low-level keywords (or the question), reliability only."""

    order = "by reliability"

    def nodes(self, ctx: QueryContext, result: RetrievalResult, clock: Stopwatch, kg: GraphView) -> NodeChoice:
        return NodeChoice(paper_nodes(ctx, result, clock, kg), {}, set())

    def priority(self, question: set[str]) -> Optional[Callable[[ScoredPath], tuple[int, int]]]:
        return None

    def connect(self, ctx: QueryContext, kg: GraphView, question: set[str], paths: list[ScoredPath],
                keys: Sequence[str]) -> tuple[list[ScoredPath], list[TraceEvent]]:
        return paths, []

    def why(self, path: ScoredPath, question: set[str], seed_why: dict[str, str], names: dict[str, str]) -> str:
        return f"kept by {reliability_text(path)} (paper ranking)"


# --- evidence order ------------------------------------------------------------------------------
class OwnerThenCosine:
    """RAGScope: a chunk ranks by its owner's score + its cosine; the closest sources first."""

    leaves_tail = True

    def owner_scores(self, scores: Optional[Sequence[float]]) -> Optional[Sequence[float]]:
        return scores

    def describe(self, via: str, scores: Optional[Sequence[float]]) -> str:
        return "by cosine to the question" if scores is None else f"by the {via}'s score + cosine to the question"

    def sources(self, ctx: QueryContext, ids: Sequence[str]) -> list[str]:
        unique = list(dict.fromkeys(ids))
        if len(unique) > 1:
            cosines = ctx.ws.views.vectors.cosines("chunks", ctx.embed(ctx.question), unique)
            unique.sort(key=lambda c: -cosines.get(c, -2.0))
        return unique

    def tie_break(self, ctx: QueryContext) -> Optional[Mapping[str, float]]:
        return question_term_counts(ctx)


class CosineOnly:
    """The papers: chunks by cosine to the question, sources in corpus order, no tie-break."""

    leaves_tail = False

    def owner_scores(self, scores: Optional[Sequence[float]]) -> Optional[Sequence[float]]:
        return None

    def describe(self, via: str, scores: Optional[Sequence[float]]) -> str:
        return "by cosine to the question"

    def sources(self, ctx: QueryContext, ids: Sequence[str]) -> list[str]:
        return list(dict.fromkeys(ids))

    def tie_break(self, ctx: QueryContext) -> Optional[Mapping[str, float]]:
        return None


# --- tree query ----------------------------------------------------------------------------------
class NamedTreeQuery:
    """RAGScope: the question's names linked to the graph; rare nouns only weigh occurrences."""

    def terms(self, ctx: QueryContext, graph: Any) -> tuple[list[str], list[str]]:
        return named_query_terms(ctx, graph)

    def weight_terms(self, ctx: QueryContext) -> list[str]:
        return rare_nouns(ctx)


class EveryTermTreeQuery:
    """E2GraphRAG: every mention-graph term of the question."""

    def terms(self, ctx: QueryContext, graph: Any) -> tuple[list[str], list[str]]:
        return [term for term, _ in labelled_query_entities(ctx.question, ctx.settings.entity_types)], []

    def weight_terms(self, ctx: QueryContext) -> list[str]:
        return []


# --- the bundle ----------------------------------------------------------------------------------
RAGSCOPE = Strategies(False, LinkedNames(), AnchoredRelations(), QuestionFirstPaths(), OwnerThenCosine(),
                      NamedTreeQuery())
PAPER = Strategies(True, JoinedSearch(), CosineRelations(), ReliabilityPaths(), CosineOnly(), EveryTermTreeQuery())


def strategies_for(settings: Any) -> Strategies:
    """The papers' strategies when the settings ask for them (``paper_strict``), else RAGScope's."""
    return PAPER if bool(getattr(settings, STRICT_SETTING, False)) else RAGSCOPE
