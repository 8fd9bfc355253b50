"""Unpack an uploaded zip of a LightRAG working directory, safely: bounded size, entry count and expansion
ratio, no path traversal, no links, sizes enforced while reading (a header cannot lie its way past the cap).
The declared size and the ratio check are the document parser's (``core.parsing.limits``: one rule for
every zip RAGScope opens; the ratio is the ``max_archive_ratio`` setting)."""
from __future__ import annotations

import stat
import zipfile
from io import BytesIO
from pathlib import Path, PurePosixPath

from core.errors import RAGScopeError
from core.parsing.limits import LimitExceeded, ParseLimits, check_expansion, zip_entry_bound, zip_expanded_size
from core.parsing.text import size_and_limit

MAX_ZIP_BYTES = 50 * 2**20  # the upload itself (the app's upload limit says the same)
MAX_UNPACKED_BYTES = 1024 * 2**20  # everything inside it, uncompressed
MAX_ENTRIES = 2000
_READ = 2**20


class UnsafeArchiveError(RAGScopeError, ValueError):
    """The zip cannot be unpacked safely (or is not a zip); the message says which entry and why."""


def _safe_name(name: str) -> PurePosixPath:
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or name.startswith(("/", "\\")) or (path.parts and ":" in path.parts[0]):
        raise UnsafeArchiveError(f"zip entry {name!r}: absolute paths are not allowed")
    if any(part == ".." for part in path.parts):
        raise UnsafeArchiveError(f"zip entry {name!r}: '..' would write outside the upload folder")
    return path


def unpack_zip(data: bytes, target: Path, max_zip_bytes: int = MAX_ZIP_BYTES,
               max_unpacked_bytes: int = MAX_UNPACKED_BYTES, max_entries: int = MAX_ENTRIES,
               max_ratio: float = ParseLimits.max_archive_ratio) -> Path:
    """Unpack ``data`` into the empty folder ``target``; return the folder that holds the LightRAG files
    (the zip's single top folder when it has one). ``max_ratio``: the workspace's ``max_archive_ratio``."""
    if len(data) > max_zip_bytes:
        size_text, limit = size_and_limit(len(data), max_zip_bytes)
        raise UnsafeArchiveError(f"the zip is {size_text}; the limit is {limit}")
    if zip_entry_bound(data) > max_entries:  # before zipfile builds one object per member
        raise UnsafeArchiveError(f"the zip has more than {max_entries} entries (the limit)")
    try:
        archive = zipfile.ZipFile(BytesIO(data))
    except zipfile.BadZipFile:
        raise UnsafeArchiveError("the upload is not a zip file (or it is truncated)") from None
    with archive:
        entries = archive.infolist()  # at most max_entries: the bound above counts every directory entry
        declared = zip_expanded_size(archive)
        if declared > max_unpacked_bytes:
            size_text, limit = size_and_limit(declared, max_unpacked_bytes)
            raise UnsafeArchiveError(f"the zip unpacks to {size_text}; the limit is {limit}")
        try:  # the size is checked above against the import's own cap; here the expansion ratio
            check_expansion(declared, len(data), ParseLimits(max_archive_uncompressed_mb=max_unpacked_bytes / 2**20,
                                                             max_archive_ratio=max_ratio), "the zip's members")
        except LimitExceeded as exc:
            raise UnsafeArchiveError(str(exc)) from None
        for entry in entries:  # every name is checked before anything is written
            _safe_name(entry.filename)
            if stat.S_ISLNK(entry.external_attr >> 16):
                raise UnsafeArchiveError(f"zip entry {entry.filename!r}: links are not allowed")
        target = Path(target)
        target.mkdir(parents=True, exist_ok=True)
        root = target.resolve()
        written = 0
        for entry in entries:
            out = (root / _safe_name(entry.filename)).resolve()
            if root != out and root not in out.parents:
                raise UnsafeArchiveError(f"zip entry {entry.filename!r}: outside the upload folder")
            if entry.is_dir():
                out.mkdir(parents=True, exist_ok=True)
                continue
            out.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(entry) as src, open(out, "wb") as dst:
                while True:
                    block = src.read(_READ)
                    if not block:
                        break
                    written += len(block)
                    if written > max_unpacked_bytes:
                        raise UnsafeArchiveError(f"the zip unpacks to more than {max_unpacked_bytes / 2**20:.0f} MB")
                    dst.write(block)
    return top_folder(root)


def top_folder(root: Path) -> Path:
    """The working directory inside an unpacked zip: the zip's single top folder (a zip of the folder itself),
    and below it single folders without LightRAG files (but a LightRAG workspace subfolder is kept)."""
    folder, first = root, True
    while True:
        children = [p for p in folder.iterdir() if p.name != "__MACOSX"]
        if len(children) != 1 or not children[0].is_dir():
            return folder
        if not first and (children[0] / "kv_store_text_chunks.json").is_file():
            return folder
        folder, first = children[0], False
