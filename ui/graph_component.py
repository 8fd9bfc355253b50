"""A clickable graph: the self-contained pyvis page of ``ui.graph_view.graph_html`` inside a
bidirectional Streamlit component (``st.components.v2``), so a click on a node or an edge
reaches Python.

The component's JavaScript (below, bundled with the app; nothing is fetched) writes the graph
page into an ``<iframe srcdoc>`` — the page keeps all its own escaping of document text — and,
once vis-network has drawn, listens to its ``click`` events: a node click sends
``{"kind": "node", "id": …}``, an edge click ``{"kind": "edge", "source": …, "target": …}``
as the component's ``selected`` state (``n`` makes every click a change, so re-clicking after
choosing something else in a dropdown still counts). Python sends the graph page and the
currently selected node back; the graph then marks that node. The iframe is rebuilt only when
the page changes (its hash is part of the data).
"""
from __future__ import annotations

import hashlib
from typing import Any, Callable, Optional

import streamlit as st

COMPONENT_NAME = "ragscope_graph"

_JS = """
export default function (component) {
    const { data, parentElement, setStateValue } = component;
    if (!data || !data.html) { return; }
    let frame = parentElement.querySelector("iframe.rs-graph-frame");
    if (!frame) {
        frame = document.createElement("iframe");
        frame.className = "rs-graph-frame";
        frame.title = "graph";
        frame.style.width = "100%";
        frame.style.border = "none";
        frame.style.display = "block";
        parentElement.appendChild(frame);
    }
    frame.style.height = data.height + "px";
    function markSelected() {
        const win = frame.contentWindow;
        if (!win || !win.network || !data.selected) { return; }
        try { win.network.selectNodes([String(data.selected)]); } catch (err) { /* not drawn in this view */ }
    }
    function hook(tries) {
        const win = frame.contentWindow;
        if (!win || !win.network || !win.edges) {
            if (tries < 100) { setTimeout(function () { hook(tries + 1); }, 100); }
            return;
        }
        if (win.__ragscopeHooked) { markSelected(); return; }
        win.__ragscopeHooked = true;
        win.network.on("click", function (params) {
            if (params.nodes && params.nodes.length) {
                setStateValue("selected", { kind: "node", id: String(params.nodes[0]), n: Date.now() });
            } else if (params.edges && params.edges.length) {
                const edge = win.edges.get(params.edges[0]);
                if (edge) {
                    setStateValue("selected", { kind: "edge", source: String(edge.from), target: String(edge.to),
                                                n: Date.now() });
                }
            }
        });
        markSelected();
    }
    if (frame.dataset.pageHash !== data.hash) {
        frame.dataset.pageHash = data.hash;
        frame.onload = function () { hook(0); };
        frame.srcdoc = data.html;
    } else {
        hook(0);
    }
}
"""

_CSS = """
:host { display: block; width: 100%; }
"""

_renderer: Optional[Callable[..., Any]] = None


def _component() -> Callable[..., Any]:
    global _renderer
    if _renderer is None:
        _renderer = st.components.v2.component(COMPONENT_NAME, html="", css=_CSS, js=_JS)
    return _renderer


def page_hash(html_page: str) -> str:
    return hashlib.sha1(html_page.encode("utf-8")).hexdigest()[:16]


def clickable_graph(html_page: str, height_px: int, key: str, selected: Optional[str] = None,
                    on_select: Optional[Callable[[], None]] = None) -> Optional[dict[str, Any]]:
    """Draw the graph page; return the last click (``{"kind": "node", "id"}`` or ``{"kind": "edge",
    "source", "target"}``) or None. ``on_select`` runs (as a widget callback) when a click arrives;
    it can read the click with ``last_click(key)``."""
    data = {"html": html_page, "height": int(height_px), "hash": page_hash(html_page),
            "selected": None if selected is None else str(selected)}
    result = _component()(key=key, data=data, height=int(height_px) + 8,
                          on_selected_change=on_select or (lambda: None))
    return _as_click(getattr(result, "selected", None))


def last_click(key: str) -> Optional[dict[str, Any]]:
    """The click stored in the session for the component with ``key`` (inside ``on_select``)."""
    value = st.session_state.get(key)
    if value is None:
        return None
    return _as_click(value.get("selected") if hasattr(value, "get") else getattr(value, "selected", None))


def apply_click(session: Any, click: Optional[dict[str, Any]], node_key: str, edge_key: str) -> None:
    """Route a click into session state: a node selects ``session[node_key]`` (and clears the edge),
    an edge sets ``session[edge_key] = (source, target)``."""
    if click is None:
        return
    if click["kind"] == "node":
        session[node_key] = click["id"]
        session.pop(edge_key, None)
    else:
        session[edge_key] = (click["source"], click["target"])


def _as_click(value: Any) -> Optional[dict[str, Any]]:
    if not isinstance(value, dict) or value.get("kind") not in ("node", "edge"):
        return None
    if value["kind"] == "node":
        return {"kind": "node", "id": str(value.get("id", ""))}
    return {"kind": "edge", "source": str(value.get("source", "")), "target": str(value.get("target", ""))}
