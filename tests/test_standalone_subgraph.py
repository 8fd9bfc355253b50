"""The downloaded subgraph page stands on its own: a <title>, a heading, the counts and the colour
legend, all escaped (``ui.graph_view.standalone_page``)."""
from __future__ import annotations

import networkx as nx

from ui.graph_view import graph_html, legend_items, standalone_page


def test_the_standalone_page_has_a_title_and_a_legend_and_escapes_them():
    graph = nx.Graph()
    graph.add_node("a", name="Port Sallow", type="GPE")
    graph.add_node("b", name="<b>Orla</b>", type="PERSON")
    graph.add_edge("a", "b", keywords=["sailed"], weight=1.0)
    page = standalone_page(graph_html(graph, height_px=300), "RAGScope · local · Who <script>?", "2 nodes drawn.",
                           legend_items(graph, "type"))
    head, body = page.split("</head>", 1)
    assert "<title>RAGScope · local · Who &lt;script&gt;?</title>" in head
    top = body[: body.index("mynetwork")]
    assert "<h2" in top and "Who &lt;script&gt;?" in top and "2 nodes drawn." in top
    assert "GPE" in top and "PERSON" in top  # the legend names the entity types, above the drawing
    assert "<script>?" not in page
