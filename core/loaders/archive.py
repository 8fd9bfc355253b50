"""A ZIP of documents, unpacked in memory into separate documents (one level; nothing is written to disk).

Each member is loaded by the same loader as an uploaded file (``member_loader``), named by its path
inside the zip (``notes/flood.md``), and is indexed or fails alone with its reason. The zip as a whole is
refused, before any member is read, when its directory names more members than ``max_archive_entries``
(counted from the entry signatures, before the directory is parsed) or when its members declare more
than ``max_archive_uncompressed_mb`` (or ``max_archive_ratio`` times the zip's size). While members are
read the bytes actually inflated are counted against the member's declared size, the per-file size
limit and what is left of the archive limit: a header that lies about a size cannot get past them.

A member fails alone (``LoadFailure``) when its path is absolute or climbs out with ``..``, when it is a
symbolic link (never followed), encrypted, a second member with the same path, or a zip itself (nested
archives are refused: one level only). A member of a type no loader reads is *skipped* (``SkippedFile``:
listed, not recorded as a failed document). Folder entries, dot-files and
macOS ``__MACOSX/`` resource forks are left out silently, as for a folder on disk. The documents of all
members together are held to ``max_documents_per_upload``. Member names are untrusted text: control and
bidi characters are removed here, the pages escape them wherever they are shown.
"""
from __future__ import annotations

import io
import stat
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Callable

from core.parsing.limits import LimitExceeded, ParseLimits, check_entries, check_expansion, number, zip_expanded_size
from core.parsing.text import Result, fail, human_size, short, size_and_limit
from core.types import Cancelled, LoadFailure, SourceDocument, checkpoint

ARCHIVE_EXTENSIONS = {".zip"}
READ_BLOCK = 1 << 16  # bytes inflated per read while a member is counted
MAX_MEMBER_PATH_CHARS = 400
MemberLoader = Callable[[str, bytes], Result]



@dataclass
class SkippedFile(LoadFailure):
    """A file left out on purpose (a zip's member of a type no loader reads): listed, never a failed document."""

    skipped: bool = True


