"""Render networkx graphs as self-contained pyvis HTML and embed them in a page.

Contract used by the pages (keep it stable):

* ``graph_html(graph, ...) -> str`` builds one self-contained HTML document (pyvis with
  ``cdn_resources="in_line"``; the remote CSS/JS tags pyvis's template always adds are removed so
  nothing is fetched). Every label and tooltip built from document text is HTML-escaped and length
  capped: in the page, labels are decoded to plain text for the canvas (a ``<textarea>`` decoder,
  which never creates elements) and tooltips become DOM elements built from the escaped string,
  so ``<script>`` or ``<img onerror=…>`` in a document show as text and never run.
* ``legend_items(graph, color_by) -> [(label, colour)]`` lists the colours used.
* ``show_graph(html, height_px)`` embeds the HTML in the page (a sandboxed iframe, opaque origin).

``title_fn(node_id, attrs) -> str`` may supply a node's tooltip as *plain text* (it is escaped
here; newlines become line breaks). In hierarchical mode a node attribute ``depth`` (0 = top)
sets the row; without it, rows follow edge direction.
"""
from __future__ import annotations

import html
import math
import re
import zlib
from typing import Any, Callable, Hashable, Iterable, Optional

import networkx as nx
import numpy as np

from ui.graph_assets import AFTER_JS, EXTRA_CSS, PREPARE_JS
from ui.graph_labels import (  # noqa: F401 - re-exported for callers and tests
    LABEL_ALL_MAX, LABEL_CHAR_PX, LABEL_HUBS, LABEL_LINE_PX, LABEL_TOP, MAX_LABEL_CHARS, _labelled_nodes, _overlap,
    cap_text, label_box)

MAX_TITLE_CHARS = 700
DEFAULT_COLOR = "#7a8ba8"
FADED_NODE = "rgba(200,200,200,0.35)"
FADED_EDGE = "rgba(190,190,190,0.18)"
EDGE_COLOR = "rgba(120,130,150,0.55)"
HIGHLIGHT_EDGE = "#e4572e"
SPRING_PX = 110.0  # target median edge length on screen
PHYSICS_MAX_NODES = 250  # above this, the Python layout is final (no browser simulation)
# The force layout's time and memory grow with the square of the node count (3,000 nodes: ~3 s and
# ~130 MB); a view never lays out more than this ("Show all nodes" included: the page says so).
MAX_LAYOUT_NODES = 2000


class GraphTooLarge(ValueError):
    """A force-layout view of more than ``MAX_LAYOUT_NODES`` nodes was asked for."""

# A fixed palette: well-known entity labels get stable colours; other values hash into it.
PALETTE = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#2f6f4f", "#8cd17d", "#d37295", "#499894", "#86bcb6"]
KNOWN_COLORS = {
    "PERSON": "#4e79a7", "ORG": "#f28e2b", "GPE": "#59a14f", "LOC": "#76b7b2", "NORP": "#b07aa1",
    "FAC": "#9c755f", "EVENT": "#e15759", "WORK_OF_ART": "#ff9da7", "PRODUCT": "#edc948",
    "LAW": "#2f6f4f", "LANGUAGE": "#8cd17d", "NOUN": "#a0cbe8", "PROPN": "#d37295", "UNKNOWN": "#bab0ac",
    "corpus": "#e15759", "doc": "#4e79a7", "chunk": "#bab0ac",
}

_REMOTE_TAGS = re.compile(
    r"<link\b[^>]*\bhref=\"https?://[^\"]*\"[^>]*>|<script\b[^>]*\bsrc=\"https?://[^\"]*\"[^>]*>\s*</script>",
    re.IGNORECASE | re.DOTALL)
_EMPTY_HEADING = re.compile(r"<center>\s*<h1>\s*</h1>\s*</center>", re.IGNORECASE)
_NETWORK_CREATED = "network = new vis.Network(container, data, options);"

def _cap(text: Any, limit: int) -> str:
    """A one-line-or-more string capped at ``limit`` characters (control characters removed)."""
    return cap_text(text, limit)


