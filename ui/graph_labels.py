"""Which node labels a drawn graph shows: only where they fit.

Force layouts (positions in layout pixels, computed in Python and kept by the browser): the
best-connected (and highlighted) nodes first; a label is kept when its box, drawn under its dot,
overlaps no label already placed and — after the first ``LABEL_HUBS`` — no other node's dot.
Hierarchical layouts (no positions): small graphs label everything, large ones their
``LABEL_TOP`` best-connected nodes. Every node keeps its tooltip either way.
"""
from __future__ import annotations

from typing import Any, Hashable, Optional

import networkx as nx

MAX_LABEL_CHARS = 40
LABEL_ALL_MAX = 300  # hierarchical graphs larger than this label only their LABEL_TOP best-connected nodes
LABEL_TOP = 80  # at most this many labels; force layouts label only where a label fits (all keep tooltips)
LABEL_CHAR_PX = 7.5  # approximate width of one label character at font size 14
LABEL_LINE_PX = 18.0
LABEL_HUBS = 8  # the first labels (best-connected or highlighted) may cover other dots
DOT_CORE = 0.6  # the part of a dot (fraction of its radius) no other node's label may cover


def cap_text(text: Any, limit: int) -> str:
    """A one-line-or-more string capped at ``limit`` characters (control characters removed)."""
    value = "" if text is None else str(text)
    value = "".join(ch for ch in value if ch in "\n\t" or ch.isprintable())
    return value if len(value) <= limit else value[: limit - 1] + "…"


def _labelled_nodes(graph: nx.Graph, degrees: dict[Hashable, int], always: set,
                    positions: dict[Hashable, tuple[float, float]], label_attr: str,
                    sizes: Optional[dict[Hashable, float]] = None) -> set:
    """The nodes whose label fits: best-connected (and highlighted) first, a label is kept only when
    its box (drawn below its dot) overlaps no label already placed and — after the first
    ``LABEL_HUBS`` — no other node's dot (positions in layout pixels); every node keeps its tooltip. Without positions (hierarchical
    layouts), small graphs label everything."""
    if not positions:
        if graph.number_of_nodes() <= LABEL_ALL_MAX:
            return set(graph.nodes)
        return set(sorted(degrees, key=lambda n: -degrees[n])[:LABEL_TOP]) | (always & set(graph.nodes))
    sizes = sizes or {}
    core = {n: DOT_CORE * sizes.get(n, 8.0) for n in positions}  # text may touch a dot's rim, not cross its middle
    dots = {n: (x - core[n], y - core[n], x + core[n], y + core[n])
            for n, (x, y) in positions.items()}
    ranked = sorted(graph.nodes, key=lambda n: (n not in always, -degrees.get(n, 0), str(n)))
    placed: list[tuple[float, float, float, float]] = []
    chosen: set = set()
    for node in ranked:
        box = label_box(positions.get(node, (0.0, 0.0)), graph.nodes[node].get(label_attr) or node,
                        sizes.get(node, 8.0))
        if any(_overlap(box, b) for b in placed):
            continue
        if len(chosen) >= LABEL_HUBS and any(_overlap(box, d) for n, d in dots.items() if n != node):
            continue  # the hubs (and highlighted nodes) are always named; the rest only where nothing is covered
        placed.append(box)
        chosen.add(node)
        if len(chosen) >= LABEL_TOP:
            break
    return chosen


def label_box(position: tuple[float, float], text: Any, size: float) -> tuple[float, float, float, float]:
    """(left, top, right, bottom) of a node's label in layout pixels: vis draws it under the dot."""
    x, y = position
    half_w = max(len(cap_text(text, MAX_LABEL_CHARS)), 3) * LABEL_CHAR_PX / 2
    top = y + size + 2
    return (x - half_w, top, x + half_w, top + LABEL_LINE_PX)


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
