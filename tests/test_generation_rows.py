"""A Compare reads chunk rows, citation places and sentences from per-generation memos (issue 36):
every result — records, citations, context, answers — is what the store gives when each is read
afresh, whatever was asked before and whether the app's warm-up loaded the sentence bank first."""
from __future__ import annotations

import pytest

QUESTIONS = [
    "Who was the first keeper of Kestrel Point Lighthouse?",
    "Who founded the organisation whose former warehouse on Salt Quay now houses the Velmora Maritime Museum?",
    "Which festival began after the Great Velmora Flood?",
]
MODES = ["naive", "local", "global", "hybrid", "mix", "tree", "path"]


def compare(ws, question: str) -> dict:
    """Each mode's JSON (stage timings left out: wall clock) after a fresh question."""
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.extraction import query_terms
    from core.retrieval import lightrag_context

    query_terms._parse.cache_clear()
    lightrag_context.csv_line.cache_clear()
    lightrag_context.text_tokens.cache_clear()
    out = {}
    for mode, result in run_modes(LOCAL_ADMIN, ws, question, MODES).items():
        data = result.to_dict()
        data.pop("timings_ms")
        out[mode] = data
    return out


def read_afresh(monkeypatch) -> None:
    """Every chunk row, place and label read from the store at each call (no generation memo), the
    sentence bank rebuilt per answer and the stem memo off: the reference results."""
    from core.answers import inputs, question
    from core.retrieval import generation_rows, results

    monkeypatch.setattr(results, "chunk_rows", generation_rows.ChunkRows)
    monkeypatch.setattr(results, "source_labels", generation_rows.SourceLabels)
    monkeypatch.setattr(inputs, "sentence_bank", lambda ws: inputs.SentenceBank(ws))
    monkeypatch.setattr(question, "stem", question.stem.__wrapped__)


def test_a_warmed_compare_after_other_questions_equals_one_read_afresh(sample_workspace_dir, monkeypatch):
    from core.warmup import warm_workspace
    from core.workspace import Workspace

    warmed = Workspace(sample_workspace_dir)
    try:
        warm_workspace(warmed)  # the whole sentence bank read up front
        cached = {q: compare(warmed, q) for q in reversed(QUESTIONS)}  # the memos filled by the other questions
    finally:
        warmed.close()
    read_afresh(monkeypatch)
    fresh = Workspace(sample_workspace_dir)
    try:
        for q in QUESTIONS:
            reference = compare(fresh, q)
            for mode in MODES:
                assert cached[q][mode] == reference[mode], (q, mode)
    finally:
        fresh.close()
    assert any(e["cited"] for e in cached[QUESTIONS[0]]["local"]["entities"])
    # the sample index stores sentence vectors: the answers' meaning ranking (the bank's vectors) is covered
    assert any(cached[q][m]["answer"]["ranking"] == "meaning" for q in QUESTIONS for m in MODES)


@pytest.mark.parametrize("question", QUESTIONS[:2])
def test_citations_and_chunk_places_are_the_stores(sample_ws, question):
    """What the memos hand out is what ``chunk_sources``/``sources_label`` and the chunk rows say."""
    from core.citations import chunk_sources, sources_label, where_of
    from core.retrieval.results import CITED_CHUNKS

    results = compare(sample_ws, question)
    compare(sample_ws, question)  # asked again: everything now comes from the memos
    results = compare(sample_ws, question)
    records = sample_ws.records
    checked = 0
    for mode in MODES:
        for hit in results[mode]["entities"] + results[mode]["relations"]:
            ids = list(hit["source_chunk_ids"])[:CITED_CHUNKS]
            if not ids:
                continue
            places = chunk_sources(records, sample_ws.doc_names(), ids)
            assert hit["cited"] == sources_label([places[c] for c in ids if c in places])
            checked += 1
        chunks = records.chunks_by_id(c["chunk_id"] for c in results[mode]["chunks"])
        positions = records.positions({c.doc_id for c in chunks.values()})
        for record in results[mode]["chunks"]:
            chunk = chunks[record["chunk_id"]]
            assert (record["doc_id"], record["order"], record["text"]) == (chunk.doc_id, chunk.order, chunk.text)
            where = where_of(positions.get(chunk.doc_id), chunk.start_char, len(chunk.text))
            assert (record.get("page_start"), record.get("section"), record.get("line_start")) == \
                   (where.page_start, where.section, where.line_start)
            checked += 1
    assert checked > 10


def test_the_warm_up_loads_every_chunks_sentences(sample_ws):
    from core.answers.sentences import sentence_bank
    from core.warmup import warm_sentences

    assert warm_sentences(sample_ws) == len(sample_ws.records.all_chunk_ids()) > 0
    bank = sentence_bank(sample_ws)
    assert set(bank.by_chunk) == set(sample_ws.records.all_chunk_ids())
    assert sum(len(s) for s in bank.by_chunk.values()) > 0


def test_the_identity_check_reports_a_changed_answer():
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from compare_identity import differences

    line = {"question": "q", "modes": {"naive": {"chunks": ["a"], "context": "c", "answer": ["t", "extractive", "", ""]}}}
    changed = {"question": "q", "modes": {"naive": {"chunks": ["a"], "context": "c", "answer": ["u", "extractive", "", ""]}}}
    assert differences([line], [line]) == []
    assert differences([line], [changed]) == ["naive answer differs for 'q'"]
