"""What every indexing step shares: the extractor protocol (spaCy by default), the run report,
progress events, cancellation checks, content hashes and chunking with the workspace's settings."""
from __future__ import annotations

import hashlib
import threading
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Optional, Protocol

from core.chunking import chunk_document as chunk_for_settings
from core.types import Cancelled, Chunk, ChunkExtraction, ProgressCallback, ProgressEvent
from core.workspace import Workspace


class Extractor(Protocol):
    """Turns chunk texts into extraction records; ``titles`` (optional keyword) gives, per text, the
    document title it starts with (None otherwise)."""

    name: str

    def extract(self, texts: list[str]) -> list[ChunkExtraction]:
        ...


class SpacyExtractor:
    """Offline extraction: one spaCy parse per chunk gives both graphs."""

    name = "spacy"

    def __init__(self, entity_types: list[str]) -> None:
        self.entity_types = entity_types

    def extract(self, texts: list[str], titles: Optional[list[Optional[str]]] = None,
                on_parsed: Optional[Callable[[int, int], None]] = None) -> list[ChunkExtraction]:
        from core.extraction.spacy_extract import extract_chunks

        return extract_chunks(texts, self.entity_types, batch_size=64, titles=titles, on_parsed=on_parsed)


@dataclass
class IndexReport:
    new_documents: int = 0
    unchanged: int = 0
    replaced: int = 0
    processed: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)  # files left out on purpose (a zip's other files)
    tokens: int = 0
    chunks_embedded: int = 0
    entities_embedded: int = 0
    relations_embedded: int = 0
    summaries_recomputed: int = 0
    dropped_records: int = 0  # extraction records the parser could not use (see Workspace.dropped_records)
    timings_s: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def as_dict(self) -> dict:
        data = dict(self.__dict__)
        data["timings_s"] = {k: round(v, 3) for k, v in self.timings_s.items()}
        return data


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def progress_event(progress: ProgressCallback, step: str, done: int, total: int, message: str = "") -> None:
    progress(ProgressEvent(step, done, total, message))


def check_cancel(cancel: Optional[threading.Event], done: int, total: int) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled(f"indexing cancelled after {done} of {total} document(s)")


def chunk_document(ws: Workspace, doc_id: str, text: str) -> list[Chunk]:
    return chunk_for_settings(doc_id, text, ws.settings)  # short documents: paragraph chunks when set
