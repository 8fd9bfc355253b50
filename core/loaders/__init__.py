"""Document loaders: turn uploads, files and folders into ``SourceDocument`` records.

Public functions return ``(documents, failures)`` and never raise for bad input: an unreadable
file (or JSONL line) becomes a ``LoadFailure`` with a human-readable reason, and loading goes on.
Formats: text/Markdown (encoding detection), HTML, PDF (text layer), DOCX, and JSONL corpora in
the shared package format (one object per line with ``doc_id``, ``title``, ``text``; the title is
indexed as the text's first line unless it is a book's chapter/part label, which stays the name only).

Every file is bounded (``core.parsing``): its size before it is read, then the caps of
``ParseLimits`` (pages, characters, archive expansion) before each expensive step; PDF, DOCX and
HTML are parsed in the worker process under CPU-time, memory and wall-clock limits. The loaders are
looked up by extension in ``core.parsing.registry`` (``register_loader`` adds one). A ``.zip`` (an
upload, a file, or one in a folder) is unpacked in memory by ``core.loaders.archive``: each member is loaded
as an uploaded file of that name would be, named by its path inside the zip, one level deep.
"""
from __future__ import annotations

import io
import json
import os
import unicodedata
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Optional, Union

from core.loaders.archive import ARCHIVE_EXTENSIONS, load_zip
from core.parsing.html import load_html
from core.parsing.limits import LimitExceeded, ParseLimits
from core.parsing.limits import number as _number
from core.parsing.office import load_docx
from core.parsing.pdf import load_pdf
from core.parsing.registry import loader_for, register_loader, registered_extensions
from core.parsing.text import EMPTY as _EMPTY
from core.parsing.text import Result, binary_reason, decode_text, fail, load_markdown, load_text, magic_kind, normalise, size_and_limit
from core.parsing.text import short as _short
from core.parsing.titles import label_titles
from core.parsing.worker import parse_isolated
from core.types import Cancelled, LoadFailure, SourceDocument, checkpoint

__all__ = ["ARCHIVE_EXTENSIONS", "DEFAULT_MAX_BYTES", "SUPPORTED_EXTENSIONS",
           "ParseLimits", "Result", "decode_text", "load_bytes",
           "load_path", "load_paths", "load_uploads", "sanitize_name", "supported_extensions"]

SUPPORTED_EXTENSIONS: set[str] = {".txt", ".md", ".markdown", ".pdf", ".docx", ".html", ".htm", ".jsonl"}
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
MAX_NAME_CHARS = 200
MAX_LINE_FAILURES = 200  # per JSONL file; further bad lines are summarised in one failure