def escape_text(text: Any, limit: int = MAX_TITLE_CHARS) -> str:
    """HTML-escape untrusted text for a tooltip (newlines become <br>). Also breaks the word
    'href' so pyvis never switches to its innerHTML tooltip template."""
    escaped = html.escape(_cap(text, limit), quote=True)
    escaped = re.sub(r"(?i)(hr)(ef)", lambda m: m.group(1) + "&#8203;" + m.group(2), escaped)
    return escaped.replace("\n", "<br>")


def color_for(value: Any) -> str:
    """The fixed colour of a category value (known labels first, else a stable hash)."""
    if value is None or value == "":
        return DEFAULT_COLOR
    key = str(value)
    if key in KNOWN_COLORS:
        return KNOWN_COLORS[key]
    return PALETTE[zlib.crc32(key.encode("utf-8")) % len(PALETTE)]


def legend_items(graph: nx.Graph, color_by: str = "type") -> list[tuple[str, str]]:
    """(category, colour) for the values of ``color_by`` present, most frequent first."""
    if not color_by:
        return []
    counts: dict[str, int] = {}
    for _, data in graph.nodes(data=True):
        value = data.get(color_by)
        label = "—" if value is None or value == "" else str(value)
        counts[label] = counts.get(label, 0) + 1
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(label, DEFAULT_COLOR if label == "—" else color_for(label)) for label, _ in ordered]


def _default_title(node: Hashable, data: dict[str, Any], degree: int, label_attr: str) -> str:
    name = data.get(label_attr) or node
    lines = [f"<b>{escape_text(name, 200)}</b>"]
    for key in ("type", "label", "level", "scope"):
        if data.get(key) not in (None, ""):
            lines.append(f"{key}: {escape_text(data[key], 60)}")
    lines.append(f"degree: {degree}")
    description = data.get("description") or data.get("text")
    if description:
        lines.append(escape_text(description))
    if data.get("cited"):
        lines.append("source: " + escape_text(_cited(data["cited"]), 300))
    return "<br>".join(lines)


def _cited(value: Any) -> str:
    """A ``cited`` attribute (a list, or text already joined) as one line."""
    return value if isinstance(value, str) else "; ".join(str(v) for v in value)


def _edge_title(data: dict[str, Any]) -> str:
    parts = []
    keywords = data.get("keywords")
    if keywords:
        words = keywords if isinstance(keywords, str) else ", ".join(str(k) for k in keywords)
        parts.append(f"<b>{escape_text(words, 200)}</b>")
    if data.get("weight") is not None:
        parts.append(f"weight: {escape_text(data['weight'], 20)}")
    if data.get("description"):
        parts.append(escape_text(data["description"], 400))
    if data.get("cited"):
        parts.append("source: " + escape_text(_cited(data["cited"]), 300))
    return "<br>".join(parts)


def _edge_key(u: Hashable, v: Hashable) -> frozenset:
    return frozenset((u, v))


def _node_sizes(graph: nx.Graph, size_by_degree: bool) -> dict[Hashable, float]:
    count = graph.number_of_nodes()
    low, high = (10.0, 34.0) if count <= 100 else (6.0, 26.0) if count <= 300 else (4.0, 18.0)
    if not size_by_degree or count == 0:
        return {n: low + 4.0 for n in graph.nodes}
    degrees = dict(graph.degree())
    top = max(degrees.values()) or 1
    return {n: low + (high - low) * math.sqrt(d / top) for n, d in degrees.items()}


def _edge_width(weight: Any, top: float) -> float:
    """Edge thickness 1–6 px by weight (square root, relative to the heaviest edge shown)."""
    try:
        value = float(weight)
    except (TypeError, ValueError):
        return 1.0
    return round(1.0 + 5.0 * math.sqrt(max(value, 0.0) / top), 2) if top > 0 else 1.0


