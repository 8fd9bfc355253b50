"""Relations anchored to the question's entities (RAGScope's relation seeds for global, hybrid,
mix and path; the papers' strategy, ``core.retrieval.strategies.CosineRelations``, does without).

LightRAG's global mode ranks relations by the cosine of their vector to the high-level keywords
alone. Offline, those keywords are the question's relational nouns ("native language", "salt
law"), and on a large graph the best matches sit anywhere: the relation that answers a two-hop
question ("Gandhi — Gujarati: native language") competes with every other language relation of the
corpus. The question's names are the anchor that tells them apart: the answer relation of a
bridge question touches a neighbour of a question entity. So the candidates are

* the best ``top_k * CANDIDATE_FACTOR`` relations by cosine (the paper's search, widened), and
* the relations incident to a question entity or to one of its neighbours (at most
  ``MAX_NEIGHBOURS`` neighbours per entity, by edge weight, and ``MAX_EDGES_PER_NODE`` edges each),

each scored ``cosine + ANCHOR_BONUS`` when it touches a question entity or a neighbour of one (the
bonus is the same for both: the first hop and the second are both evidence of a bridge question),
and the best ``top_k`` with cosine >= ``cosine_threshold`` are kept, best first. Cosines come from
the in-memory relation vectors, so no extra vector-store round trip is paid. A question's anchored
relations are worked out once per joined keyword string (``question_anchored``, kept in the
question's state) and shared by global, hybrid, mix and path.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Mapping, Optional, Sequence

import numpy as np

from core.retrieval.query import QueryContext, Seed
from core.storage.ports import GraphView
from core.storage.records import node_pair

if TYPE_CHECKING:
    from core.workspace import Workspace

ANCHOR_BONUS = 1.0
ANCHORED_BELOW_THRESHOLD = False  # measured: +1.6 global, -2.3 hybrid, -0.6 path on dev_musique_full
CANDIDATE_FACTOR = 3
MAX_NEIGHBOURS = 50
MAX_EDGES_PER_NODE = 100


@dataclass(frozen=True)
class Anchor:
    """Why a node anchors relations: it is a question entity (``kind="question"``, ``entity`` its
    display name) or a neighbour ``via`` of the question entity ``entity`` (``kind="neighbour"``)."""

    kind: Literal["question", "neighbour"]
    entity: str
    via: str = ""

    def text(self) -> str:
        """The anchor in words, as the trace and the relation's reason show it."""
        if self.kind == "question":
            return f"question entity {self.entity}"
        return f"{self.via}, a neighbour of question entity {self.entity}"


@dataclass
class AnchoredRelation:
    """A relation (sorted key pair) with its cosine, its score and what anchors it (None: nothing)."""

    pair: tuple[str, str]
    cosine: float
    score: float
    anchor: Optional[Anchor] = None

    def reason(self, label: str) -> str:
        base = f"cosine {self.cosine:.3f} to {label}"
        return base + (f" + {ANCHOR_BONUS:g}: touches {self.anchor.text()}" if self.anchor else "")


def strongest_edges(ws: Workspace) -> dict[str, tuple[tuple[str, tuple[str, str]], ...]]:
    """Every node's strongest ``MAX_EDGES_PER_NODE`` edges, by weight desc then neighbour key, as
    (neighbour, sorted pair): a pure function of the graph, sorted once per workspace generation
    (``views.derived``) instead of once per anchor node and question."""
    graph = ws.views.graph
    table: dict[str, tuple[tuple[str, tuple[str, str]], ...]] = {}
    for key in graph.keys():
        ranked = _by_weight(graph, key)[:MAX_EDGES_PER_NODE]
        if ranked:
            table[key] = tuple((other, node_pair(key, other)) for other in ranked)
    return table


def _by_weight(graph: GraphView, key: str) -> list[str]:
    """A node's neighbours by edge weight desc, then key."""
    edges = sorted(graph.adjacency(key).items(), key=lambda kv: (-float(kv[1].get("weight", 1.0)), kv[0]))
    return [other for other, _ in edges]


def neighbourhood(graph: GraphView, seeds: Sequence[Seed],
                  strongest: Optional[Mapping[str, Sequence[tuple[str, tuple[str, str]]]]] = None) -> dict[str, Anchor]:
    """Node → why it anchors: the seeds themselves and up to ``MAX_NEIGHBOURS`` neighbours each
    (``strongest``: the generation's ``strongest_edges``; without it the edges are sorted here)."""
    anchors: dict[str, Anchor] = {}
    names = {s.key: graph.name(s.key) for s in seeds if s.key in graph}
    for key, name in names.items():
        anchors[key] = Anchor("question", name)
    for key, name in names.items():
        ranked = ([other for other, _ in strongest.get(key, ())] if strongest is not None
                  else _by_weight(graph, key))
        for neighbour in ranked[:MAX_NEIGHBOURS]:
            if neighbour not in anchors:
                anchors[neighbour] = Anchor("neighbour", name, via=graph.name(neighbour))
    return anchors


