"""Token-window chunking (cl100k): fixed-size windows with overlap, never across documents."""
from __future__ import annotations

import hashlib

from core.tokens import decode, encode
from core.types import Chunk


def chunk_id_for(doc_id: str, order: int, text: str) -> str:
    """Content-derived, document-scoped chunk id."""
    digest = hashlib.sha256(f"{doc_id}\x00{order}\x00{text}".encode("utf-8")).hexdigest()
    return "chunk-" + digest[:20]


def chunk_text(doc_id: str, text: str, chunk_tokens: int = 1200, overlap: int = 100) -> list[Chunk]:
    """Split one document into windows of ``chunk_tokens`` tokens overlapping by ``overlap``."""
    if overlap >= chunk_tokens:
        raise ValueError("chunk overlap must be smaller than the chunk size")
    ids = encode(text)
    if not ids:
        return []
    step = chunk_tokens - overlap
    chunks: list[Chunk] = []
    start = 0
    while True:
        window = ids[start : start + chunk_tokens]
        piece = decode(window)
        order = len(chunks)
        chunks.append(Chunk(chunk_id_for(doc_id, order, piece), doc_id, order, piece, len(window), start))
        if start + chunk_tokens >= len(ids):
            break
        start += step
    return chunks


def join_without_overlap(chunks: list[Chunk]) -> str:
    """Concatenate consecutive chunks of one document, dropping the overlapping tokens."""
    if not chunks:
        return ""
    ordered = sorted(chunks, key=lambda c: c.order)
    out = [ordered[0].text]
    end = ordered[0].start_token + ordered[0].tokens
    for chunk in ordered[1:]:
        skip = max(0, end - chunk.start_token)
        ids = encode(chunk.text)
        out.append(decode(ids[skip:]) if skip else chunk.text)
        end = chunk.start_token + chunk.tokens
    return "".join(out)