_BIDI_CONTROLS = set("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_ENCRYPTED = 0x1  # general purpose bit 0


def member_text(raw: str) -> str:
    """A member path as text to show: NFC, without control or bidi characters, backslashes as ``/``."""
    text = unicodedata.normalize("NFC", raw or "")
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cc" and ch not in _BIDI_CONTROLS)
    return text.replace("\\", "/")


def _escapes(path: str) -> bool:
    """An absolute path (``/x``, ``C:/x``, ``//host/x``) or one with a ``..`` part."""
    return path.startswith("/") or (len(path) > 1 and path[0].isalpha() and path[1] == ":") or ".." in path.split("/")


def _hidden(parts: tuple[str, ...]) -> bool:
    return any(part.startswith(".") or part == "__MACOSX" for part in parts)


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


class MemberRefused(ValueError):
    """A member over a limit while it is read (its message is the reason, as written)."""


class _Budget:
    """What is left of ``max_archive_uncompressed_mb`` for the members still to be read."""

    def __init__(self, limits: ParseLimits) -> None:
        self.left = limits.max_archive_uncompressed_bytes
        self.limits = limits

    def read(self, archive: zipfile.ZipFile, info: zipfile.ZipInfo, max_bytes: int) -> bytes:
        """The member's bytes, counted while they are inflated: over its declared size, over the per-file
        limit or over what is left of the archive limit, reading stops with the reason."""
        if info.file_size > max_bytes:  # said by the header: refused before anything is inflated
            size_text, limit = size_and_limit(info.file_size, max_bytes)
            raise MemberRefused(f"the file is too large ({size_text}; the limit is {limit})")
        out = bytearray()
        with archive.open(info) as handle:
            while block := handle.read(READ_BLOCK):
                out += block
                if len(out) > info.file_size:
                    raise MemberRefused(f"the member inflates past the {human_size(info.file_size)} its header "
                                     "declares")
                if len(out) > self.left:
                    raise LimitExceeded(f"the zip's members expand past the "
                                        f"{number(self.limits.max_archive_uncompressed_mb)} MB limit",
                                        "max_archive_uncompressed_mb")
        self.left -= len(out)
        return bytes(out)


def _refusal(info: zipfile.ZipInfo, path: str, seen: set[str], extensions: set[str]) -> tuple[str, bool] | None:
    """Why member ``info`` (shown as ``path``) is not loaded, and whether that is a skip; None: load it."""
    if _escapes(path):
        return "refused: its path leaves the archive (absolute, or with ..)", False
    if _is_symlink(info):
        return "refused: a symbolic link (never followed)", False
    if info.flag_bits & _ENCRYPTED:
        return "refused: the member is encrypted (password-protected); unpack it yourself and upload the file", False
    if path in seen:
        return "refused: a second member with the same path", False
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in ARCHIVE_EXTENSIONS:
        return "refused: a zip inside the zip is not unpacked (one level only); upload the inner zip itself", False
    if suffix not in extensions:
        what = f"unsupported file type {suffix}" if suffix else "no file extension"
        return f"{what} (supported: {', '.join(sorted(extensions))})", True
    return None


def _too_many(cap: int) -> str:
    return (f"the zip holds more than {cap:,} documents, the limit per upload; split it, or raise "
            "`max_documents_per_upload` in Settings")


def _members(archive: zipfile.ZipFile) -> list[tuple[zipfile.ZipInfo, str]]:
    """The members to consider, in the zip's order, with their paths as shown (folders, dot-files and
    ``__MACOSX/`` left out)."""
    found = []
    for info in archive.infolist():
        path = member_text(info.filename)
        if info.is_dir() or not path.strip("/"):
            continue
        if _escapes(path):  # refused by name, never left out silently
            found.append((info, path[:MAX_MEMBER_PATH_CHARS]))
            continue
        clean = "/".join(part for part in path.split("/") if part and part != ".")
        if _hidden(tuple(clean.split("/"))):
            continue
        found.append((info, clean[:MAX_MEMBER_PATH_CHARS]))
    return found


def load_zip(name: str, data: bytes, max_bytes: int, limits: ParseLimits, extensions: set[str],
             member_loader: MemberLoader) -> Result:
    """The documents of the zip ``name`` (its bytes ``data``), each member loaded by ``member_loader(path,
    bytes)`` if its extension is in ``extensions``; see the module docstring for every limit."""
    try:
        check_entries(data, limits, "the zip's members")
        archive = zipfile.ZipFile(io.BytesIO(data))
    except LimitExceeded as exc:
        return fail(name, str(exc))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as exc:
        return fail(name, f"not a readable zip file: {short(exc)}")
    with archive:
        try:
            check_expansion(zip_expanded_size(archive), len(data), limits, "the zip's members")
        except LimitExceeded as exc:
            return fail(name, str(exc))
        return _load_members(name, archive, max_bytes, limits, extensions, member_loader)


def _load_members(name: str, archive: zipfile.ZipFile, max_bytes: int, limits: ParseLimits, extensions: set[str],
                  member_loader: MemberLoader) -> Result:
    docs: list[SourceDocument] = []
    failures: list[LoadFailure] = []
    budget = _Budget(limits)
    seen: set[str] = set()
    members = _members(archive)
    for info, path in members:
        checkpoint("parsing")  # the run's Cancel stops between members
        refusal = _refusal(info, path, seen, extensions)
        seen.add(path)
        if refusal is not None:
            failures.append((SkippedFile if refusal[1] else LoadFailure)(path, refusal[0]))
            continue
        try:
            payload = budget.read(archive, info, max_bytes)
        except LimitExceeded as exc:  # the archive's limit: the members not yet read fail with it
            failures.append(LoadFailure(name, f"{exc} (after {len(docs):,} document(s); the rest were not read)"))
            break
        except MemberRefused as exc:
            failures.append(LoadFailure(path, str(exc)))
            continue
        except Cancelled:
            raise
        except Exception as exc:  # noqa: BLE001 - a bad member (CRC, method, lying header) fails alone
            failures.append(LoadFailure(path, f"could not read the member: {short(exc)}"))
            continue
        got, bad = member_loader(path, payload)
        if len(docs) + len(got) > limits.max_documents_per_upload:
            return fail(name, _too_many(limits.max_documents_per_upload))
        docs.extend(got)
        failures.extend(bad)
    if not members:
        failures.append(LoadFailure(name, "the zip holds no files to load"))
    return docs, failures