_BIDI_CONTROLS = set("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

for _ext, _text_loader in ((".txt", load_text), (".md", load_markdown), (".markdown", load_markdown)):
    register_loader(_ext, _text_loader, isolated=False)  # linear in the size-capped bytes
for _ext, _loader in ((".html", load_html), (".htm", load_html), (".pdf", load_pdf), (".docx", load_docx)):
    register_loader(_ext, _loader, isolated=True)


def supported_extensions() -> set[str]:
    """The built-in formats plus any registered with ``core.parsing.registry.register_loader``."""
    return SUPPORTED_EXTENSIONS | registered_extensions()


def _unsupported(name: str) -> Result:
    ext = Path(name).suffix.lower()
    what = f"unsupported file type {ext}" if ext else "unsupported file type: no extension"
    return fail(name, f"{what} (supported: {', '.join(sorted(supported_extensions()))}, and .zip archives of these)")


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



def _corpus_record(obj: object, name: str, line: int, first: dict[str, int],
                   max_chars: int) -> Union[SourceDocument, str]:
    """One parsed JSONL value as a document, or the reason it is refused."""
    if not isinstance(obj, dict):
        return f"expected a JSON object, got {type(obj).__name__}"
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        return 'missing or empty "text" field' if text is None or isinstance(text, str) else '"text" must be a string'
    if len(text) > max_chars:
        return (f"the text exceeds the {_number(max_chars)}-character limit; raise `max_document_chars` "
                "in Settings if the document is genuine")
    raw_id = obj.get("doc_id")
    if raw_id is not None and (isinstance(raw_id, bool) or not isinstance(raw_id, (str, int))):
        return '"doc_id" must be a string'
    doc_id = (str(raw_id).strip() or None) if raw_id is not None else None
    if doc_id is not None:
        if doc_id in first:
            return f"duplicate doc_id {doc_id} (first on line {first[doc_id]})"
        first[doc_id] = line
    raw_title = obj.get("title")
    title = "" if raw_title is None else str(raw_title).strip()
    return SourceDocument(name=title or doc_id or f"{name} line {line}",
                          text=normalise(f"{title}\n{text}" if title else text), doc_id=doc_id, source=name)


def _load_jsonl(name: str, head: bytes, lines: Iterable[bytes], limits: ParseLimits) -> Result:
    """Stream a JSONL corpus: one document per line; a bad line fails alone, naming its number."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return fail(name, "the JSONL file is UTF-16 encoded; save it as UTF-8")
    kind = magic_kind(head)
    if kind or b"\x00" in head:
        return fail(name, binary_reason(kind))
    docs: list[SourceDocument] = []
    failures: list[LoadFailure] = []
    first_line: dict[str, int] = {}
    unlisted = 0
    for number, raw in enumerate(lines, start=1):
        if number % 10_000 == 0:
            checkpoint("parsing")
        if number == 1 and raw.startswith(b"\xef\xbb\xbf"):
            raw = raw[3:]
        if not raw.strip():
            continue
        if len(docs) >= limits.max_documents_per_upload:
            return fail(name, _too_many(limits.max_documents_per_upload))
        try:
            record = _corpus_record(json.loads(raw.decode("utf-8")), name, number, first_line,
                                    limits.max_document_chars)
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
    _unglue_labels(docs)
    return docs, failures


def _unglue_labels(docs: list[SourceDocument]) -> None:
    """A passage title that only says where the passage sits in a book ("… – Chapter 3: … (part 2)",
    ``core.parsing.titles``) stays the document's name, the label its citations show, and leaves its text:
    never the first sentence of a quoted answer, a line of a summary, or an entity named in every passage."""
    titled = [d for d in docs if d.name and d.text.startswith(normalise(d.name) + "\n")]
    for doc, label in zip(titled, label_titles([d.name for d in titled])):
        if label:
            doc.text = doc.text[len(normalise(doc.name)) + 1:]



def _parse(name: str, ext: str, data: bytes, limits: ParseLimits) -> Result:
    spec = loader_for(ext)
    if spec is None:
        return _unsupported(name)
    if spec.isolated:
        return parse_isolated(spec.loader, name, data, limits)
    try:
        return spec.loader(name, data, limits)
    except LimitExceeded as exc:
        return fail(name, str(exc))


def _load_source(name: str, size: Callable[[], int], max_bytes: int, open_: Callable[[], BinaryIO],
                 limits: ParseLimits) -> Result:
    """Shared path of uploads and files: type check, size check (before reading), then the loader."""
    ext = Path(name).suffix.lower()
    if ext not in supported_extensions() | ARCHIVE_EXTENSIONS:
        return _unsupported(name)
    try:
        n_bytes = size()
        if n_bytes > max_bytes:
            size_text, limit = size_and_limit(n_bytes, max_bytes)  # never "50 MB; the limit is 50 MB"
            return fail(name, f"the file is too large ({size_text}; the limit is {limit})")
        with open_() as handle:
            if ext == ".jsonl":  # streamed line by line
                head = handle.read(64)
                handle.seek(0)
                return _load_jsonl(name, head, handle, limits)
            data = handle.read()
        if ext in ARCHIVE_EXTENSIONS:  # one level: a member that is a zip is refused by the archive loader
            return load_zip(name, data, max_bytes, limits, supported_extensions(),
                            lambda path, member: _load_source(path, lambda: len(member), max_bytes,
                                                              lambda: io.BytesIO(member), limits))
        if not data.strip():
            return fail(name, _EMPTY)
        docs, failures = _parse(name, ext, data, limits)
        if ext == ".pdf" and len(docs) == 1:  # the page is rendered from it by the source viewer
            docs[0].original = data
        return docs, failures
    except Cancelled:  # the run's Cancel, not the file's fault
        raise
    except Exception as exc:  # noqa: BLE001 - never raise for bad input
        return fail(name, f"could not read the file: {_short(exc)}")


def load_bytes(name: str, data: bytes, max_bytes: int = DEFAULT_MAX_BYTES,
               limits: Optional[ParseLimits] = None) -> Result:
    """Load one uploaded file from its (untrusted) name and bytes (``limits``: default caps)."""
    return _load_source(sanitize_name(name), lambda: len(data), max_bytes, lambda: io.BytesIO(bytes(data)),
                        limits or ParseLimits())


def _too_many(cap: int) -> str:
    return (f"the upload holds more than {cap:,} documents, the limit per upload; split it, or raise "
            "`max_documents_per_upload` in Settings")


def load_uploads(files: Iterable[tuple[str, bytes]], max_bytes: int = DEFAULT_MAX_BYTES,
                 limits: Optional[ParseLimits] = None) -> Result:
    """Load uploaded files ``(name, bytes)`` in order; each bad or hostile file fails alone. A JSONL
    file over ``max_documents_per_upload`` lines fails as soon as its line count passes the cap; files
    after the cap is reached (all files together) fail, naming it."""
    bounds = limits or ParseLimits()
    docs: list[SourceDocument] = []
    failures: list[LoadFailure] = []
    for name, data in files:
        checkpoint("parsing")  # the run's Cancel (``core.types.cancel_scope``) stops between files
        if len(docs) >= bounds.max_documents_per_upload:
            failures.append(LoadFailure(sanitize_name(name), _too_many(bounds.max_documents_per_upload)))
            continue
        got, bad = load_bytes(name, data, max_bytes, bounds)
        if len(docs) + len(got) > bounds.max_documents_per_upload:
            failures.append(LoadFailure(sanitize_name(name), _too_many(bounds.max_documents_per_upload)))
            continue
        docs.extend(got)
        failures.extend(bad)
    return docs, failures


def _load_file(path: Path, display: str, max_bytes: int, limits: ParseLimits) -> Result:
    return _load_source(display, lambda: path.stat().st_size, max_bytes, lambda: path.open("rb"), limits)


def _concat(results: Iterable[Result]) -> Result:
    docs: list[SourceDocument] = []
    failures: list[LoadFailure] = []
    for got, bad in results:
        docs.extend(got)
        failures.extend(bad)
    return docs, failures


def load_path(path: Union[Path, str], max_bytes: int = DEFAULT_MAX_BYTES,
              limits: Optional[ParseLimits] = None) -> Result:
    """Load a file, or every non-hidden file of a folder (recursively, sorted by relative path;
    documents named by relative path; unsupported files reported; dot-files and dot-folders skipped)."""
    path = Path(path)
    label = path.name or str(path)
    bounds = limits or ParseLimits()
    try:
        if path.is_file():
            return _load_file(path, path.name, max_bytes, bounds)
        if not path.is_dir():
            return fail(str(path), "no such file or folder")
        found: list[tuple[str, Path]] = []
        for root, dirs, files in os.walk(path, followlinks=False):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            found += [((Path(root) / f).relative_to(path).as_posix(), Path(root) / f)
                      for f in files if not f.startswith(".")]
    except Exception as exc:  # noqa: BLE001
        return fail(label, f"could not read the folder: {_short(exc)}")
    if not found:
        return fail(label, "the folder has no files to load")
    return _concat(_load_file(full, display, max_bytes, bounds) for display, full in sorted(found))


def load_paths(paths: list[Path], max_bytes: int = DEFAULT_MAX_BYTES, limits: Optional[ParseLimits] = None) -> Result:
    """Load several files and/or folders, concatenating the results in the given order."""
    return _concat(load_path(path, max_bytes, limits) for path in paths)
