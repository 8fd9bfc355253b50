"""Document loaders: turn uploads, files and folders into ``SourceDocument`` records.

Public functions return ``(documents, failures)`` and never raise for bad input: an unreadable
file (or JSONL line) becomes a ``LoadFailure`` with a human-readable reason, and loading goes on.
Formats: text/Markdown (encoding detection), HTML, PDF (text layer), DOCX, and JSONL corpora in
the shared package format (one object per line with ``doc_id``, ``title``, ``text``).
"""
from __future__ import annotations

import io
import json
import logging
import os
import re
import unicodedata
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Optional, Union

import docx
from bs4 import BeautifulSoup, NavigableString, Tag
from bs4.element import Comment, Declaration, Doctype, ProcessingInstruction
from charset_normalizer import from_bytes
from docx.table import Table
from docx.text.paragraph import Paragraph
from pypdf import PdfReader

from core.types import LoadFailure, SourceDocument

SUPPORTED_EXTENSIONS: set[str] = {".txt", ".md", ".markdown", ".pdf", ".docx", ".html", ".htm", ".jsonl"}
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
MAX_NAME_CHARS = 200
MAX_LINE_FAILURES = 200  # per JSONL file; further bad lines are summarised in one failure

Result = tuple[list[SourceDocument], list[LoadFailure]]

