"""The source viewer: a cited chunk opened in its document at its place, the cited span highlighted.

A PDF whose uploaded file was kept (``doc_files``, see ``core.storage.schema``) is shown as its real
page, rendered by PDFium (pypdfium2), with boxes over the span's characters. The boxes come from the
same library that renders the page: the quoted text is found in PDFium's own text of that page
(``core.citations.locate``, whitespace-insensitive, since pypdf's extracted text and PDFium's differ in
spacing) and each found character's box is read from PDFium, then merged line by line. Every other
document (text, Markdown, HTML, DOCX, a PDF whose file was not kept) is shown as its stored text around
the span, escaped, with the span marked. Nothing here is served as a file: the page image is bytes the
caller shows after its own role check (``core.api.source_view``).
"""
from __future__ import annotations

import html
import io
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from core.citations import MAX_QUOTE_CHARS, citation_body, locate, locate_head, quote_candidates, quote_where, where_of

if TYPE_CHECKING:
    from core.workspace import Workspace

CONTEXT_CHARS = 700  # characters of text shown on each side of the span (formats without pages)
SCALE = 1.5  # pixels per PDF point of the rendered page
Box = tuple[float, float, float, float]  # left, top, right, bottom in pixels of the rendered page


@dataclass
class SourceView:
    """What the viewer shows for one chunk: where it is, and the page image or the marked text."""

    doc_name: str
    cited: str  # "doc, p. 3", "doc, § Heading", "doc, l. 40" or "doc, chunk 2"
    page: Optional[int] = None
    image_png: bytes = field(default=b"", repr=False)
    boxes: list[Box] = field(default_factory=list)
    html: str = ""  # the escaped text around the span with the span in <mark> (no page image)
    note: str = ""  # why the page image is not shown, or the span was not found on it


def char_boxes(data: bytes, page_no: int, quote: str) -> tuple[list[Box], float, float]:
    """PDFium's character boxes (pixels at ``SCALE``, top-left origin) of ``quote`` on page ``page_no``
    (1-based) and the page's pixel size; no boxes when the quote is not on that page."""
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(data)
    try:
        page = pdf[page_no - 1]
        width, height = page.get_size()
        textpage = page.get_textpage()
        text = textpage.get_text_range()
        start, end = locate(text, quote)
        if start < 0:  # a stored sentence without the markup the page keeps: placed by its first words
            start, end = locate_head(text, quote)
        boxes: list[Box] = []
        if start >= 0:
            for i in range(start, min(end, textpage.count_chars())):
                left, bottom, right, top = textpage.get_charbox(i)
                if right > left and top > bottom:
                    boxes.append((left * SCALE, (height - top) * SCALE, right * SCALE, (height - bottom) * SCALE))
        return boxes, width * SCALE, height * SCALE
    finally:
        pdf.close()


def merge_lines(boxes: list[Box]) -> list[Box]:
    """One box per text line: character boxes whose vertical middles are within half a line merged."""
    lines: list[list[float]] = []
    for left, top, right, bottom in boxes:
        middle = (top + bottom) / 2
        for line in lines:
            if abs((line[1] + line[3]) / 2 - middle) <= (line[3] - line[1]) / 2:
                line[0], line[1], line[2], line[3] = min(line[0], left), min(line[1], top), max(line[2], right), \
                    max(line[3], bottom)
                break
        else:
            lines.append([left, top, right, bottom])
    return [(a, b, c, d) for a, b, c, d in lines]


