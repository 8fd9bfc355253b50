"""The Knowledge graph page's data and drawing, without Streamlit, so that the page and
``benchmarks/million_tokens.py`` run the same code: ``draw_view`` (the view read through
``core.api.graph_selection`` and laid out by ``ui.graph_view.graph_html``, which escapes every label and
tooltip) and ``open_default`` (what the page does when it opens: the counts and the type filter's
choices, the default view, the selected node's details and its first source chunks).

Nothing here reads the whole graph: ``core.graph_page`` reads the drawn rows with indexed queries.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Sequence

from core import api
from ui.graph_view import graph_html, legend_items

if TYPE_CHECKING:
    from core.auth import Principal
    from core.api import Workspace

HEIGHT = 650
DEFAULT_NODES = 60  # the default view's node budget (most connected first)
MAX_CHUNKS_SHOWN = 8


@dataclass(frozen=True)
class DrawnView:
    """One drawn view: the HTML, nodes shown / eligible, the shown ids (best first), their display names,
    the search matches among them and the colour legend."""

    html: str
    shown: int
    eligible: int
    ids: list[str]
    names: dict[str, str]
    matches: list[str]
    legend: list[tuple[str, str]]


def kind_attr(mention: bool) -> str:
    """Node attribute holding the category: entity type, or the mention label (NE label / NOUN / PROPN)."""
    return "label" if mention else "type"


def draw_view(principal: "Principal", ws: "Workspace", mention: bool, search: str = "", depth: int = 1,
              types: Sequence[str] = (), min_degree: int = 0, max_nodes: int = DEFAULT_NODES,
              size_by_degree: bool = True) -> DrawnView:
    """The view's nodes and edges (``core.api.graph_selection``) laid out as a self-contained page."""
    kind = kind_attr(mention)
    selection = api.graph_selection(principal, ws, mention, search, depth, tuple(types), min_degree, max_nodes)
    view = selection.graph
    shown = set(selection.nodes)
    matches = [m for m in selection.matches if m in shown]
    page = graph_html(view, height_px=HEIGHT, color_by=kind, size_by_degree=size_by_degree,
                      highlight_nodes=set(matches) or None, label_attr="name", fade_others=False,
                      physics=False)  # the Python layout is final: stable, and labels stay where they fit
    names = {str(n): str(view.nodes[n].get("name") or n) for n in selection.nodes}
    return DrawnView(page, len(selection.nodes), selection.eligible, [str(n) for n in selection.nodes], names,
                     matches, legend_items(view, kind))


def open_default(principal: "Principal", ws: "Workspace", mention: bool = False) -> dict[str, Any]:
    """What the page reads and draws when it opens with its default controls; returns what it got."""
    summary = api.graph_summary(principal, ws, mention)
    out: dict[str, Any] = {"summary": summary, "view": None, "detail": None}
    if summary.nodes == 0:
        return out
    view = out["view"] = draw_view(principal, ws, mention)
    if view.ids:
        detail = out["detail"] = api.graph_node(principal, ws, mention, view.ids[0])  # the selected node
        chunk_ids = first_chunks(detail)
        if chunk_ids:
            api.doc_names(principal, ws)
            api.chunks_by_id(principal, ws, chunk_ids)
    return out


def first_chunks(detail: Optional[Any]) -> list[str]:
    """The source chunks the side panel shows first for a node (an entity's list, a term's most mentions)."""
    if detail is None:
        return []
    if detail.chunk_counts:
        counts = detail.chunk_counts
        return sorted(counts, key=lambda c: -counts[c])[:MAX_CHUNKS_SHOWN]
    return list(detail.attributes.get("source_chunk_ids") or [])[:MAX_CHUNKS_SHOWN]
