"""The Settings page's message after a save: a changed chunking (or other index-time) field says that the
documents already indexed keep their chunks until re-indexed, and names the field as the page labels it."""
from __future__ import annotations

from core.settings import INDEX_TIME_FIELDS, Settings, saved_message


def test_retrieval_only_change_says_settings_apply_now() -> None:
    before = Settings()
    after = before.with_overrides({"lightrag_top_k": before.lightrag_top_k + 5})
    message = saved_message(before, after)
    assert "now use these settings" in message
    assert "indexed again" not in message


def test_chunk_size_change_says_indexed_documents_keep_their_chunks() -> None:
    before = Settings()
    after = before.with_overrides({"chunk_tokens": 600, "chunk_overlap": 50})
    message = saved_message(before, after)
    assert "keep their chunks" in message and "indexed again" in message
    assert "Chunk size (tokens)" in message and "Chunk overlap (tokens)" in message
    assert "Documents page" in message  # says where to re-index


def test_every_index_time_field_is_a_setting() -> None:
    names = set(Settings.model_fields)
    assert set(INDEX_TIME_FIELDS) <= names