def _options(n_nodes: int, hierarchical: bool, physics: bool, directed: bool) -> dict[str, Any]:
    """vis-network options: precomputed positions, little or no browser physics (fast to draw)."""
    big = n_nodes > 300
    options: dict[str, Any] = {
        "nodes": {"shape": "dot", "font": {"size": 14, "face": "sans-serif"}, "borderWidth": 1,
                  "scaling": {"label": {"enabled": False, "drawThreshold": 9 if big else 5}}},
        "edges": {"smooth": False, "color": {"inherit": False}, "width": 1, "selectionWidth": 2,
                  "arrows": {"to": {"enabled": directed, "scaleFactor": 0.5}}},
        "interaction": {"hover": True, "tooltipDelay": 120, "hideEdgesOnDrag": big,
                        "navigationButtons": False, "multiselect": False},
        "layout": {"improvedLayout": n_nodes <= 120, "randomSeed": 7},
    }
    if hierarchical:
        options["layout"]["hierarchical"] = {
            "enabled": True, "direction": "UD", "sortMethod": "directed", "levelSeparation": 110,
            "nodeSpacing": 130, "treeSpacing": 150, "parentCentralization": True, "shakeTowards": "roots"}
        options["physics"] = {"enabled": False}
        return options
    if not physics or n_nodes > PHYSICS_MAX_NODES:
        options["physics"] = {"enabled": False}
        return options
    # Positions come from force_layout; a short vis simulation only relaxes them (then stops).
    options["physics"] = {
        "enabled": True, "solver": "barnesHut",
        "barnesHut": {"gravitationalConstant": -3000, "centralGravity": 0.25, "springLength": SPRING_PX,
                      "springConstant": 0.04, "damping": 0.4, "avoidOverlap": 0.05},
        "minVelocity": 1.5, "maxVelocity": 40, "timestep": 0.5,
        "stabilization": {"enabled": True, "iterations": 60, "updateInterval": 30, "fit": True},
    }
    return options


def force_layout(graph: nx.Graph, iterations: int = 50, seed: int = 7, gravity: float = 1.5
                 ) -> dict[Hashable, tuple[float, float]]:
    """Fruchterman–Reingold positions in pixels (vectorised numpy, exact repulsion, O(n²) memory).

    Computed here rather than by vis-network's physics in the browser: a 1,000-node graph
    then draws at once instead of simulating for seconds. Deterministic for a given seed.
    """
    nodes = list(graph.nodes)
    n = len(nodes)
    if n == 0:
        return {}
    if n == 1:
        return {nodes[0]: (0.0, 0.0)}
    index = {node: i for i, node in enumerate(nodes)}
    pairs = np.array([(index[u], index[v]) for u, v in graph.edges() if u != v], dtype=np.int64).reshape(-1, 2)
    rng = np.random.default_rng(seed)
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    k2 = np.float32(1.0 / n)
    k = np.sqrt(k2)
    temperature = np.float32(0.1)
    cooling = temperature / (iterations + 1)
    dx = np.empty((n, n), np.float32)
    dy = np.empty((n, n), np.float32)
    inv = np.empty((n, n), np.float32)
    for _ in range(iterations):
        np.subtract(x[:, None], x[None, :], out=dx)
        np.subtract(y[:, None], y[None, :], out=dy)
        np.multiply(dx, dx, out=inv)
        inv += dy * dy
        np.maximum(inv, 1e-6, out=inv)
        np.divide(k2, inv, out=inv)  # repulsion k²/d, times the unit vector d/|d| = delta/d²
        fx = (dx * inv).sum(axis=1) - gravity * (x - x.mean())  # gravity keeps small components close
        fy = (dy * inv).sum(axis=1) - gravity * (y - y.mean())
        if len(pairs):
            ex = x[pairs[:, 0]] - x[pairs[:, 1]]
            ey = y[pairs[:, 0]] - y[pairs[:, 1]]
            pull = np.sqrt(ex * ex + ey * ey) / k  # attraction d²/k along the edge
            ax, ay = ex * pull, ey * pull
            fx -= np.bincount(pairs[:, 0], ax, n) - np.bincount(pairs[:, 1], ax, n)
            fy -= np.bincount(pairs[:, 0], ay, n) - np.bincount(pairs[:, 1], ay, n)
        length = np.sqrt(fx * fx + fy * fy)
        length[length < 1e-6] = 1e-6
        step = np.minimum(length, temperature) / length
        x += (fx * step).astype(np.float32)
        y += (fy * step).astype(np.float32)
        temperature -= cooling
    if len(pairs):
        spans = np.hypot(x[pairs[:, 0]] - x[pairs[:, 1]], y[pairs[:, 0]] - y[pairs[:, 1]])
        typical = float(np.median(spans)) or float(k)
    else:
        typical = float(k)
    scale = SPRING_PX / max(typical, 1e-6)
    x = (x - x.mean()) * scale
    y = (y - y.mean()) * scale
    return {node: (round(float(x[i]), 1), round(float(y[i]), 1)) for i, node in enumerate(nodes)}


