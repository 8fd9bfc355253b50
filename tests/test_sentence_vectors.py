"""Sentence vectors pooled from the chunk-window pass (core.sentence_vectors) and the meaning term of the
offline answers' ranking (core.answers.scoring.MEANING): a sentence vector is the mean of the window's token
outputs over the sentence's span; vectors are stored, read and back-filled through the record store on both
backends; the ranking picks the sentence whose meaning answers the question over one that shares the
question's words; a workspace without vectors still answers (ranked as before, and says so)."""
from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from postgres_fixture import pg_store, postgres_server  # noqa: F401 - fixtures

from core.sentence_vectors import (decode_vector, embed_windows_and_sentences, pool_window, sentence_spans,
                                   stored_rows)
from core.types import Chunk, ChunkExtraction, SentenceRecord


def _token_vector(word: str) -> np.ndarray:
    digest = hashlib.sha256(word.encode("utf-8")).digest()[:16]
    return (np.frombuffer(digest, dtype=np.uint8).astype(np.float32) - 127.5) / 128.0


class TokenHashEmbedder:
    """Whitespace 'wordpieces' with a hashed output each, framed by two special tokens: an embedder that
    gives token outputs, and whose ``embed`` is their mean (as a transformer's mean pooling)."""

    name, dim = "token-hash-embedder", 16

    def token_states(self, texts):
        out = []
        for text in texts:
            spans = [m.span() for m in re.finditer(r"\S+", text)]
            rows = [_token_vector("[CLS]")] + [_token_vector(text[a:b].lower()) for a, b in spans] + [_token_vector("[SEP]")]
            out.append((np.stack(rows), np.array([(0, 0)] + spans + [(0, 0)], dtype=np.int64)))
        return out

    def embed(self, texts):
        return np.stack([pool_window(states) for states, _ in self.token_states(texts)])


TEXT = ("Bob founded Acme in **1990**.\nCarol later joined the firm as its first chemist. "
        "Acme sells lamps.")
SENTENCES = ["Bob founded Acme in 1990.", "Carol later joined the firm as its first chemist.", "Acme sells lamps."]


def test_sentence_spans_follow_the_words_across_markup_and_whitespace():
    spans = sentence_spans(TEXT, SENTENCES + ["Nowhere in this chunk."])
    assert [TEXT[a:b] for a, b in spans[:3]] == ["Bob founded Acme in **1990", SENTENCES[1][:-1], SENTENCES[2][:-1]]
    assert spans[3] is None


def test_pooled_sentence_vector_is_the_mean_of_its_token_outputs():
    embedder = TokenHashEmbedder()
    windows, sentences = embed_windows_and_sentences(embedder, [TEXT], [SENTENCES])
    # the window vector is what the embedder gives the whole window: nothing is embedded twice
    assert np.allclose(windows[0], embedder.embed([TEXT]), atol=1e-6)
    states, offsets = embedder.token_states([TEXT])[0]
    for (start, end), vector in sentences[0].items():
        inside = (offsets[:, 1] > offsets[:, 0]) & (offsets[:, 0] >= start) & (offsets[:, 1] <= end)
        expected = states[inside].mean(axis=0)
        assert np.allclose(vector, expected / np.linalg.norm(expected), atol=1e-6)
    assert len(sentences[0]) == 3


def test_a_chunk_of_several_windows_pools_every_sentence():
    long_text = " ".join(f"Sentence number {i} tells the tale of lighthouse keeper {i}." for i in range(60))
    parts = [f"Sentence number {i} tells the tale of lighthouse keeper {i}." for i in range(60)]
    windows, sentences = embed_windows_and_sentences(TokenHashEmbedder(), [long_text], [parts])
    assert windows[0].shape[0] > 1  # more than one window
    assert len(sentences[0]) == 60


def _workspace(path: Path, spec: str, embedder):
    from core.workspace import Workspace

    return Workspace(path, embedder=embedder, store=spec)


@pytest.fixture(params=["sqlite", "postgresql"])
def store_spec(request) -> str:
    return "sqlite" if request.param == "sqlite" else request.getfixturevalue("pg_store")


def _add_chunk(ws) -> None:
    records = ws.records
    with records.unit_of_work():
        records.insert_document("doc-s", "doc-s.txt", "test", "hash-s", TEXT, 20)
        records.insert_chunks([Chunk("doc-s-c0", "doc-s", 0, TEXT, 20, 0, start_char=0)])
        records.insert_chunk_extraction("doc-s", "doc-s-c0", ChunkExtraction(
            sentences=[SentenceRecord(s, []) for s in SENTENCES]))
        ws.bump_generation()