def render_page(data: bytes, page_no: int, boxes: list[Box]) -> bytes:
    """Page ``page_no`` of the PDF as PNG bytes with translucent yellow boxes drawn over ``boxes``."""
    import pypdfium2 as pdfium
    from PIL import Image, ImageDraw

    pdf = pdfium.PdfDocument(data)
    try:
        image = pdf[page_no - 1].render(scale=SCALE).to_pil().convert("RGBA")
    finally:
        pdf.close()
    overlay = Image.new("RGBA", image.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(overlay)
    for left, top, right, bottom in boxes:
        draw.rectangle((left - 1, top - 1, right + 1, bottom + 1), fill=(255, 220, 0, 110), outline=(230, 150, 0, 255))
    out = io.BytesIO()
    Image.alpha_composite(image, overlay).convert("RGB").save(out, format="PNG")
    return out.getvalue()


def marked_text(text: str, start: int, end: int, context: int = CONTEXT_CHARS) -> str:
    """The text around ``[start, end)`` as HTML: everything escaped, the span in ``<mark>``, line breaks kept."""
    lo, hi = max(0, start - context), min(len(text), end + context)
    parts = ["…" if lo > 0 else "", html.escape(text[lo:start]), "<mark>", html.escape(text[start:end]), "</mark>",
             html.escape(text[end:hi]), "…" if hi < len(text) else ""]
    return '<div style="white-space:pre-wrap;font-family:serif;line-height:1.5">' + "".join(parts) + "</div>"


def chunk_of_quote(ws: Workspace, doc_name: str, segment: str) -> tuple[str, str]:
    """``(chunk id, quote)`` of the first chunk of the document named ``doc_name`` that holds the
    sentence an answer line quotes (``segment``, label included), ``("", "")`` when none does."""
    wanted = doc_name.strip().casefold()
    for doc in ws.records.documents("processed"):
        if doc.name.strip().casefold() != wanted:
            continue
        chunks = ws.records.chunks_of(doc.doc_id)
        for quote in quote_candidates(segment):
            for chunk in chunks:
                if locate(chunk.text, quote)[0] >= 0:
                    return chunk.chunk_id, quote
    return "", ""


def source_view(ws: Workspace, chunk_id: str, quote: str = "") -> Optional[SourceView]:
    """The view of chunk ``chunk_id`` (None: no such chunk), at the page of ``quote`` (a sentence of
    the chunk) or of the chunk's start, the quote (default: the chunk's text) highlighted."""
    chunk = ws.records.chunks_by_id([chunk_id]).get(chunk_id)
    if chunk is None:
        return None
    name = ws.doc_names().get(chunk.doc_id, chunk.doc_id)
    positions = ws.records.positions([chunk.doc_id]).get(chunk.doc_id)
    wanted = quote.strip() or chunk.text
    where = quote_where(positions, chunk.start_char, chunk.text, wanted)
    if not quote.strip():
        where = where_of(positions, chunk.start_char, len(chunk.text))
    first = where.page_start
    view = SourceView(doc_name=name, cited=citation_body(name, first, where.page_end, chunk.order, where.section,
                                                         where.line_start, where.line_end), page=first)
    data = ws.records.original(chunk.doc_id) if first is not None else None
    if first is not None and data:
        boxes, _, _ = char_boxes(data, first, wanted)
        view.boxes = merge_lines(boxes)
        view.image_png = render_page(data, first, view.boxes)
        if not boxes:
            view.note = "The cited text was not found in this page's text layer; the page is shown without highlight."
        return view
    if first is not None:
        view.note = "The original file was not kept (added before files were kept, or over the size cap): its text is shown."
    text = ws.records.document_text(chunk.doc_id) or ""
    start = chunk.start_char if chunk.start_char >= 0 else text.find(chunk.text)
    if start < 0:
        view.html = marked_text(chunk.text, 0, len(chunk.text), 0)
        view.note = (view.note + " " if view.note else "") + "The chunk's place in the document is not known."
        return view
    span_start, span_end = locate(chunk.text, quote) if quote.strip() else (0, len(chunk.text))
    if span_start < 0 and quote.strip():
        span_start, span_end = locate_head(chunk.text, quote)
    if span_start < 0:
        span_start, span_end = 0, len(chunk.text)
    view.html = marked_text(text, start + span_start, start + span_end)
    return view
