"""Where each mode lost the gold evidence (core.evaluation.loss, core.retrieval.funnel).

Unit tests on hand-built results check the stage rules; a tiny workspace of six one-chunk documents
(indexed offline) forces each stage once through real retrieval, and the eval CLI's per-question JSON
carries ``evidence_loss`` per (question, mode) row.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.evaluation.loss import (STAGES, biggest_loss, chunk_loss, document_loss, funnel, loss_sentence,
                                  stage_counts)
from core.types import RetrievalResult

DOCS = {
    "boat.txt": "Harlow Vance built the fishing boat Grey Petrel at the Ellery shipyard in 1931. The Grey Petrel was a "
                "wooden trawler with a red hull, and Vance sailed her out of Port Ellery for twenty years, landing cod "
                "and herring at the harbour market. In 1952 the boat was sold to the Port Ellery lifeboat society, "
                "which kept her as a training vessel until a storm wrecked her on the Skerran rocks in 1960.",
    "garden.txt": "In his later years Harlow Vance kept a rose garden behind his cottage in Dunmere. He bred a pale "
                  "yellow climbing rose that he named after his mother, Agnes, and each June he opened the garden to "
                  "the villagers. The Dunmere horticultural club still holds its summer show in the old garden, and "
                  "the Agnes rose grows over the cottage door.",
    "volcano.txt": "Mount Ossary is a stratovolcano on the island of Tarnholm. Its last eruption, in 1887, buried the "
                   "village of Brekka under ash and forced the islanders to move to the southern coast. Geologists "
                   "from the University of Valsund monitor the crater with seismometers, and a small museum in "
                   "Tarnholm town displays ash samples and photographs of the eruption.",
    "bakery.txt": "The Caldmoor bakery was founded by Ida Fenwick in 1908 on the market square of Caldmoor. Fenwick "
                  "baked rye loaves and oat cakes in a brick oven that still stands in the shop. Her granddaughter "
                  "Rosa Fenwick runs the bakery today and sells the same rye bread, made from grain grown on farms "
                  "around Caldmoor.",
    "chess.txt": "The Lindell chess club meets every Thursday in the library of Lindell. It was started in 1975 by the "
                 "schoolteacher Oskar Brand, who taught the game to pupils after lessons. The club has won the "
                 "regional team championship four times, most recently in 2019 under its captain Mira Holt.",
    "comet.txt": "The astronomer Elsa Marrow discovered a bright comet from the Harwick observatory in the winter of "
                 "1923. Her assistant Jonas Pell photographed the comet every clear night for six weeks and sent the "
                 "plates to the Royal Astronomical Society, which awarded Marrow its gold medal two years later.",
}
QUESTION = "Who built the fishing boat Grey Petrel?"


# --- the stage rules on hand-built results ------------------------------------------------------
def _result(evidence, candidates, reached) -> RetrievalResult:
    return RetrievalResult(mode="x", query="q", evidence_chunk_ids=list(evidence),
                           candidate_chunk_ids=list(candidates), reached_chunk_ids=list(reached))


CHUNK_DOC = {"c1": "d1", "c2": "d2", "c3": "d3", "c4": "d4", "c5": "d5", "c1b": "d1"}


def test_each_document_stage_by_the_rules():
    result = _result(["c1", "c2"], ["c1", "c2", "c3"], ["c1", "c2", "c3", "c4"])
    loss = document_loss(result, ["d1", "d2", "d3", "d4", "d5"], CHUNK_DOC, k=1)
    assert loss == {"d1": "found", "d2": "below_k", "d3": "over_budget", "d4": "not_selected", "d5": "not_reached"}
    # at k = 2 the second document is in the top k too
    assert document_loss(result, ["d2"], CHUNK_DOC, k=2) == {"d2": "found"}


def test_a_document_takes_the_best_stage_of_its_chunks_and_chunks_have_their_own():
    result = _result(["c2", "c1b"], ["c2", "c1b"], ["c2", "c1b", "c1"])
    assert document_loss(result, ["d1"], CHUNK_DOC, k=2) == {"d1": "found"}
    assert chunk_loss(result, ["c1", "c1b"], k=1) == {"c1": "not_selected", "c1b": "below_k"}


def test_a_result_without_funnel_lists_reads_as_its_evidence():
    result = _result(["c1", "c2"], [], [])
    assert document_loss(result, ["d1", "d2", "d3"], CHUNK_DOC, k=1) == \
        {"d1": "found", "d2": "below_k", "d3": "not_reached"}
    empty = _result([], [], [])
    assert document_loss(empty, ["d1"], CHUNK_DOC, k=5) == {"d1": "not_reached"}


def test_counts_funnel_and_sentence():
    losses = [{"a": "found", "b": "not_reached"}, {"c": "not_reached", "d": "over_budget", "e": "below_k"}]
    counts = stage_counts(losses)
    assert counts == {"found": 1, "below_k": 1, "over_budget": 1, "not_selected": 0, "not_reached": 2}
    assert list(counts) == list(STAGES)
    assert funnel(counts) == {"gold": 5, "reached": 3, "selected": 3, "in context": 2, "top k": 1}
    assert biggest_loss(counts) == ("not_reached", 0.4)
    assert loss_sentence("path", counts) == "path lost 40% of 5 gold documents at “never reached” (20% found in the top k)"
    assert biggest_loss(stage_counts([{"a": "found"}])) is None
    assert "found all 1" in loss_sentence("naive", stage_counts([{"a": "found"}]))


# --- each stage forced once on a tiny real workspace ---------------------------------------------
@pytest.fixture(scope="module")
def tiny_ws(tmp_path_factory):
    from core.indexing.pipeline import process_pending, register_documents
    from core.types import SourceDocument
    from core.workspace import Workspace

    ws = Workspace(tmp_path_factory.mktemp("loss") / "ws")
    with ws.writer():
        register_documents(ws, [SourceDocument(name, text) for name, text in DOCS.items()])
        report = process_pending(ws)
    assert report.processed == len(DOCS) and ws.status()["chunks"] == len(DOCS)  # one chunk per document
    yield ws
    ws.close()


def _stages(ws, mode: str, k: int, **overrides) -> dict[str, str]:
    from core.evaluation.questions import Question
    from core.evaluation.runner import evaluate

    ids = {name: doc_id for doc_id, name in ws.doc_names().items()}
    question = Question("loss:1", QUESTION, "Harlow Vance", gold_doc_ids=list(ids.values()))
    report = evaluate(ws, [question], [mode], [k], settings=ws.settings.with_overrides(overrides),
                      include_bm25=False)
    [row] = report.rows
    assert report.modes[mode]["evidence_loss"] == stage_counts([row["evidence_loss"]])
    return {name: row["evidence_loss"][doc_id] for name, doc_id in ids.items()}


def test_found_and_below_k(tiny_ws):
    stages = _stages(tiny_ws, "naive", 1)  # dense top-10 of six chunks: all in the context
    assert stages["boat.txt"] == "found"
    assert stages["garden.txt"] == "below_k"
    assert set(stages.values()) == {"found", "below_k"}


def test_over_budget(tiny_ws):
    # the entity and relation tables fill a 500-token context: every chunk the mode picked is cut
    stages = _stages(tiny_ws, "local", 1, max_total_tokens=500)
    assert stages["boat.txt"] == "over_budget"
    assert stages == _stages(tiny_ws, "local", 1, max_total_tokens=500)  # deterministic


def test_not_selected(tiny_ws):
    # Harlow Vance has a chunk in boat.txt and one in garden.txt; one chunk per entity keeps the closer one
    stages = _stages(tiny_ws, "local", 1, chunks_per_entity=1)
    assert stages["boat.txt"] == "found"
    assert stages["garden.txt"] == "not_selected"
    # with three per entity it is selected; this six-line corpus is smaller than local's tables, so the
    # cap at the corpus's size then cuts it from the rendered context (selected, cut by a budget)
    assert _stages(tiny_ws, "local", 1)["garden.txt"] == "over_budget"
    # under a corpus this small's size no longer binding (a larger budget is not enough: the cap is
    # the corpus), the selected chunk is in the context below k
    assert _stages(tiny_ws, "naive", 1)["garden.txt"] == "below_k"


def test_not_reached(tiny_ws):
    stages = _stages(tiny_ws, "local", 1)
    assert stages["volcano.txt"] == "not_reached"
    assert _stages(tiny_ws, "naive", 1, naive_top_k=3)["chess.txt"] == "not_reached"  # outside the dense top 3


@pytest.mark.parametrize("mode", ["naive", "local", "global", "hybrid", "mix", "tree", "path", "ppr", "auto"])
def test_every_mode_reports_its_funnel(tiny_ws, mode):
    from core.retrieval.registry import query_context
    from core.retrieval.registry import retrieve

    result = retrieve(query_context(tiny_ws, QUESTION), mode)
    assert result.evidence_chunk_ids, mode
    assert set(result.evidence_chunk_ids) <= set(result.candidate_chunk_ids) <= set(result.reached_chunk_ids)
    assert json.loads(json.dumps(result.to_dict()))["candidate_chunk_ids"] == result.candidate_chunk_ids


@pytest.mark.slow
def test_eval_cli_per_question_rows_carry_evidence_loss(tiny_ws, tmp_path):
    from core.cli.main import main

    names = {doc_id: name for doc_id, name in tiny_ws.doc_names().items()}
    gold = [d for d, n in names.items() if n in ("boat.txt", "garden.txt")]
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"qid": "q1", "question": QUESTION, "gold_doc_ids": gold}) + "\n"
                         + json.dumps({"qid": "q2", "question": "Who runs the Caldmoor bakery?"}) + "\n")
    out = tmp_path / "rows.json"
    assert main(["eval", "--workspace", str(tiny_ws.path), "--questions", str(questions), "--modes", "naive,path",
                 "--k", "1,2", "--per-question", str(out), "--json"]) == 0
    rows = json.loads(Path(out).read_text())
    assert {(r["qid"], r["mode"]) for r in rows} == {(q, m) for q in ("q1", "q2") for m in ("naive", "path", "bm25")}
    for row in rows:
        assert set(row["evidence_loss"]) == set(row["gold"])
        assert set(row["evidence_loss"].values()) <= set(STAGES)
        # document level at the largest k: found exactly when recall@2 counts the document
        found = sum(1 for s in row["evidence_loss"].values() if s == "found")
        if row["gold"]:
            assert found / len(row["gold"]) == pytest.approx(row["recall@2"])