def _hierarchy_depths(graph: nx.Graph) -> dict[Hashable, int]:
    depths = {n: int(d["depth"]) for n, d in graph.nodes(data=True) if d.get("depth") is not None}
    if depths or not graph.is_directed():
        return depths
    roots = [n for n in graph.nodes if graph.in_degree(n) == 0] or list(graph.nodes)[:1]
    for root in roots:
        for node, dist in nx.single_source_shortest_path_length(graph, root).items():
            depths[node] = min(depths.get(node, dist), dist)
    return depths


def graph_html(graph: nx.Graph, *, height_px: int = 650, color_by: str = "type", size_by_degree: bool = True,
               highlight_nodes: Optional[set] = None, highlight_edges: Optional[set] = None,
               hierarchical: bool = False, label_attr: str = "name",
               title_fn: Optional[Callable[[Hashable, dict[str, Any]], str]] = None,
               physics: bool = True, fade_others: bool = True) -> str:
    """A self-contained pyvis HTML page drawing ``graph`` (see the module docstring). Highlighted nodes
    get a dark border; the others are greyed out unless ``fade_others`` is False (then they keep the
    legend's colours, as a search's neighbours do on the Knowledge graph page)."""
    from pyvis.network import Network

    if not hierarchical and graph.number_of_nodes() > MAX_LAYOUT_NODES:
        raise GraphTooLarge(f"{graph.number_of_nodes():,} nodes is more than the {MAX_LAYOUT_NODES:,} a drawn "
                            "graph lays out; narrow the view first")
    directed = graph.is_directed()
    net = Network(height=f"{int(height_px)}px", width="100%", directed=directed, cdn_resources="in_line",
                  bgcolor="#ffffff", font_color="#222222")
    highlighting = bool(highlight_nodes) or bool(highlight_edges)
    hi_nodes = set(highlight_nodes or ())
    hi_edges = {_edge_key(*e[:2]) for e in (highlight_edges or ())}
    for edge in hi_edges:
        hi_nodes.update(edge)
    sizes = _node_sizes(graph, size_by_degree)
    degrees = dict(graph.degree())
    depths = _hierarchy_depths(graph) if hierarchical else {}
    positions = force_layout(graph) if not hierarchical else {}
    ids: dict[Hashable, str] = {node: str(node) for node in graph.nodes}
    labelled = _labelled_nodes(graph, degrees, hi_nodes, positions, label_attr, sizes)
    weights = [float(w) for _, _, w in graph.edges(data="weight") if isinstance(w, (int, float))]
    top_weight = max(weights) if weights else 0.0
    nodes: list[dict[str, Any]] = []
    for node, data in graph.nodes(data=True):
        label = (data.get(label_attr) or node) if node in labelled else ""
        colour = color_for(data.get(color_by)) if color_by else DEFAULT_COLOR
        if title_fn is not None:
            title = escape_text(title_fn(node, data))
        else:
            title = _default_title(node, data, degrees.get(node, 0), label_attr)
        item: dict[str, Any] = {"id": ids[node], "label": html.escape(_cap(label, MAX_LABEL_CHARS)),
                                "title": title, "shape": "dot", "size": round(sizes[node], 2), "color": colour}
        if highlighting and node not in hi_nodes and fade_others:
            item["color"] = FADED_NODE
            item["font"] = {"color": "rgba(90,90,90,0.35)"}
        elif highlighting and node in hi_nodes:
            item["borderWidth"] = 3
            item["color"] = {"background": colour, "border": "#222222"}
        if hierarchical and node in depths:
            item["level"] = depths[node]
        if node in positions:
            item["x"], item["y"] = positions[node]
        nodes.append(item)
    edges: list[dict[str, Any]] = []
    for i, (u, v, data) in enumerate(graph.edges(data=True)):
        item = {"id": f"e{i}", "from": ids[u], "to": ids[v], "title": _edge_title(data), "color": EDGE_COLOR,
                "width": _edge_width(data.get("weight"), top_weight)}
        if highlighting:
            if _edge_key(u, v) in hi_edges:
                item["color"], item["width"] = HIGHLIGHT_EDGE, max(3.0, item["width"])
            elif fade_others:
                item["color"] = FADED_EDGE
        edges.append(item)
    # Bypass pyvis's add_node/add_edge (quadratic duplicate checks); networkx already dedups.
    net.nodes, net.edges = nodes, edges
    net.node_ids = [n["id"] for n in nodes]
    net.node_map = {n["id"]: n for n in nodes}
    net.options = _options(len(nodes), hierarchical, physics, directed)
    page = net.generate_html()
    return _finish(page)


