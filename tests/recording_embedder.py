"""A workspace embedder wrapper for retrieval tests: records the query strings embedded now (``texts``) and
those started ahead on the query helper (``ahead``)."""
from __future__ import annotations

from typing import Any, Optional


class RecordingEmbedder:
    """``inner`` as it is, recording its calls. ``alone`` overrides ``query_vectors_alone``; ``ahead=False``
    takes away ``embed_queries_soon`` (no background call: ``embed_ahead`` does nothing)."""

    def __init__(self, inner: Any, alone: Optional[bool] = None, ahead: bool = True) -> None:
        self.inner, self.texts, self.ahead = inner, [], []
        self.started: list[tuple[str, Any]] = []
        self.name, self.dim = inner.name, inner.dim
        self.query_vectors_alone = getattr(inner, "query_vectors_alone", False) if alone is None else alone
        if not ahead:
            self.embed_queries_soon = None

    def embed(self, texts):
        self.texts.extend(texts)
        return self.inner.embed(texts)

    def embed_queries(self, texts):
        self.texts.extend(texts)
        return self.inner.embed_queries(texts)

    def embed_queries_soon(self, texts):
        self.ahead.extend(texts)
        started = self.inner.embed_queries_soon(texts)
        self.started.extend((text, started) for text in texts)
        return started

    def taken_back(self) -> set[str]:
        """The strings started ahead whose background call was cancelled (embedded on the caller instead)."""
        return {text for text, started in self.started if started.cancelled()}
