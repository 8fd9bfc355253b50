"""PDF files: the text layer, page by page, with the caps checked before text extraction.

Order of the checks, cheapest first: the page tree's declared ``/Count`` and then the real page
count against ``max_document_pages``; then the pages' content streams, decoded once each (pypdf's
own decoders, themselves bounded by pypdf's stream limits) and summed over the pages that use them,
against ``max_archive_uncompressed_mb`` and ``max_archive_ratio`` — a few kilobytes of compressed
drawing instructions shared by many pages is how a small PDF makes text extraction run for minutes;
then, while extracting, the characters so far against ``max_document_chars``. Running headers, footers
and page numbers are dropped from each page's text (``core.parsing.furniture``) before the pages are
joined, so the recorded page offsets count the text that is kept.
"""
from __future__ import annotations

import io
import logging
from typing import Any

from pypdf import PdfReader
from pypdf.generic import ArrayObject, IndirectObject

from core.parsing.furniture import strip_furniture
from core.parsing.limits import LimitExceeded, ParseLimits, check_chars, check_expansion, check_pages, number
from core.parsing.text import Result, document, fail, normalise, short
from core.types import SourceDocument


def _declared_count(reader: PdfReader) -> int:
    try:
        root: Any = reader.trailer["/Root"]
        count = root["/Pages"]["/Count"]
        return int(count) if isinstance(count, (int, float)) else 0
    except Exception:  # noqa: BLE001 - a broken tree is pypdf's to report when the pages are read
        return 0


def _content_refs(page: Any) -> list[Any]:
    """The page's content stream objects (one stream or an array of them), as references when indirect."""
    raw = page.get("/Contents")
    if isinstance(raw, IndirectObject):
        target = raw.get_object()
        return list(target) if isinstance(target, ArrayObject) else [raw]
    return list(raw) if isinstance(raw, ArrayObject) else ([raw] if raw is not None else [])


def page_content_bytes(pages: Any, limits: ParseLimits) -> int:
    """Decoded size of every page's content, a stream shared by several pages counted once per page
    (extraction interprets it once per page); stops early once over the uncompressed cap."""
    sizes: dict[tuple[int, int], int] = {}
    total = 0
    for page in pages:
        for ref in _content_refs(page):
            key = (ref.idnum, ref.generation) if isinstance(ref, IndirectObject) else None
            if key is None or key not in sizes:
                stream = ref.get_object()
                size = len(stream.get_data()) if hasattr(stream, "get_data") else 0
                if key is None:
                    total += size
                    continue
                sizes[key] = size
            total += sizes[key]
        if total > limits.max_archive_uncompressed_bytes:
            break
    return total


def load_pdf(name: str, data: bytes, limits: ParseLimits) -> Result:
    """A PDF's text layer, or a failure (password, no text layer, over a cap)."""
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed files are reported, not logged
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            return fail(name, "the PDF is password-protected; remove the password first")
        check_pages(_declared_count(reader), limits)  # before walking the page tree
        pages = reader.pages
        n_pages = len(pages)
        check_pages(n_pages, limits)
        check_expansion(page_content_bytes(pages, limits), len(data), limits, "the pages' content streams")
    except (LimitExceeded, MemoryError):
        raise
    except Exception as exc:  # noqa: BLE001
        return fail(name, f"could not read the PDF: {short(exc)}")
    texts: list[tuple[int, str]] = []
    errors: list[str] = []
    n_chars = 0
    for index in range(n_pages):
        try:
            text = (pages[index].extract_text() or "").strip()
        except MemoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - one bad page does not lose the others
            errors.append(short(exc))
            continue
        n_chars += len(text) + 2
        check_chars(n_chars, limits, f"stopped at page {number(index + 1)} of {number(n_pages)}")
        texts.append((index + 1, normalise(text)))
    texts = [(page, t) for (page, _), t in zip(texts, strip_furniture([t for _, t in texts])) if t]
    if not texts:
        return fail(name, f"could not read the PDF: {errors[0]}" if errors else "the PDF has no pages"
                    if n_pages == 0 else "the PDF has no text layer (scanned?); OCR it first")
    docs, failures = document(name, "\n\n".join(t for _, t in texts), limits)
    return [_with_pages(doc, texts) for doc in docs], failures


def _with_pages(doc: SourceDocument, texts: list[tuple[int, str]]) -> SourceDocument:
    """``doc`` with the offset of every page in its text (a page without text starts where the next
    one does; the pages are joined by a blank line)."""
    starts: list[int] = []
    offset = 0
    for page, text in texts:
        while len(starts) < page:
            starts.append(offset)
        offset += len(text) + 2
    doc.page_starts = tuple(starts)
    return doc