def anchored_relations(ws: Workspace, vector: np.ndarray, seeds: Sequence[Seed], top_k: int, threshold: float
                       ) -> list[AnchoredRelation]:
    """The ``top_k`` relations by cosine to ``vector`` plus the anchor bonus (see the module doc)."""
    views = ws.views
    graph, search = views.graph, views.vectors
    if search.size("relations") == 0:
        return []
    candidates: dict[tuple[str, str], tuple[str, str]] = {}  # sorted pair -> the vector's own key
    for key, _ in search.ranked_keys("relations", vector, top_k * CANDIDATE_FACTOR):
        pair = node_pair(*key)
        if graph.has_relation(*pair):
            candidates[pair] = key
    strongest = views.derived(strongest_edges)
    anchors = neighbourhood(graph, [s for s in seeds if s.question], strongest)
    for node in anchors:
        for _, pair in strongest.get(node, ()):  # edges of the graph: no membership check needed
            candidates.setdefault(pair, pair)
    pairs = list(candidates)  # their order does not matter: the ranking below is a total order
    found = search.cosines("relations", vector, [candidates[p] for p in pairs])
    out: list[AnchoredRelation] = []
    for pair in contenders(pairs, found, candidates, anchors, top_k, threshold):
        cosine = found[candidates[pair]]
        anchor = anchors.get(pair[0]) or anchors.get(pair[1])
        if pair[0] in anchors and pair[1] in anchors:  # prefer naming a question entity
            anchor = anchors[pair[0]] if anchors[pair[0]].kind == "question" else anchors[pair[1]]
        out.append(AnchoredRelation(pair, round(cosine, 6), round(cosine + (ANCHOR_BONUS if anchor else 0.0), 6),
                                    anchor))
    out.sort(key=lambda r: (-r.score, -r.cosine, r.pair))
    return out[:top_k]


RANK_MARGIN = 1e-5  # far above the 5e-7 that rounding to 6 decimals can move a score


def contenders(pairs: Sequence[tuple[str, str]], found: Mapping[tuple[str, str], float],
               keys: Mapping[tuple[str, str], tuple[str, str]], anchors: Mapping[str, Anchor], top_k: int,
               threshold: float) -> list[tuple[str, str]]:
    """The pairs that may rank in the ``top_k`` (in ``pairs``' order): those with a cosine that pass the
    threshold, less those whose unrounded score is more than ``RANK_MARGIN`` below the ``top_k``-th best
    unrounded score. Rounding never lowers a score below a lower one's, so at least ``top_k`` pairs
    outrank each pair left out, and the ranking of the rest is the one of every pair (one numpy pass
    instead of a record per candidate: ~1,000 per question on dev_musique_full, 40 kept)."""
    cosines = np.array([found.get(keys[p], np.nan) for p in pairs], dtype=np.float64)
    anchored = np.fromiter((p[0] in anchors or p[1] in anchors for p in pairs), dtype=bool, count=len(pairs))
    passing = ~np.isnan(cosines)
    if not ANCHORED_BELOW_THRESHOLD:
        passing &= cosines >= threshold
    else:
        passing &= (cosines >= threshold) | anchored
    scores = np.where(anchored, cosines + ANCHOR_BONUS, cosines)
    if np.count_nonzero(passing) > top_k > 0:
        kth = np.partition(scores[passing], -top_k)[-top_k]
        passing &= scores >= kth - RANK_MARGIN
    return [pairs[i] for i in np.flatnonzero(passing).tolist()]


class AnchoredByKeywords(dict[str, list[AnchoredRelation]]):
    """A question's anchored relations per joined keyword string (kept in ``QuestionState.attached``)."""


def question_anchored(ctx: QueryContext, joined: str, seeds: Sequence[Seed]) -> list[AnchoredRelation]:
    """``anchored_relations`` of the joined keywords ``joined`` for the context's question, searched
    the first time a mode asks and remembered in the question's state for the others."""
    memo = ctx.state.attached(AnchoredByKeywords)
    if joined not in memo:
        memo[joined] = anchored_relations(ctx.ws, ctx.embed(joined), seeds, ctx.settings.lightrag_top_k,
                                          ctx.settings.cosine_threshold)
    return memo[joined]