def _finish(page: str) -> str:
    """Remove remote resources and add our preparation code and styles."""
    page = _REMOTE_TAGS.sub("", page)
    page = _EMPTY_HEADING.sub("", page)
    if _NETWORK_CREATED not in page:  # pragma: no cover - pyvis template changed
        raise RuntimeError("unexpected pyvis template: cannot find the network constructor")
    page = page.replace(_NETWORK_CREATED, PREPARE_JS + "\n                  " + _NETWORK_CREATED + AFTER_JS, 1)
    return page.replace("</head>", EXTRA_CSS + "</head>", 1)


def show_graph(html_page: str, height_px: int = 650, key: str = "rs_graph_view") -> None:
    """Embed a page built by ``graph_html`` in a sandboxed iframe (``ui.graph_component``: no
    same-origin access to the app; the graph is ``height_px`` tall)."""
    from ui.graph_component import sandboxed_graph

    sandboxed_graph(html_page, height_px, key)


def legend_html(items: Iterable[tuple[str, str]]) -> str:
    """A small HTML legend (labels escaped) for ``st.html``: coloured dots with category names."""
    spans = [
        f'<span style="display:inline-block;margin-right:14px;white-space:nowrap;">'
        f'<span style="display:inline-block;width:11px;height:11px;border-radius:50%;background:{html.escape(colour)};'
        f'margin-right:5px;vertical-align:middle;"></span>{html.escape(_cap(label, 40))}</span>'
        for label, colour in items
    ]
    return '<div style="font-size:13px;line-height:1.8;">' + "".join(spans) + "</div>"


def standalone_page(page: str, title: str, caption: str, legend: Iterable[tuple[str, str]]) -> str:
    """A page from ``graph_html`` made to stand on its own (a download): a ``<title>``, a heading, one
    line of caption and the colour legend above the drawing (all escaped)."""
    page = page.replace("<head>", f"<head><title>{html.escape(_cap(title, 200))}</title>", 1)
    header = (f'<div style="font-family:sans-serif;margin:8px 12px;"><h2 style="margin:0 0 4px 0;font-size:18px;">'
              f'{html.escape(_cap(title, 200))}</h2><div style="font-size:13px;color:#444;margin-bottom:4px;">'
              f'{html.escape(caption)}</div>{legend_html(legend)}</div>')
    return re.sub(r"<body[^>]*>", lambda m: m.group(0) + header, page, count=1)

