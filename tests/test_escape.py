"""Defence in depth without a browser (issue 20): the escaping helper, the sandboxed graph frame's
contract, the layout cap and the data folder's mode. ``test_payload_browser.py`` checks the same
things rendered in Chromium."""
from __future__ import annotations

import stat

import networkx as nx
import pytest

from ui.escape import label, md, plotly_text

PAYLOADS = ['<img src=x onerror="alert(1)">', "[link](http://x.test/a)", "![img](http://x.test/i.png)",
            "<script>alert(1)</script>", "http://x.test/bare", "www.x.test", "mail me@x.test", "**bold** _it_",
            ":red[colour] :material/home: $x^2$"]


def unescaped(text: str) -> str:
    """What a Markdown renderer shows for ``text`` once backslash escapes are resolved."""
    import re

    return re.sub(r"\\(.)", r"\1", text)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_md_escapes_every_markdown_and_html_character(payload: str) -> None:
    out = md(payload)
    for ch in "<>[]()!*_`$:":
        assert ch not in out.replace("\\" + ch, ""), (payload, out)  # every such character is escaped
    shown = unescaped(out).replace("\u2060", "")
    assert shown == payload  # and reads back as typed (the joiner is invisible)


def test_md_breaks_bare_links_that_gfm_finds_after_parsing() -> None:
    shown = unescaped(md("see http://x.test/a, www.x.test and me@x.test"))
    assert "http://" not in shown and "www." not in shown and "@x" not in shown  # a joiner sits inside each
    assert shown.replace("\u2060", "") == "see http://x.test/a, www.x.test and me@x.test"


def test_label_is_one_line_and_capped() -> None:
    out = label("first line\nsecond [x](http://y) " + "z" * 200, limit=40)
    assert "\n" not in out and len(unescaped(out).replace("\u2060", "")) <= 40


def test_plotly_text_strips_tags_and_escapes_the_rest() -> None:
    assert plotly_text('<a href="http://x">name</a> <b>B</b> <img src=x onerror=y>') == "name B "
    assert plotly_text("a < b & c") == "a &lt; b &amp; c"
    assert len(plotly_text("x" * 500, 60)) == 60


def test_graph_frame_is_sandboxed_and_talks_by_message() -> None:
    from ui import graph_component
    from ui.graph_view import graph_html

    js = graph_component._JS
    assert 'setAttribute("sandbox", "allow-scripts")' in js and "allow-same-origin" not in js
    assert "contentWindow.network" not in js  # no reach into the frame: an opaque origin forbids it
    assert "event.source !== frame.contentWindow" in js  # only the component's own frame is heard
    graph = nx.Graph()
    graph.add_edge("a", "b")
    page = graph_html(graph)
    assert 'window.parent.postMessage(msg, "*")' in page and '"graph-select"' in page


def test_show_graph_uses_the_sandboxed_frame(monkeypatch) -> None:
    from ui import graph_component, graph_view

    drawn = []
    monkeypatch.setattr(graph_component, "sandboxed_graph", lambda *args: drawn.append(args))
    graph_view.show_graph("<html></html>", 300)
    assert drawn == [("<html></html>", 300, "rs_graph_view")]


def test_force_layout_views_are_capped() -> None:
    from ui.graph_view import MAX_LAYOUT_NODES, GraphTooLarge, graph_html

    too_big = nx.path_graph(MAX_LAYOUT_NODES + 1)
    with pytest.raises(GraphTooLarge, match="narrow the view"):
        graph_html(too_big)
    assert "vis.Network" in graph_html(too_big, hierarchical=True)  # no Python layout: the browser's own


def test_the_data_folder_is_created_owner_only(tmp_path, monkeypatch) -> None:
    from core.config import data_dir

    target = tmp_path / "nested" / "workspaces"
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(target))
    assert data_dir() == target and target.is_dir()
    assert stat.S_IMODE(target.stat().st_mode) == 0o700