_EMPTY = "the document is empty"
_MAGIC: list[tuple[bytes, str]] = [
    (b"\x89PNG\r\n\x1a\n", "PNG image"), (b"\xff\xd8\xff", "JPEG image"), (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"), (b"II*\x00", "TIFF image"), (b"MM\x00*", "TIFF image"), (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive or Office document"), (b"\x1f\x8b", "gzip archive"), (b"\x7fELF", "executable"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"), (b"Rar!\x1a\x07", "RAR archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "legacy Office document"),
]
_BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
         (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"), (b"\xef\xbb\xbf", "utf-8"))
_BIDI_CONTROLS = set("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_CONTROL_RE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_CONTROL_C1_RE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def _fail(name: str, reason: str) -> Result:
    return [], [LoadFailure(name, reason)]


def _human_size(n: int) -> str:
    for size, unit in ((1024 ** 3, "GB"), (1024 ** 2, "MB"), (1024, "KB")):
        if n >= size:
            return f"{n / size:.1f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{n} bytes"


def _short(exc: BaseException, limit: int = 200) -> str:
    msg = " ".join(str(exc).split()) or type(exc).__name__
    return msg if len(msg) <= limit else msg[: limit - 1] + "…"


def _unsupported(name: str) -> Result:
    ext = Path(name).suffix.lower()
    what = f"unsupported file type {ext}" if ext else "unsupported file type: no extension"
    return _fail(name, f"{what} (supported: {', '.join(sorted(SUPPORTED_EXTENSIONS))})")


def sanitize_name(name: str) -> str:
    """Reduce an untrusted file name to a safe base name: no directories (``../../x.txt`` -> ``x.txt``),
    control/bidi characters or leading dots; at most ~200 characters, extension kept; non-ASCII kept."""
    text = unicodedata.normalize("NFC", str(name or ""))
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cc" and ch not in _BIDI_CONTROLS)
    base = text.replace("\\", "/").rstrip("/").split("/")[-1].strip().lstrip(".").strip()
    if len(base) > MAX_NAME_CHARS:
        stem, dot, ext = base.rpartition(".")
        if dot and stem and len(ext) <= 16 and " " not in ext:
            base = stem[: MAX_NAME_CHARS - len(ext) - 1].rstrip() + "." + ext
        else:
            base = base[:MAX_NAME_CHARS]
    return base or "unnamed"


def _magic_kind(data: bytes) -> Optional[str]:
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    return "WEBP image" if data[:4] == b"RIFF" and data[8:12] == b"WEBP" else None


def _binary_reason(kind: Optional[str] = None) -> str:
    return f"looks like a binary file{f' ({kind})' if kind else ''}, not text"


def _control_share(text: str, c1_is_control: bool = False) -> float:
    pattern = _CONTROL_C1_RE if c1_is_control else _CONTROL_RE
    return len(pattern.findall(text)) / len(text) if text else 0.0


def _guess_legacy(data: bytes) -> Optional[str]:
    """Decode non-UTF-8 bytes with charset-normalizer, then a plausible cp1252/Latin-1 fallback."""
    matches = list(from_bytes(data))
    if matches:
        # charset-normalizer often ties cp1250 with cp1252 on short Western text; prefer cp1252.
        ties = [m for m in matches if m.encoding == "cp1252" and m.chaos <= matches[0].chaos
                and m.coherence >= matches[0].coherence]
        text = str((ties or matches)[0])
        if _control_share(text) <= 0.05:
            return text
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    return text if _control_share(text, c1_is_control=True) <= 0.05 else None


def decode_text(data: bytes) -> tuple[Optional[str], Optional[str]]:
    """Decode text bytes to ``(text, None)``, or ``(None, reason)`` for binary input. Order: BOMs,
    binary magic/NUL check, strict UTF-8, charset-normalizer, plausible cp1252/Latin-1."""
    text: Optional[str] = None
    for bom, codec in _BOMS:
        if data.startswith(bom):
            text = data[len(bom):].decode(codec, errors="replace")
            break
    else:
        kind = _magic_kind(data)
        if kind or b"\x00" in data:
            return None, _binary_reason(kind)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = _guess_legacy(data)
    if text is None or _control_share(text) > 0.05:
        return None, _binary_reason()
    return text, None


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _document(name: str, text: str) -> Result:
    text = _normalise(text)
    if not text.strip():
        return _fail(name, _EMPTY)
    return [SourceDocument(name=name, text=text, doc_id=None, source=name)], []


def _load_text(name: str, data: bytes) -> Result:
    text, reason = decode_text(data)
    return _document(name, text) if text is not None else _fail(name, reason or _binary_reason())


_DROP_TAGS = {"script", "style", "noscript", "template", "iframe", "object", "svg", "canvas", "head"}
_BLOCK_TAGS = {"p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "blockquote",
               "pre", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "dl", "dt", "dd", "table",
               "tr", "caption", "figure", "figcaption", "form", "fieldset", "address", "hr", "title",
               "body", "details", "summary"}
_PARA, _LINE = "\u2029", "\u2028"  # private block / line-break markers (Unicode separators)
_PARA_MARK = object()


def _html_text(root: object) -> str:
    """Visible text of a parsed HTML tree, walked iteratively (deep nesting is fine), with markers."""
    hidden_strings = (Comment, Declaration, Doctype, ProcessingInstruction)
    parts: list[str] = []
    stack: list[object] = [root]
    while stack:
        item = stack.pop()
        if item is _PARA_MARK:
            parts.append(_PARA)
        elif isinstance(item, NavigableString):
            if not isinstance(item, hidden_strings):
                parts.append(str(item))
        elif isinstance(item, Tag):
            name = (item.name or "").lower()
            if name in _DROP_TAGS:
                if name == "head":  # of the head, only the <title> is visible text
                    stack.extend(reversed(item.find_all("title")))
                continue
            if name in ("br", "pre"):  # line breaks inside <pre> are kept
                text = _normalise(item.get_text()).replace("\n", _LINE) if name == "pre" else ""
                parts.append(_LINE if name == "br" else _PARA + text + _PARA)
                continue
            if name in _BLOCK_TAGS:
                parts.append(_PARA)
                stack.append(_PARA_MARK)
            stack.extend(reversed(item.contents))
    return "".join(parts)


def _load_html(name: str, data: bytes) -> Result:
    kind = _magic_kind(data)
    if kind:
        return _fail(name, _binary_reason(kind))
    try:
        markup: Union[str, bytes] = data  # bytes: BeautifulSoup honours <meta charset>
        if data.startswith(tuple(bom for bom, _ in _BOMS)) or b"\x00" in data:
            text, reason = decode_text(data)
            if text is None:
                return _fail(name, reason or _binary_reason())
            markup = text
        try:
            soup = BeautifulSoup(markup, "lxml")
        except Exception:  # noqa: BLE001 - lxml missing or unusable
            soup = BeautifulSoup(markup, "html.parser")
        raw = _html_text(soup)
    except Exception as exc:  # noqa: BLE001
        return _fail(name, f"could not read the HTML: {_short(exc)}")
    paragraphs = []
    for block in raw.split(_PARA):
        joined = "\n".join(" ".join(line.split()) for line in block.split(_LINE)).strip("\n")
        if joined.strip():
            paragraphs.append(re.sub(r"\n{3,}", "\n\n", joined))
    return _document(name, "\n\n".join(paragraphs))


def _load_pdf(name: str, data: bytes) -> Result:
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # malformed files are reported, not logged
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            return _fail(name, "the PDF is password-protected; remove the password first")
        pages = reader.pages
        n_pages = len(pages)
    except Exception as exc:  # noqa: BLE001
        return _fail(name, f"could not read the PDF: {_short(exc)}")
    texts: list[str] = []
    errors: list[str] = []
    for index in range(n_pages):
        try:
            texts.append((pages[index].extract_text() or "").strip())
        except Exception as exc:  # noqa: BLE001 - one bad page does not lose the others
            errors.append(_short(exc))
    texts = [t for t in texts if t]
    if not texts:
        return _fail(name, f"could not read the PDF: {errors[0]}" if errors else "the PDF has no pages"
                     if n_pages == 0 else "the PDF has no text layer (scanned?); OCR it first")
    return _document(name, "\n\n".join(texts))


def _docx_blocks(container: object, out: list[str], depth: int = 0) -> None:
    """Paragraph texts and table rows (cells joined by `` | ``) in document order."""
    for item in container.iter_inner_content():  # type: ignore[attr-defined]
        if isinstance(item, Paragraph) and item.text.strip():
            out.append(item.text)
        elif isinstance(item, Table) and depth < 5:  # depth: tables nested in cells
            for row in item.rows:
                cells: list[str] = []
                for cell in {id(cell._tc): cell for cell in row.cells}.values():  # merged cells repeat
                    inner: list[str] = []
                    _docx_blocks(cell, inner, depth + 1)
                    cells.append(" ".join(part.strip() for part in inner if part.strip()))
                if any(cells):
                    out.append(" | ".join(cell for cell in cells if cell))


def _load_docx(name: str, data: bytes) -> Result:
    try:
        parts: list[str] = []
        _docx_blocks(docx.Document(io.BytesIO(data)), parts)
    except Exception as exc:  # noqa: BLE001
        return _fail(name, f"could not read the DOCX: {_short(exc)}")
    return _document(name, "\n\n".join(parts))


def _corpus_record(obj: object, name: str, number: int, first: dict[str, int]) -> Union[SourceDocument, str]:
    """One parsed JSONL value as a document, or the reason it is refused."""
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}"
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        return 'missing or empty "text" field' if text is None or isinstance(text, str) else '"text" must be a string'
    raw_id = obj.get("doc_id")
    if raw_id is not None and (isinstance(raw_id, bool) or not isinstance(raw_id, (str, int))):
        return '"doc_id" must be a string'
    doc_id = (str(raw_id).strip() or None) if raw_id is not None else None
    if doc_id is not None:
        if doc_id in first:
            return f"duplicate doc_id {doc_id} (first on line {first[doc_id]})"
        first[doc_id] = number
    raw_title = obj.get("title")
    title = "" if raw_title is None else str(raw_title).strip()
    return SourceDocument(name=title or doc_id or f"{name} line {number}",
                          text=_normalise(f"{title}\n{text}" if title else text), doc_id=doc_id, source=name)


def _load_jsonl(name: str, head: bytes, lines: Iterable[bytes]) -> Result:
    """Stream a JSONL corpus: one document per line; a bad line fails alone, naming its number."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return _fail(name, "the JSONL file is UTF-16 encoded; save it as UTF-8")
    kind = _magic_kind(head)
    if kind or b"\x00" in head:
        return _fail(name, _binary_reason(kind))
    docs: list[SourceDocument] = []
    failures: list[LoadFailure] = []
    first_line: dict[str, int] = {}
    unlisted = 0
    for number, raw in enumerate(lines, start=1):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        try:
            record = _corpus_record(json.loads(raw.decode("utf-8")), name, number, first_line)
        except UnicodeDecodeError:
            record = "not valid UTF-8 text"
        except json.JSONDecodeError as exc:
            record = f"not valid JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})"
        except RecursionError:
            record = "not valid JSON (nested too deeply)"
        if isinstance(record, SourceDocument):
            docs.append(record)
        elif len(failures) < MAX_LINE_FAILURES:
            failures.append(LoadFailure(f"{name} line {number}", record))
        else:
            unlisted += 1
    if unlisted:
        failures.append(LoadFailure(name, f"{unlisted} more bad lines not listed"))
    if not docs and not failures:
        failures.append(LoadFailure(name, _EMPTY))
    return docs, failures


_LOADERS = {".txt": _load_text, ".md": _load_text, ".markdown": _load_text, ".html": _load_html,
            ".htm": _load_html, ".pdf": _load_pdf, ".docx": _load_docx}


def _load_source(name: str, size: Callable[[], int], max_bytes: int, open_: Callable[[], BinaryIO]) -> Result:
    """Shared path of uploads and files: type check, size check (before reading), then the loader."""
    ext = Path(name).suffix.lower()
    if ext not in SUPPORTED_EXTENSIONS:
        return _unsupported(name)
    try:
        n_bytes = size()
        if n_bytes > max_bytes:
            size, limit = _human_size(n_bytes), _human_size(max_bytes)
            if size == limit:  # just over the limit: "50 MB; the limit is 50 MB" would read as a contradiction
                size, limit = f"{n_bytes:,} bytes", f"{max_bytes:,} bytes"
            return _fail(name, f"the file is too large ({size}; the limit is {limit})")
        with open_() as handle:
            if ext == ".jsonl":  # streamed line by line
                head = handle.read(64)
                handle.seek(0)
                return _load_jsonl(name, head, handle)
            data = handle.read()
        return _LOADERS[ext](name, data) if data.strip() else _fail(name, _EMPTY)
    except Exception as exc:  # noqa: BLE001 - never raise for bad input
        return _fail(name, f"could not read the file: {_short(exc)}")


def load_bytes(name: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> Result:
    """Load one uploaded file from its (untrusted) name and bytes."""
    return _load_source(sanitize_name(name), lambda: len(data), max_bytes, lambda: io.BytesIO(bytes(data)))


def _load_file(path: Path, display: str, max_bytes: int) -> Result:
    return _load_source(display, lambda: path.stat().st_size, max_bytes, lambda: path.open("rb"))


def _concat(results: Iterable[Result]) -> Result:
    docs: list[SourceDocument] = []
    failures: list[LoadFailure] = []
    for got, bad in results:
        docs.extend(got)
        failures.extend(bad)
    return docs, failures


def load_path(path: Union[Path, str], max_bytes: int = DEFAULT_MAX_BYTES) -> Result:
    """Load a file, or every non-hidden file of a folder (recursively, sorted by relative path;
    documents named by relative path; unsupported files reported; dot-files and dot-folders skipped)."""
    path = Path(path)
    label = path.name or str(path)
    try:
        if path.is_file():
            return _load_file(path, path.name, max_bytes)
        if not path.is_dir():
            return _fail(str(path), "no such file or folder")
        found: list[tuple[str, Path]] = []
        for root, dirs, files in os.walk(path, followlinks=False):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            found += [((Path(root) / f).relative_to(path).as_posix(), Path(root) / f)
                      for f in files if not f.startswith(".")]
    except Exception as exc:  # noqa: BLE001
        return _fail(label, f"could not read the folder: {_short(exc)}")
    if not found:
        return _fail(label, "the folder has no files to load")
    return _concat(_load_file(full, display, max_bytes) for display, full in sorted(found))


def load_paths(paths: list[Path], max_bytes: int = DEFAULT_MAX_BYTES) -> Result:
    """Load several files and/or folders, concatenating the results in the given order."""
    return _concat(load_path(path, max_bytes) for path in paths)