def test_sentence_vectors_stored_read_backfilled_and_deleted_on_both_backends(tmp_path, store_spec):
    from core.indexing.reconcile import backfill_sentence_vectors

    embedder = TokenHashEmbedder()
    ws = _workspace(tmp_path / "ws", store_spec, embedder)
    try:
        _add_chunk(ws)
        assert ws.records.chunks_with_sentence_vectors() == set()
        assert backfill_sentence_vectors(ws) == {"chunks": 1, "sentences": 3, "skipped": 0}
        assert backfill_sentence_vectors(ws)["chunks"] == 0  # nothing left to fill
        stored = ws.records.sentence_vectors(["doc-s-c0", "unknown"])
        assert set(stored) == {"doc-s-c0"}
        _, expected = embed_windows_and_sentences(embedder, [TEXT], [SENTENCES])
        assert [(a, b) for a, b, _ in stored["doc-s-c0"]] == sorted(expected[0])
        for a, b, data in stored["doc-s-c0"]:
            assert np.allclose(decode_vector(data), expected[0][(a, b)], atol=2e-3)  # float16 storage
        assert ws.records.chunks_with_sentence_vectors() == {"doc-s-c0"}
        with ws.records.unit_of_work():  # a deletion removes the chunk's sentence vectors with its sentences
            ws.records.remove_chunks(["doc-s-c0"])
        assert ws.records.sentence_vectors(["doc-s-c0"]) == {}
    finally:
        ws.close()


def test_an_embedder_without_token_outputs_backfills_nothing(tmp_path):
    from conftest import HashEmbedder

    from core.indexing.reconcile import backfill_sentence_vectors

    ws = _workspace(tmp_path / "ws", "sqlite", HashEmbedder())
    try:
        _add_chunk(ws)
        assert backfill_sentence_vectors(ws) == {"chunks": 0, "sentences": 0, "skipped": 1}
        assert ws.records.sentence_vectors(["doc-s-c0"]) == {}
    finally:
        ws.close()


def test_stored_rows_are_keyed_by_chunk_and_span():
    rows = stored_rows(["c1"], [{(4, 9): np.ones(4, dtype=np.float32) / 2}])
    assert [(c, a, b) for c, a, b, _ in rows] == [("c1", 4, 9)] and len(rows[0][3]) == 8  # 4 float16 values


def _naive_result(question: str):
    from core.types import ChunkHit, RetrievalResult

    return RetrievalResult(mode="naive", query=question, chunks=[
        ChunkHit(chunk_id="doc-s-c0", score=1.0, reason="test", doc_id="doc-s", doc_name="doc-s.txt", text=TEXT)])


def test_a_workspace_without_sentence_vectors_still_answers_and_says_how_it_ranked(tmp_path):
    from core.answers import extractive_answer
    from core.indexing.reconcile import backfill_sentence_vectors

    ws = _workspace(tmp_path / "ws", "sqlite", TokenHashEmbedder())
    try:
        _add_chunk(ws)  # as a workspace indexed before sentence vectors: rows, no vectors
        question = "Who founded Acme?"
        before = extractive_answer(_naive_result(question), ws)
        assert "Bob founded Acme in 1990." in before.text and before.ranking == "lexical"
        backfill_sentence_vectors(ws)
        after = extractive_answer(_naive_result(question), ws)
        assert after.ranking == "meaning" and "Bob founded Acme in 1990." in after.text
    finally:
        ws.close()


TIED = ["The treaty was signed in a tent on the banks of the river Tweed.",
        "The treaty was signed after long talks between the two kings."]


@pytest.mark.parametrize("order", [TIED, list(reversed(TIED))])
def test_between_lexically_tied_sentences_the_sentence_vector_decides(tmp_path, monkeypatch, order):
    """Two sentences share exactly the same words of the question (the same lexical, type and role score):
    the one whose stored vector is closer to the question's is chosen, whatever the evidence order; with
    the meaning term replaced by the old score (no vector), the tie goes to the earlier sentence."""
    from core.answers.inputs import AnswerInputs, answer_inputs
    from core.answers.scoring import best
    from core.indexing.reconcile import backfill_sentence_vectors

    text = " ".join(order)
    ws = _workspace(tmp_path / "ws", "sqlite", TokenHashEmbedder())
    try:
        records = ws.records
        with records.unit_of_work():
            records.insert_document("doc-t", "treaty.txt", "test", "hash-t", text, 30)
            records.insert_chunks([Chunk("doc-t-c0", "doc-t", 0, text, 30, 0, start_char=0)])
            records.insert_chunk_extraction("doc-t", "doc-t-c0", ChunkExtraction(
                sentences=[SentenceRecord(s, []) for s in order]))
            ws.bump_generation()
        backfill_sentence_vectors(ws)
        inputs = answer_inputs(ws, "Where was the treaty signed?", 4)
        sentences = inputs.bank.sentences(["doc-t-c0"])
        cosines = {s.text: inputs.meaning(s) for s in sentences}
        closest = max(cosines, key=lambda t: cosines[t])
        picks = [inputs.score(s, "chunk", 0, "chunk #1") for s in sentences]
        assert best(picks).sentence.text == closest
        monkeypatch.setattr(AnswerInputs, "meaning", lambda self, sentence: None)  # the old, lexical score
        lexical = [inputs.score(s, "chunk", 0, "chunk #1") for s in sentences]
        assert lexical[0].score == lexical[1].score and best(lexical).sentence.text == order[0]
    finally:
        ws.close()
