"""Document loaders: turn uploads, files and folders into ``SourceDocument`` records.

Every public function returns ``(documents, failures)`` and never raises for bad input:
an unreadable file (or a broken JSONL line) becomes a ``LoadFailure`` with a reason a
person can act on, and loading carries on with the next file or line.

Supported formats: plain text and Markdown (with encoding detection), HTML, PDF (text
layer only), DOCX, and JSONL corpora in the shared package format (one JSON object per
line with ``doc_id``, ``title`` and ``text``).
"""
from __future__ import annotations

import io
import json
import os
import re
import unicodedata
from pathlib import Path
from typing import Iterable, Optional, Union

from core.types import LoadFailure, SourceDocument

SUPPORTED_EXTENSIONS: set[str] = {".txt", ".md", ".markdown", ".pdf", ".docx", ".html", ".htm", ".jsonl"}
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
MAX_NAME_CHARS = 200
MAX_LINE_FAILURES = 200  # per JSONL file; further bad lines are summarised in one failure

Result = tuple[list[SourceDocument], list[LoadFailure]]

_TEXT_EXTENSIONS = {".txt", ".md", ".markdown"}
_HTML_EXTENSIONS = {".html", ".htm"}
_EMPTY = "the document is empty"
_MAGIC: list[tuple[bytes, str]] = [
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive or Office document"),
    (b"\x1f\x8b", "gzip archive"),
    (b"\x7fELF", "executable"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"),
    (b"Rar!\x1a\x07", "RAR archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "legacy Office document"),
    (b"II*\x00", "TIFF image"),
    (b"MM\x00*", "TIFF image"),
]
_BIDI_CONTROLS = set("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _supported_list() -> str:
    return ", ".join(sorted(SUPPORTED_EXTENSIONS))


def _human_size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    value = float(n)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1024
        if value < 1024 or unit == "TB":
            break
    return f"{value:.1f}".rstrip("0").rstrip(".") + f" {unit}"


def _too_large(size: int, max_bytes: int) -> str:
    return f"the file is too large ({_human_size(size)}; the limit is {_human_size(max_bytes)})"


def _short(exc: BaseException, limit: int = 200) -> str:
    msg = str(exc).strip() or type(exc).__name__
    msg = " ".join(msg.split())
    return msg if len(msg) <= limit else msg[: limit - 1] + "…"


def sanitize_name(name: str) -> str:
    """Reduce an untrusted (uploaded) file name to a safe base name.

    Drops directory components (``../../x.txt`` -> ``x.txt``), control and bidi-override
    characters and leading dots; caps the length at ~200 characters keeping the extension.
    Non-ASCII letters are kept.
    """
    text = unicodedata.normalize("NFC", str(name or ""))
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cc" and ch not in _BIDI_CONTROLS)
    base = text.replace("\\", "/").rstrip("/").split("/")[-1]
    base = base.strip().lstrip(".").strip()
    if not base:
        return "unnamed"
    if len(base) > MAX_NAME_CHARS:
        stem, dot, ext = base.rpartition(".")
        if dot and stem and 0 < len(ext) <= 16 and " " not in ext:
            base = stem[: MAX_NAME_CHARS - len(ext) - 1].rstrip() + "." + ext
        else:
            base = base[:MAX_NAME_CHARS]
    return base


def _extension(name: str) -> str:
    return Path(name).suffix.lower()


def _unsupported(name: str) -> LoadFailure:
    ext = _extension(name)
    what = f"unsupported file type {ext}" if ext else "unsupported file type (no file extension)"
    return LoadFailure(name, f"{what} (supported: {_supported_list()})")


# --------------------------------------------------------------------------- text decoding

def _magic_kind(data: bytes) -> Optional[str]:
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "WEBP image"
    return None


def _binary_reason(kind: Optional[str] = None) -> str:
    return f"looks like a binary file ({kind}), not text" if kind else "looks like a binary file, not text"


_CONTROL_RE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_CONTROL_C1_RE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def _control_share(text: str, c1_is_control: bool = False) -> float:
    if not text:
        return 0.0
    pattern = _CONTROL_C1_RE if c1_is_control else _CONTROL_RE
    return len(pattern.findall(text)) / len(text)


def _guess_legacy(data: bytes) -> Optional[str]:
    """Decode non-UTF-8 bytes with charset-normalizer, then a plausible cp1252/Latin-1 fallback."""
    try:
        from charset_normalizer import from_bytes

        matches = list(from_bytes(data))
    except Exception:  # noqa: BLE001 - detection is best effort
        matches = []
    if matches:
        best = matches[0]
        # charset-normalizer often ties cp1250 with cp1252 on short Western text; prefer cp1252.
        for match in matches:
            if (match.encoding == "cp1252" and abs(match.chaos - best.chaos) < 1e-9
                    and match.coherence >= best.coherence - 1e-9):
                best = match
                break
        text = str(best)
        if _control_share(text) <= 0.05:
            return text
    for encoding in ("cp1252", "latin-1"):
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if _control_share(text, c1_is_control=True) <= 0.05:
            return text
    return None


def decode_text(data: bytes) -> tuple[Optional[str], Optional[str]]:
    """Decode text bytes; return ``(text, None)`` or ``(None, reason)`` for binary input."""
    if data.startswith(b"\xef\xbb\xbf"):
        return data[3:].decode("utf-8", errors="replace"), None
    for bom, codec in ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
                       (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be")):
        if data.startswith(bom):
            text = data[len(bom):].decode(codec, errors="replace")
            if _control_share(text) > 0.05:
                return None, _binary_reason()
            return text, None
    kind = _magic_kind(data)
    if kind:
        return None, _binary_reason(kind)
    if b"\x00" in data:
        return None, _binary_reason()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        guessed = _guess_legacy(data)
        if guessed is None:
            return None, _binary_reason()
        text = guessed
    if _control_share(text) > 0.05:
        return None, _binary_reason()
    return text, None


def _normalise(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _document(name: str, text: str, source: str) -> Result:
    text = _normalise(text)
    if not text.strip():
        return [], [LoadFailure(name, _EMPTY)]
    return [SourceDocument(name=name, text=text, doc_id=None, source=source)], []


# --------------------------------------------------------------------------- per format

def _load_text(name: str, data: bytes) -> Result:
    if not data.strip():
        return [], [LoadFailure(name, _EMPTY)]
    text, reason = decode_text(data)
    if text is None:
        return [], [LoadFailure(name, reason or _binary_reason())]
    return _document(name, text, name)


_DROP_TAGS = ("script", "style", "noscript", "template", "iframe", "object", "svg", "canvas")
_BLOCK_TAGS = ("p", "div", "section", "article", "main", "header", "footer", "nav", "aside", "blockquote",
               "pre", "h1", "h2", "h3", "h4", "h5", "h6", "li", "ul", "ol", "dl", "dt", "dd", "table",
               "tr", "caption", "figure", "figcaption", "form", "fieldset", "address", "hr", "title",
               "body", "details", "summary")
_PARA = "\u2029"  # paragraph separator, used as a private block marker
_LINE = "\u2028"  # line separator, used for <br> and <pre> newlines


def _load_html(name: str, data: bytes) -> Result:
    if not data.strip():
        return [], [LoadFailure(name, _EMPTY)]
    kind = _magic_kind(data)
    if kind:
        return [], [LoadFailure(name, _binary_reason(kind))]
    try:
        from bs4 import BeautifulSoup, Comment, NavigableString

        markup: Union[str, bytes] = data
        if data.startswith((b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf")) or b"\x00" in data:
            text, reason = decode_text(data)
            if text is None:
                return [], [LoadFailure(name, reason or _binary_reason())]
            markup = text
        try:
            soup = BeautifulSoup(markup, "lxml")
        except Exception:  # noqa: BLE001 - lxml missing or unusable
            soup = BeautifulSoup(markup, "html.parser")
        for tag in soup.find_all(_DROP_TAGS):
            tag.decompose()
        for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
            comment.extract()
        for pre in soup.find_all("pre"):
            for piece in list(pre.find_all(string=True)):
                piece.replace_with(NavigableString(str(piece).replace("\r\n", "\n").replace("\n", _LINE)))
        for br in soup.find_all("br"):
            br.replace_with(NavigableString(_LINE))
        for tag in soup.find_all(_BLOCK_TAGS):
            tag.insert(0, NavigableString(_PARA))
            tag.append(NavigableString(_PARA))
        raw = soup.get_text()
    except Exception as exc:  # noqa: BLE001
        return [], [LoadFailure(name, f"could not read the HTML: {_short(exc)}")]
    paragraphs: list[str] = []
    for block in raw.split(_PARA):
        lines = [re.sub(r"\s+", " ", line).strip() for line in block.split(_LINE)]
        joined = "\n".join(lines).strip("\n")
        if joined.strip():
            paragraphs.append(re.sub(r"\n{3,}", "\n\n", joined))
    return _document(name, "\n\n".join(paragraphs), name)


def _load_pdf(name: str, data: bytes) -> Result:
    import logging

    try:
        from pypdf import PdfReader

        logging.getLogger("pypdf").setLevel(logging.ERROR)
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                ok = reader.decrypt("")
            except Exception:  # noqa: BLE001
                ok = 0
            if not ok:
                return [], [LoadFailure(name, "the PDF is password-protected; remove the password first")]
        pages = reader.pages
        n_pages = len(pages)
    except Exception as exc:  # noqa: BLE001
        return [], [LoadFailure(name, f"could not read the PDF: {_short(exc)}")]
    if n_pages == 0:
        return [], [LoadFailure(name, "the PDF has no pages")]
    texts: list[str] = []
    errors: list[str] = []
    for index in range(n_pages):
        try:
            page_text = pages[index].extract_text() or ""
        except Exception as exc:  # noqa: BLE001
            errors.append(_short(exc))
            continue
        if page_text.strip():
            texts.append(page_text.strip())
    if not texts:
        if errors:
            return [], [LoadFailure(name, f"could not read the PDF: {errors[0]}")]
        return [], [LoadFailure(name, "the PDF has no text layer (scanned?); OCR it first")]
    return _document(name, "\n\n".join(texts), name)


def _docx_blocks(container: object, out: list[str], depth: int = 0) -> None:
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    for item in container.iter_inner_content():  # type: ignore[attr-defined]
        if isinstance(item, Paragraph):
            if item.text.strip():
                out.append(item.text)
        elif isinstance(item, Table):
            for row in item.rows:
                cells: list[str] = []
                seen: set[int] = set()
                for cell in row.cells:
                    if id(cell._tc) in seen:  # merged cells repeat the same element
                        continue
                    seen.add(id(cell._tc))
                    inner: list[str] = []
                    if depth < 5:
                        _docx_blocks(cell, inner, depth + 1)
                    cell_text = " ".join(part.strip() for part in inner if part.strip())
                    if cell_text:
                        cells.append(cell_text)
                if cells:
                    out.append(" | ".join(cells))


def _load_docx(name: str, data: bytes) -> Result:
    try:
        import docx

        document = docx.Document(io.BytesIO(data))
        parts: list[str] = []
        _docx_blocks(document, parts)
    except Exception as exc:  # noqa: BLE001
        return [], [LoadFailure(name, f"could not read the DOCX: {_short(exc)}")]
    return _document(name, "\n\n".join(parts), name)


def _load_jsonl_lines(name: str, head: bytes, lines: Iterable[bytes]) -> Result:
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return [], [LoadFailure(name, "the JSONL file is UTF-16 encoded; save it as UTF-8")]
    kind = _magic_kind(head)
    if kind or b"\x00" in head:
        return [], [LoadFailure(name, _binary_reason(kind))]
    docs: list[SourceDocument] = []
    failures: list[LoadFailure] = []
    first_line: dict[str, int] = {}
    extra_bad = 0

    def fail(number: int, reason: str) -> None:
        nonlocal extra_bad
        if len(failures) < MAX_LINE_FAILURES:
            failures.append(LoadFailure(f"{name} line {number}", reason))
        else:
            extra_bad += 1

    for number, raw in enumerate(lines, start=1):
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            fail(number, "not valid UTF-8 text")
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            fail(number, f"not valid JSON ({exc.msg} at column {exc.colno})")
            continue
        except RecursionError:
            fail(number, "not valid JSON (nested too deeply)")
            continue
        if not isinstance(obj, dict):
            fail(number, f"expected a JSON object, got {type(obj).__name__}")
            continue
        text = obj.get("text")
        if not isinstance(text, str) or not text.strip():
            fail(number, 'missing or empty "text" field' if text is None or isinstance(text, str)
                 else '"text" must be a string')
            continue
        raw_id = obj.get("doc_id")
        doc_id: Optional[str] = None
        if isinstance(raw_id, str) and raw_id.strip():
            doc_id = raw_id.strip()
        elif isinstance(raw_id, int) and not isinstance(raw_id, bool):
            doc_id = str(raw_id)
        elif raw_id not in (None, ""):
            fail(number, '"doc_id" must be a string')
            continue
        if doc_id is not None:
            if doc_id in first_line:
                fail(number, f"duplicate doc_id {doc_id} (first on line {first_line[doc_id]})")
                continue
            first_line[doc_id] = number
        raw_title = obj.get("title")
        title = "" if raw_title is None else (raw_title if isinstance(raw_title, str) else str(raw_title)).strip()
        body = _normalise(f"{title}\n{text}" if title else text)
        docs.append(SourceDocument(name=title or doc_id or f"{name} line {number}", text=body,
                                   doc_id=doc_id, source=name))
    if extra_bad:
        failures.append(LoadFailure(name, f"{extra_bad} more bad lines not listed"))
    if not docs and not failures:
        failures.append(LoadFailure(name, _EMPTY))
    return docs, failures


def _load_data(name: str, data: bytes) -> Result:
    ext = _extension(name)
    if ext in _TEXT_EXTENSIONS:
        return _load_text(name, data)
    if ext in _HTML_EXTENSIONS:
        return _load_html(name, data)
    if ext == ".pdf":
        return _load_pdf(name, data)
    if ext == ".docx":
        return _load_docx(name, data)
    if ext == ".jsonl":
        return _load_jsonl_lines(name, data[:64], io.BytesIO(data))
    return [], [_unsupported(name)]


# --------------------------------------------------------------------------- public API

def load_bytes(name: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES) -> Result:
    """Load one uploaded file from its (untrusted) name and bytes."""
    safe = sanitize_name(name)
    try:
        if _extension(safe) not in SUPPORTED_EXTENSIONS:
            return [], [_unsupported(safe)]
        if len(data) > max_bytes:
            return [], [LoadFailure(safe, _too_large(len(data), max_bytes))]
        if not data:
            return [], [LoadFailure(safe, _EMPTY)]
        return _load_data(safe, bytes(data))
    except Exception as exc:  # noqa: BLE001 - never raise for bad input
        return [], [LoadFailure(safe, f"could not read the file: {_short(exc)}")]


def _load_file(path: Path, display: str, max_bytes: int) -> Result:
    if _extension(display) not in SUPPORTED_EXTENSIONS:
        return [], [_unsupported(display)]
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return [], [LoadFailure(display, _too_large(size, max_bytes))]
        if size == 0:
            return [], [LoadFailure(display, _EMPTY)]
        if _extension(display) == ".jsonl":
            with path.open("rb") as handle:
                head = handle.read(64)
                handle.seek(0)
                return _load_jsonl_lines(display, head, handle)
        return _load_data(display, path.read_bytes())
    except Exception as exc:  # noqa: BLE001 - never raise for bad input
        return [], [LoadFailure(display, f"could not read the file: {_short(exc)}")]


def _is_hidden(part: str) -> bool:
    return part.startswith(".")


def load_path(path: Union[Path, str], max_bytes: int = DEFAULT_MAX_BYTES) -> Result:
    """Load a file, or every non-hidden file of a folder (recursively, sorted by relative path).

    Unsupported files inside a folder are reported as failures; hidden files and folders
    (names starting with ``.``) are skipped silently.
    """
    path = Path(path)
    try:
        if path.is_file():
            return _load_file(path, path.name, max_bytes)
        if not path.is_dir():
            return [], [LoadFailure(path.name or str(path), "no such file or folder")]
        found: list[tuple[str, Path]] = []
        for root, dirs, files in os.walk(path, followlinks=False):
            dirs[:] = [d for d in dirs if not _is_hidden(d)]
            for file_name in files:
                if _is_hidden(file_name):
                    continue
                full = Path(root) / file_name
                found.append((full.relative_to(path).as_posix(), full))
    except Exception as exc:  # noqa: BLE001
        return [], [LoadFailure(path.name or str(path), f"could not read the folder: {_short(exc)}")]
    found.sort(key=lambda item: item[0])
    docs: list[SourceDocument] = []
    failures: list[LoadFailure] = []
    for display, full in found:
        got, bad = _load_file(full, display, max_bytes)
        docs.extend(got)
        failures.extend(bad)
    if not found:
        failures.append(LoadFailure(path.name or str(path), "the folder has no files to load"))
    return docs, failures


def load_paths(paths: list[Path], max_bytes: int = DEFAULT_MAX_BYTES) -> Result:
    """Load several files and/or folders, concatenating the results in the given order."""
    docs: list[SourceDocument] = []
    failures: list[LoadFailure] = []
    for path in paths:
        got, bad = load_path(path, max_bytes)
        docs.extend(got)
        failures.extend(bad)
    return docs, failures
