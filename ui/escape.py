"""The one place untrusted text is made safe for the places Streamlit and plotly render markup.

Document text, titles, file names, entity names and types, keywords, descriptions, model names,
judge replies and anything a user types are untrusted. Where they reach a Markdown surface
(``st.markdown``, ``st.caption``, ``st.info``/``warning``/``error``, ``st.subheader``, expander,
tab, metric and widget labels, radio options) they go through ``md``; where they reach plotly
(hover text, tick labels, annotations: plotly renders ``<a href>``, ``<b>``, ``<br>``, ``<img>``
is ignored but links work) they go through ``plotly_text``; ``label`` is ``md`` on one line,
capped, for expander and widget labels. HTML built by hand for ``st.html`` uses ``html.escape``
(``ui.prose``, ``ui.graph_view``).
"""
from __future__ import annotations

import html
import re
from typing import Any, Optional

# Every character Markdown (CommonMark + GFM), Streamlit's directives (:color[...], :material/...:)
# or KaTeX ($) give a meaning to; a backslash makes each literal (``<`` / ``>`` / ``&``: no raw HTML
# or entities).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=\"'^])")
# GFM turns bare URLs and e-mail addresses into links after parsing, so backslashes cannot stop
# it: a WORD JOINER (U+2060, invisible, no line break) after the scheme / "www" / "@" does.
_AUTOLINK = re.compile(r"(?i)(\b(?:https?|ftp|mailto|file|javascript|data|www)(?=[:.])|@(?=[\w-]))")
_JOINER = "\u2060"
_TAG = re.compile(r"</?[A-Za-z!][^>]*>?")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _text(value: Any) -> str:
    return "" if value is None else _CONTROL.sub("", str(value))


def cap(value: Any, limit: Optional[int]) -> str:
    """``value`` as text of at most ``limit`` characters (an ellipsis marks a cut)."""
    text = _text(value)
    return text if limit is None or len(text) <= limit else text[: max(0, limit - 1)] + "…"


def md(value: Any, limit: Optional[int] = None) -> str:
    """Untrusted text for a Markdown surface: every Markdown / HTML character backslash-escaped,
    so ``[x](http://y)``, ``![i](http://y)``, ``<img src=x onerror=…>`` or ``**x**`` show as typed,
    and bare URLs / e-mail addresses stay text (an invisible joiner after the scheme or ``@``)."""
    text = _AUTOLINK.sub(lambda m: m.group(1) + _JOINER, cap(value, limit))
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def label(value: Any, limit: int = 80) -> str:
    """Untrusted text for a one-line label (expander, tab, metric, widget, radio option)."""
    return md(" ".join(cap(value, limit).split()))


def plotly_text(value: Any, limit: Optional[int] = 200) -> str:
    """Untrusted text for plotly (hover, ticks, annotations): tags removed, the rest entity-escaped
    (plotly reads ``&lt;`` back as ``<`` text, never as a tag)."""
    return html.escape(_TAG.sub("", cap(value, limit)), quote=False)
