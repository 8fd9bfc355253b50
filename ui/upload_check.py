"""Before indexing: flag an upload far larger than the rest, with the time it is expected to take.

``estimate_tokens`` sizes an uploaded file without parsing it (cl100k tokens of its text for text-like
files, extrapolated from a prefix; a byte ratio for PDF / DOCX, whose bytes are not text).
``measured_tokens_per_s`` is the workspace's own indexing throughput (tokens / seconds over its
processed documents), falling back to ``DEFAULT_TOKENS_PER_S`` (the idle-machine figure of
docs/evaluation.md) while it has indexed too little to measure. ``large_upload_notes`` returns one
plain sentence per flagged file: its size, how many times the median of the other files (or, for a
lone file, of the workspace's documents) that is, and the expected time. ``pasted_document_name`` is
the name a pasted text is indexed under.

No Streamlit here: the Documents page shows the notes.
"""
from __future__ import annotations

import io
import statistics
import zipfile
from pathlib import PurePath
from typing import Any, Mapping, Sequence

from core.parsing.limits import ParseLimits, zip_entry_bound, zip_expanded_size
from core.tokens import count_tokens

# the uploader's help: measured in Chromium, 2,000 one-line files took 75 s to upload (17 s to index) and
# 20,000 had not finished uploading after 15 min, where a JSONL of 100,000 records uploaded in under a second
MANY_FILES_HINT = ("Thousands of small documents upload much faster as one JSONL file, or as one .zip, than as "
                   "thousands of files. A .zip is unpacked on the server: each file in it becomes a document named by "
                   "its path in the zip and is indexed or fails alone; files of other types are listed as skipped; "
                   "a zip inside it is not unpacked (one level).")
DEFAULT_TOKENS_PER_S = 500.0  # end-to-end offline indexing on an idle 2-core machine (docs/evaluation.md)
MIN_MEASURED_TOKENS = 2_000  # below this many indexed tokens the workspace's own rate is too noisy
RELATIVE = 10.0  # a file at least this many times the median of the others is "far larger"
MIN_FLAG_TOKENS = 20_000  # ...and at least this large (ten short notes beside one page are not flagged)
ALWAYS_FLAG_S = 300.0  # any file expected to take longer than this is flagged
PREFIX_CHARS = 200_000  # tokens are counted on this prefix of a long text and extrapolated
TEXT_EXTENSIONS = {".txt", ".md", ".markdown", ".html", ".htm", ".jsonl", ".json", ".csv"}
BINARY_BYTES_PER_TOKEN = 8.0  # PDF / DOCX: compressed or wrapped, roughly this many bytes per text token
ZIP_BYTES_PER_TOKEN = 4.0  # a zip's members, mostly text: roughly cl100k's bytes per token of English


def _zip_text_bytes(data: bytes) -> int:
    """The bytes a zip's members declare (its directory only; 0 for a zip with too many members to list cheaply
    or none readable: the loader refuses those with the reason)."""
    try:
        if zip_entry_bound(data) > ParseLimits().max_archive_entries:
            return 0
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return zip_expanded_size(archive)
    except (zipfile.BadZipFile, ValueError, EOFError, OSError):
        return 0


def estimate_tokens(name: str, data: bytes) -> int:
    """About how many cl100k tokens the text of file ``name`` holds (a zip: from its members' declared sizes)."""
    if PurePath(name).suffix.lower() == ".zip":
        return int(_zip_text_bytes(data) / ZIP_BYTES_PER_TOKEN)
    if PurePath(name).suffix.lower() not in TEXT_EXTENSIONS:
        return int(len(data) / BINARY_BYTES_PER_TOKEN)
    text = data.decode("utf-8", errors="ignore")
    if len(text) <= PREFIX_CHARS:
        return count_tokens(text)
    return int(count_tokens(text[:PREFIX_CHARS]) * len(text) / PREFIX_CHARS)


def measured_tokens_per_s(documents: Sequence[Mapping[str, Any]]) -> tuple[float, bool]:
    """(tokens per second, measured?) over the processed documents of ``Workspace.documents_table()``."""
    done = [d for d in documents if d.get("status") == "processed" and d.get("tokens") and d.get("seconds")]
    tokens = sum(int(d["tokens"]) for d in done)
    seconds = sum(float(d["seconds"]) for d in done)
    if tokens < MIN_MEASURED_TOKENS or seconds <= 0:
        return DEFAULT_TOKENS_PER_S, False
    return tokens / seconds, True


def duration_text(seconds: float) -> str:
    """"about 40 s", "about 7 min", "about 1.5 h"."""
    if seconds < 90:
        return f"about {max(1, round(seconds))} s"
    if seconds < 5400:
        return f"about {round(seconds / 60)} min"
    return f"about {seconds / 3600:.1f} h"


def large_upload_notes(files: Sequence[tuple[str, int]], documents: Sequence[Mapping[str, Any]]) -> list[str]:
    """One note per file of ``files`` ((name, estimated tokens)) that is far larger than the rest or
    expected to take long; ``documents`` is the workspace's documents table (throughput, and the
    reference size for a lone file)."""
    rate, measured = measured_tokens_per_s(documents)
    where = "this workspace's measured" if measured else "an idle machine's"
    workspace_sizes = [int(d["tokens"]) for d in documents if d.get("status") == "processed" and d.get("tokens")]
    notes = []
    for index, (name, tokens) in enumerate(files):
        others = [t for i, (_, t) in enumerate(files) if i != index]
        reference_of = "the other files" if others else "this workspace's documents"
        reference = statistics.median(others or workspace_sizes) if (others or workspace_sizes) else 0
        times = tokens / reference if reference > 0 else 0.0
        seconds = tokens / rate
        far_larger = times >= RELATIVE and tokens >= MIN_FLAG_TOKENS
        if not far_larger and seconds < ALWAYS_FLAG_S:
            continue
        relative = f", {times:,.0f}× the median of {reference_of}" if times >= RELATIVE else ""
        notes.append(f"{name} is about {tokens:,} tokens{relative}: indexing it is expected to take "
                     f"{duration_text(seconds)} (at {where} {rate:,.0f} tokens/s). The other files are indexed "
                     "first and Cancel stops it at the next safe point; the CLI (`python -m core index`) "
                     "indexes it without a browser tab.")
    return notes


def pasted_document_name(typed: str) -> str:
    """The name a pasted text is indexed under: what was typed (default ``pasted-text``), with ``/`` and
    ``\\`` as ``-``. The text is indexed as an upload, whose name is read as a path, so "Q1/Q2 notes"
    became "Q2 notes.txt": the part before the last slash was lost without a word."""
    name = (typed or "").strip().replace("/", "-").replace("\\", "-").strip()
    return name or "pasted-text"
