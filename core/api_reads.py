"""``core.api`` functions for the app's read views of an index and for the evaluation runs.

Re-exported by ``core.api`` (import them from there). The pages and ``ui/`` reach a workspace only
through ``core.api`` (tests/test_architecture.py), so every view they show is one of these calls;
each takes the caller's ``Principal`` first and declares its minimum role (``core.auth.requires``),
which also checks that the caller may open the workspace. All are viewer functions (browse, inspect,
evaluate); ``refresh_vectors`` changes no data (it reopens the process's own vector client).

* the generation and the views built per generation: ``generation``, ``doc_names``, ``tree_index``,
  ``mention_index``, ``knowledge_graph``, ``mention_graph``; ``readable_summary`` (a tree node's summary with
  its headings set apart, for reading);
* the Knowledge graph page, read a few rows at a time (``core.graph_page``): ``graph_summary``,
  ``graph_selection``, ``graph_node``, ``graph_edge``, ``mention_chunks``;
* document tables: ``documents_table``, ``dropped_records`` (``graph_provenance`` is in ``core.api_views``);
* other writers: ``writer_active``, ``refresh_vectors``;
* runs: ``evaluate``, ``run_judge``, ``estimate_judge_cost``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Sequence

from core.auth import Principal, Role, requires
from core.settings import Settings
from core.types import ProgressCallback, no_progress
from core.workspace import Workspace

if TYPE_CHECKING:
    import networkx as nx

    from core.graph_page import EdgeDetail, GraphSelection, GraphSummary, NodeDetail
    from core.storage.records import TreeNode

__all__ = ["generation", "doc_names", "tree_index", "readable_summary", "mention_index", "knowledge_graph", "mention_graph",
           "graph_summary", "graph_selection", "graph_node", "graph_edge", "mention_chunks",
           "documents_table", "dropped_records", "writer_active", "refresh_vectors",
           "evaluate", "run_judge", "estimate_judge_cost", "warm_up", "load_embedder"]


# --- the generation and the views built per generation ---------------------------------------------
@requires(Role.viewer)
def generation(principal: Principal, ws: Workspace) -> int:
    """The workspace's generation: it moves after every commit and every rollback (a cache key)."""
    return ws.generation()


@requires(Role.viewer)
def doc_names(principal: Principal, ws: Workspace) -> dict[str, str]:
    """Document id → file name."""
    return ws.doc_names()


@requires(Role.viewer)
def tree_index(principal: Principal, ws: Workspace) -> dict[str, "TreeNode"]:
    """The summary trees' nodes by id."""
    return ws.tree_index()


READABLE_MAX_LEAVES = 5000  # above this, a node's text is read without its leaves' parsed sentences


def _readable_memo(ws: Workspace) -> dict[str, str]:
    """Node id → its readable summary, filled as nodes are read (one memo per generation: every rerun of
    the Summary tree page would otherwise read the sentence rows of all the node's leaves again)."""
    return {}


@requires(Role.viewer)
def readable_summary(principal: Principal, ws: Workspace, node_id: str) -> str:
    """A summary-tree node's text for reading: cut at its leaves' parsed sentences, each title line set
    apart by blank lines (``core.indexing.summarize.readable_summary``); "" for an unknown node."""
    from core.indexing.summarize import readable_summary as readable
    from core.indexing.tree import load_rows

    memo = ws.views.derived(_readable_memo)
    if node_id not in memo:
        node = ws.tree_index().get(node_id)
        if node is None:
            return ""
        leaves = list(node.leaf_chunk_ids)
        rows = load_rows(ws.records, leaves) if 0 < len(leaves) <= READABLE_MAX_LEAVES else {}
        memo[node_id] = readable(node.text or "", [s for sentences in rows.values() for s in sentences])
    return memo[node_id]


@requires(Role.viewer)
def mention_index(principal: Principal, ws: Workspace) -> dict[str, dict[str, int]]:
    """Entity → {chunk id: mentions}."""
    return ws.mention_index()


@requires(Role.viewer)
def knowledge_graph(principal: Principal, ws: Workspace) -> "nx.Graph":
    """The merged entity graph as networkx (for layouts and exports)."""
    return ws.knowledge_graph()


@requires(Role.viewer)
def mention_graph(principal: Principal, ws: Workspace) -> "nx.Graph":
    """The E2GraphRAG mention graph (entities that co-occur in a sentence)."""
    return ws.mention_graph()


# --- the Knowledge graph page (indexed reads; the whole graph is never built) ------------------------
@requires(Role.viewer)
def graph_summary(principal: Principal, ws: Workspace, mention: bool = False) -> "GraphSummary":
    """The node count and the type filter's choices of the knowledge graph (or the mention graph)."""
    from core.graph_page import summary

    return summary(ws, mention)


