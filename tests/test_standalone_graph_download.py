"""The downloaded subgraph page (Inspect's "HTML, works offline") is opened from disk, outside the app's
sandboxed frame, so markup in a question, an entity type or a caption must stay text there (issue 38)."""
from __future__ import annotations

HOSTILE = '</title><script>alert(1)</script><img src=x onerror=alert(2)>=HYPERLINK("http://x","y")'


def test_the_standalone_page_escapes_question_caption_and_legend() -> None:
    from ui.graph_view import standalone_page

    page = standalone_page("<html><head></head><body><div id='g'></div></body></html>", f"RAGScope · ppr · {HOSTILE}",
                           f"3 entities {HOSTILE}", [(HOSTILE, "#4e79a7"), ("PERSON", 'red;"><script>alert(3)</script>')])
    assert "<script>" not in page and "<img" not in page and page.count("</title>") == 1
    assert page.count("&lt;script&gt;") >= 3  # the title, the heading, the caption and the legend keep it as text
