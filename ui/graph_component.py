"""A clickable graph: the self-contained pyvis page of ``ui.graph_view.graph_html`` inside a
bidirectional Streamlit component (``st.components.v2``), so a click on a node or an edge
reaches Python.

The component's JavaScript (below, bundled with the app; nothing is fetched) writes the graph
page into an ``<iframe sandbox="allow-scripts" srcdoc>``: without ``allow-same-origin`` the page
runs in an opaque origin, so even a slip in escaping document text could not reach the app's
cookies, storage or DOM. The two sides talk only by ``postMessage``: the graph page (see
``ui.graph_view``) posts ``{"ragscope": "graph-click", "kind": "node", "id": …}`` or
``{…, "kind": "edge", "source": …, "target": …}``, which the component, after checking that the
message comes from its own frame, stores as its ``selected`` state (``n`` makes every click a
change, so re-clicking after choosing something else in a dropdown still counts); Python sends
the currently selected node back and the component posts ``{"ragscope": "graph-select", "id": …}``
into the frame, which marks that node. The iframe is rebuilt only when the page changes (its hash
is part of the data). ``show_graph`` (no clicks) uses the same sandboxed frame.
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
        frame.setAttribute("sandbox", "allow-scripts");  // an opaque origin: no access to the app
        frame.style.width = "100%";
        frame.style.border = "none";
        frame.style.display = "block";
        parentElement.appendChild(frame);
    }
    frame.style.height = data.height + "px";
    function markSelected() {
        if (frame.contentWindow && data.selected) {
            frame.contentWindow.postMessage({ ragscope: "graph-select", id: String(data.selected) }, "*");
        }
    }
    function onMessage(event) {
        if (event.source !== frame.contentWindow) { return; }
        const msg = event.data;
        if (!msg || typeof msg !== "object") { return; }
        if (msg.ragscope === "graph-ready") {
            markSelected();
        } else if (!data.clicks) {
            return;  // a drawing without click handling (show_graph)
        } else if (msg.ragscope === "graph-click" && msg.kind === "node") {
            setStateValue("selected", { kind: "node", id: String(msg.id), n: Date.now() });
        } else if (msg.ragscope === "graph-click" && msg.kind === "edge") {
            setStateValue("selected", { kind: "edge", source: String(msg.source), target: String(msg.target),
                                        n: Date.now() });
        }
    }
    if (frame.rsListener) { window.removeEventListener("message", frame.rsListener); }
    frame.rsListener = onMessage;
    window.addEventListener("message", onMessage);
    if (frame.dataset.pageHash !== data.hash) {
        frame.dataset.pageHash = data.hash;
        frame.srcdoc = data.html;
    } else {
        markSelected();
    }
    return function () {
        window.removeEventListener("message", onMessage);
        if (frame.rsListener === onMessage) { frame.rsListener = null; }
    };
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
            "selected": None if selected is None else str(selected), "clicks": True}
    result = _component()(key=key, data=data, height=int(height_px) + 8,
                          on_selected_change=on_select or (lambda: None))
    return _as_click(getattr(result, "selected", None))


def sandboxed_graph(html_page: str, height_px: int, key: str) -> None:
    """Draw the graph page in the same sandboxed frame, without click handling."""
    data = {"html": html_page, "height": int(height_px), "hash": page_hash(html_page), "selected": None,
            "clicks": False}
    _component()(key=key, data=data, height=int(height_px) + 8)


def last_click(key: str) -> Optional[dict[str, Any]]:
    """The click stored in the session for the component with ``key`` (inside ``on_select``)."""
    value = st.session_state.get(key)
    if value is None:
        return None
    return _as_click(value.get("selected") if hasattr(value, "get") else getattr(value, "selected", None))


def apply_click(session: Any, click: Optional[dict[str, Any]], node_key: str, edge_key: str) -> None:
    """Route a click into session state: a node selects ``session[node_key]`` (and clears the edge),
    an edge sets ``session[edge_key] = (source, target)`` and points the node picker at its source, so
    the picker never names a node the panel no longer shows."""
    if click is None:
        return
    if click["kind"] == "node":
        session[node_key] = click["id"]
        session.pop(edge_key, None)
    else:
        session[edge_key] = (click["source"], click["target"])
        session[node_key] = click["source"]


def _as_click(value: Any) -> Optional[dict[str, Any]]:
    if not isinstance(value, dict) or value.get("kind") not in ("node", "edge"):
        return None
    if value["kind"] == "node":
        return {"kind": "node", "id": str(value.get("id", ""))}
    return {"kind": "edge", "source": str(value.get("source", "")), "target": str(value.get("target", ""))}