@requires(Role.viewer)
def graph_selection(principal: Principal, ws: Workspace, mention: bool = False, search: str = "", depth: int = 1,
                    types: Sequence[str] = (), min_degree: int = 0, max_nodes: int = 60) -> "GraphSelection":
    """The view to draw: type filter, the ``depth``-hop neighbourhood of the search's matches, the minimum
    degree, then the best ``max_nodes`` (matches, hops, degree); the drawn nodes and their edges."""
    from core.graph_page import select

    return select(ws, mention, search, depth, tuple(types), min_degree, max_nodes)


@requires(Role.viewer)
def graph_node(principal: Principal, ws: Workspace, mention: bool, key: str) -> Optional["NodeDetail"]:
    """One node with its degree and neighbours (and, a term, its chunks); None when there is none."""
    from core.graph_page import node_detail

    return node_detail(ws, mention, key)


@requires(Role.viewer)
def graph_edge(principal: Principal, ws: Workspace, mention: bool, a: str, b: str) -> Optional["EdgeDetail"]:
    """The edge between two nodes (attributes and endpoint names); None when there is none."""
    from core.graph_page import edge_detail

    return edge_detail(ws, mention, a, b)


@requires(Role.viewer)
def mention_chunks(principal: Principal, ws: Workspace, terms: Sequence[str]) -> dict[str, dict[str, int]]:
    """Term -> {chunk id: mentions} for the given terms (a few rows of ``mention_index``)."""
    from core.graph_page import chunk_counts

    return chunk_counts(ws, list(terms))


# --- document tables -------------------------------------------------------------------------------
@requires(Role.viewer)
def documents_table(principal: Principal, ws: Workspace) -> list[dict[str, Any]]:
    """One row per document: status, chunks, entities, dropped records, tokens, error, time."""
    return ws.documents_table()


@requires(Role.viewer)
def dropped_records(principal: Principal, ws: Workspace) -> dict[str, dict[str, Any]]:
    """Per indexed document, what the extraction parser dropped at its last indexing."""
    return ws.dropped_records()


# --- other writers ---------------------------------------------------------------------------------
@requires(Role.viewer)
def writer_active(principal: Principal, ws: Workspace) -> bool:
    """True while a live process holds the workspace's write lock."""
    return ws.writer_active()


@requires(Role.viewer)
def refresh_vectors(principal: Principal, ws: Workspace) -> None:
    """Reopen the vector store on next use (another process added vectors); no data changes."""
    ws.reopen_vectors()


# --- runs ------------------------------------------------------------------------------------------
@requires(Role.viewer)
def evaluate(principal: Principal, ws: Workspace, questions: list[Any], modes: Sequence[str],
             ks: Sequence[int] = (2, 5, 10), settings: Optional[Settings] = None,
             progress: ProgressCallback = no_progress, **options: Any) -> Any:
    """Evidence recall and answer-in-answer per mode (``core.evaluation.runner.evaluate``)."""
    from core.evaluation.runner import evaluate as run

    return run(ws, questions, modes, ks, settings=settings, progress=progress, **options)


@requires(Role.viewer)
def run_judge(principal: Principal, ws: Workspace, questions: Sequence[Any], modes: Sequence[str], chat: Any,
              **options: Any) -> Any:
    """The pairwise LLM judge over ``modes`` (``core.judge.runner.run_judge``; ``options`` as there)."""
    from core.judge.runner import run_judge as run

    return run(ws, questions, modes, chat, **options)


@requires(Role.viewer)
def estimate_judge_cost(principal: Principal, ws: Workspace, questions: Sequence[Any], modes: Sequence[str],
                        chat: Any, **options: Any) -> dict[str, Any]:
    """What ``run_judge`` with the same arguments would cost; no call is made."""
    from core.judge.runner import estimate_cost

    return estimate_cost(ws, questions, modes, chat, **options)


# --- models ------------------------------------------------------------------------------------------
@requires(Role.viewer)
def warm_up(principal: Principal, ws: Optional[Workspace] = None) -> Any:
    """Load the models (and ``ws``'s read views) in a daemon thread once per process and generation
    (``core.warmup.start_warmup``); returns the thread, or None when that warm-up already started."""
    from core.warmup import start_warmup

    return start_warmup(ws)


@requires(Role.viewer)
def load_embedder(principal: Principal, ws: Workspace) -> None:
    """Load ``ws``'s embedding model now (an indexing job shows this as its own step)."""
    ws.embedder  # noqa: B018 - the property loads the model
