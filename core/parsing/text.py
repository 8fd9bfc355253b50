"""Decoding of text bytes and the result helpers every format loader shares.

A loader returns ``(documents, failures)``; ``fail`` / ``document`` build the two shapes, ``short``
shortens an exception for a failure reason. ``decode_text`` turns untrusted bytes into text (BOMs,
binary detection, UTF-8, charset-normalizer, cp1252/Latin-1) or says why it cannot.
"""
from __future__ import annotations

import re
from typing import Optional

from charset_normalizer import from_bytes

from core.parsing.limits import ParseLimits, check_chars
from core.types import LoadFailure, SourceDocument

Result = tuple[list[SourceDocument], list[LoadFailure]]

EMPTY = "the document is empty"
MAGIC: list[tuple[bytes, str]] = [
    (b"\x89PNG\r\n\x1a\n", "PNG image"), (b"\xff\xd8\xff", "JPEG image"), (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"), (b"II*\x00", "TIFF image"), (b"MM\x00*", "TIFF image"), (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive or Office document"), (b"\x1f\x8b", "gzip archive"), (b"\x7fELF", "executable"),
    (b"7z\xbc\xaf\x27\x1c", "7-Zip archive"), (b"Rar!\x1a\x07", "RAR archive"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "legacy Office document"),
]
BOMS = ((b"\xff\xfe\x00\x00", "utf-32-le"), (b"\x00\x00\xfe\xff", "utf-32-be"),
        (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"), (b"\xef\xbb\xbf", "utf-8"))
_CONTROL_RE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
_CONTROL_C1_RE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")


def fail(name: str, reason: str) -> Result:
    """No document, one failure naming the file and the reason."""
    return [], [LoadFailure(name, reason)]


def human_size(n: int) -> str:
    """``52428800`` -> ``50 MB``."""
    for size, unit in ((1024 ** 3, "GB"), (1024 ** 2, "MB"), (1024, "KB")):
        if n >= size:
            return f"{n / size:.1f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{n} bytes"


def size_and_limit(n_bytes: int, max_bytes: int) -> tuple[str, str]:
    """``n_bytes`` and ``max_bytes`` for "X; the limit is Y": in bytes when both round to the same
    text ("1 GB; the limit is 1 GB" would read as a contradiction)."""
    size_text, limit = human_size(n_bytes), human_size(max_bytes)
    if size_text == limit:
        return f"{n_bytes:,} bytes", f"{max_bytes:,} bytes"
    return size_text, limit


def short(exc: BaseException, limit: int = 200) -> str:
    """An exception as one line of at most ``limit`` characters."""
    msg = " ".join(str(exc).split()) or type(exc).__name__
    return msg if len(msg) <= limit else msg[: limit - 1] + "…"


def magic_kind(data: bytes) -> Optional[str]:
    for magic, kind in MAGIC:
        if data.startswith(magic):
            return kind
    return "WEBP image" if data[:4] == b"RIFF" and data[8:12] == b"WEBP" else None


def binary_reason(kind: Optional[str] = None) -> str:
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
    for bom, codec in BOMS:
        if data.startswith(bom):
            text = data[len(bom):].decode(codec, errors="replace")
            break
    else:
        kind = magic_kind(data)
        if kind or b"\x00" in data:
            return None, binary_reason(kind)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = _guess_legacy(data)
    if text is None or _control_share(text) > 0.05:
        return None, binary_reason()
    return text, None


def normalise(text: str) -> str:
    """Line ends as ``\\n``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def document(name: str, text: str, limits: Optional[ParseLimits] = None) -> Result:
    """One document of ``text`` (line ends normalised), or a failure when it is blank; over
    ``limits.max_document_chars`` raises ``LimitExceeded``."""
    text = normalise(text)
    if not text.strip():
        return fail(name, EMPTY)
    if limits is not None:
        check_chars(len(text), limits)
    return [SourceDocument(name=name, text=text, doc_id=None, source=name)], []


def load_text(name: str, data: bytes, limits: ParseLimits) -> Result:
    """A plain-text file, cited by line."""
    if len(data) > 4 * limits.max_document_chars:  # no encoding needs more than 4 bytes a character
        check_chars(len(data) // 4, limits)
    text, reason = decode_text(data)
    docs, failures = document(name, text, limits) if text is not None else fail(name, reason or binary_reason())
    for doc in docs:
        doc.by_line = True
    return docs, failures


_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_ATX = re.compile(r" {0,3}#{1,6}(?:[ \t]+|$)(.*)")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")


def markdown_heading_starts(text: str) -> list[int]:
    """Where each heading line of a Markdown text starts: ``#`` headings with a title, and a
    one-line paragraph underlined with ``===`` / ``---``; lines inside fenced code are not headings."""
    starts: list[int] = []
    fence = ""
    offset = 0
    previous: tuple[int, str] = (-1, "")  # the last line's offset and text
    before_previous_blank = True
    for line in text.split("\n"):
        opened = _FENCE.match(line)
        if fence:
            fence = "" if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence) else fence
        elif opened:
            fence = opened.group(1)
        else:
            atx = _ATX.fullmatch(line)
            if atx and atx.group(1).strip(" #\t"):
                starts.append(offset)
            elif (_SETEXT.fullmatch(line) and previous[1].strip() and before_previous_blank
                  and not _ATX.fullmatch(previous[1]) and previous[0] not in starts):
                starts.append(previous[0])
        before_previous_blank = not previous[1].strip()
        previous = (offset, line)
        offset += len(line) + 1
    return starts


def load_markdown(name: str, data: bytes, limits: ParseLimits) -> Result:
    """A Markdown file: cited by section (the heading a span is under), else by line."""
    docs, failures = load_text(name, data, limits)
    for doc in docs:
        doc.section_starts = tuple(markdown_heading_starts(doc.text))
    return docs, failures
