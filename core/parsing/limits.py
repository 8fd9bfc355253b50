"""The per-file parsing limits and the message a file over one of them gets.

``ParseLimits`` mirrors the settings of the same names (``core.settings.Settings``); the defaults
here equal the settings' defaults so that a caller without settings (a script, a test) is bounded
too. A loader that finds a file over a cap raises ``LimitExceeded``; the loader entry point turns it
into the file's ``LoadFailure``, so one hostile file fails alone and the batch goes on.
"""
from __future__ import annotations

import struct
import zipfile
from dataclasses import dataclass
from typing import Any

from core.errors import RAGScopeError


@dataclass(frozen=True)
class ParseLimits:
    """Caps checked while a file is parsed (see the settings of the same names for their meaning)."""

    max_documents_per_upload: int = 200_000
    max_document_pages: int = 2000
    max_document_chars: int = 20_000_000
    max_archive_uncompressed_mb: float = 256.0
    max_archive_ratio: float = 100.0
    max_archive_entries: int = 10_000
    parse_cpu_seconds: int = 120
    parse_memory_mb: int = 2048
    parse_timeout_s: float = 300.0

    @classmethod
    def from_settings(cls, settings: Any) -> "ParseLimits":
        """The limits of a ``Settings`` object (fields it lacks keep their defaults)."""
        names = cls.__dataclass_fields__
        return cls(**{name: getattr(settings, name) for name in names if hasattr(settings, name)})

    @property
    def max_archive_uncompressed_bytes(self) -> int:
        return int(self.max_archive_uncompressed_mb * 2**20)


class LimitExceeded(RAGScopeError, ValueError):
    """A file is over one of the parsing limits; the message names the limit and the setting."""

    def __init__(self, what: str, setting: str) -> None:
        super().__init__(f"{what}; raise `{setting}` in Settings if the file is genuine")
        self.setting = setting


def number(value: float) -> str:
    """``2000`` -> ``2,000``; ``2.5`` -> ``2.5`` (limits read as people write them)."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def check_pages(n_pages: int, limits: ParseLimits) -> None:
    """Refuse a document with more pages than ``max_document_pages``."""
    if n_pages > limits.max_document_pages:
        raise LimitExceeded(f"the document has {number(n_pages)} pages, over the "
                            f"{number(limits.max_document_pages)}-page limit", "max_document_pages")


def check_chars(n_chars: int, limits: ParseLimits, where: str = "") -> None:
    """Refuse once the text extracted so far is longer than ``max_document_chars``."""
    if n_chars > limits.max_document_chars:
        raise LimitExceeded(f"the extracted text exceeds the {number(limits.max_document_chars)}-character limit"
                            f"{f' ({where})' if where else ''}", "max_document_chars")


def check_expansion(expanded: int, compressed: int, limits: ParseLimits, what: str) -> None:
    """Refuse compressed content that expands past ``max_archive_uncompressed_mb`` or more than
    ``max_archive_ratio`` times the file's size (``what`` says what expands, for the message)."""
    megabytes = expanded / 2**20
    if expanded > limits.max_archive_uncompressed_bytes:
        raise LimitExceeded(f"{what} expand to {number(round(megabytes))} MB, over the "
                            f"{number(limits.max_archive_uncompressed_mb)} MB limit", "max_archive_uncompressed_mb")
    ratio = expanded / max(1, compressed)
    if ratio > limits.max_archive_ratio:
        raise LimitExceeded(f"{what} expand to {number(round(ratio))} times the file's size, over the "
                            f"{number(limits.max_archive_ratio)}× limit", "max_archive_ratio")


def zip_expanded_size(archive: zipfile.ZipFile) -> int:
    """The uncompressed size a zip declares for all its members (its central directory only). An upper bound
    to trust: Python's ``zipfile`` stops a member at its declared size and fails its CRC check past it."""
    return sum(max(0, info.file_size) for info in archive.infolist())


_END_RECORD = b"PK\x05\x06"  # end of central directory: 22 bytes, then a comment of up to 65,535
_ZIP64_LOCATOR = b"PK\x06\x07"
_DIRECTORY_ENTRY = b"PK\x01\x02"  # each central-directory entry starts with this signature


def zip_entry_bound(data: bytes) -> int:
    """An upper bound on the members a zip declares, read without building its directory: the entry
    signatures in the central directory the end record points to (the whole file before the end record
    when that is absent or a zip64 one). Cheap on a file of a million empty members, where
    ``zipfile.ZipFile`` would first make a million ``ZipInfo`` objects; a name that holds the signature
    only raises the bound."""
    end = data.rfind(_END_RECORD, max(0, len(data) - 22 - 65_535))
    if end < 0 or end + 22 > len(data):
        return data.count(_DIRECTORY_ENTRY)
    directory_size = struct.unpack_from("<L", data, end + 12)[0]
    zip64 = end >= 20 and data[end - 20:end - 16] == _ZIP64_LOCATOR  # its records sit between directory and end
    if zip64 or directory_size > end:  # or a size that cannot be right
        return data.count(_DIRECTORY_ENTRY, 0, end)
    return data.count(_DIRECTORY_ENTRY, end - directory_size, end)


def check_entries(data: bytes, limits: ParseLimits, what: str) -> None:
    """Refuse a zip with more members than ``max_archive_entries`` (before its directory is parsed)."""
    entries = zip_entry_bound(data)
    if entries > limits.max_archive_entries:
        raise LimitExceeded(f"{what} number {number(entries)}, over the {number(limits.max_archive_entries)}-member "
                            f"limit", "max_archive_entries")
