"""Which evidence lines an offline answer shows after its first line (issue 31, answer-in-answer):
tree's summary sentences compete with its leaf sentences by score; path and the LightRAG modes also
quote the description sentences of the nodes / entities their context describes (evidence lines only)."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from core.answers import chunk_modes
from core.answers import lightrag as lightrag_module
from core.answers import path as path_module
from core.answers.chunk_modes import tree_lines
from core.answers.inputs import AnswerInputs
from core.answers.lightrag import lightrag_answer
from core.answers.path import path_answer
from core.answers.question import make_frame
from core.answers.scoring import Pick
from core.answers.sentences import Sentence, build_sentences
from core.storage.vector_search import MatrixSearch, VectorMatrix
from core.types import ChunkHit, EntityHit, PathHit, RetrievalResult


def pick(text: str, score: float, role: str, label: str, chunk: str = "c1", ord_: int = 0) -> Pick:
    return Pick(Sentence(text, chunk, ord_, f"{chunk}.md, chunk 1"), score, role, label)


SUMMARY = pick("The region's ports grew through the nineteenth century as trade expanded.", 1.1, "summary",
               "summary, level 1", "s", 0)
LEAF = pick("The harbour was designed by the engineer Mara Holt in 1871.", 2.4, "leaf", "leaf (Harbour)", "c2", 0)
OTHER = pick("Fishing boats still land their catch at the north quay every morning.", 0.4, "chunk",
             "leaf chunk #1", "c2", 1)


def test_tree_lines_put_a_leaf_sentence_that_outscores_a_summary_sentence_first():
    lines = [entry.text.split(":")[0] for entry in tree_lines([SUMMARY], [LEAF], [OTHER])]
    assert lines == ["leaf (Harbour)", "summary, level 1", "leaf chunk #1"]


def test_tree_lines_keep_summaries_first_with_the_setting(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(chunk_modes, "SUMMARIES_FIRST", True)
    lines = [entry.text.split(":")[0] for entry in tree_lines([SUMMARY], [LEAF], [OTHER])]
    assert lines == ["summary, level 1", "leaf (Harbour)", "leaf chunk #1"]


# --- description sentences of the nodes / entities the context describes ----------------------------
ROWS = {
    "c1": [("Brightwater Robotics was founded in 2011 by Ilse Marren, a lecturer at Northmere.",
            [["ORG", "Brightwater Robotics", "brightwater robotics"], ["PERSON", "Ilse Marren", "ilse marren"]])],
    "c3": [("Stellan Industries builds cranes and mooring systems for the port of Kessling.",
            [["ORG", "Stellan Industries", "stellan industries"], ["GPE", "Kessling", "kessling"]])],
}
QUESTION = "What does the company that bought the firm founded by Ilse Marren build?"


def _graph() -> nx.Graph:
    g = nx.Graph()
    g.add_node("ilse marren", name="Ilse Marren", type="PERSON", source_chunk_ids=["c1"], description="")
    g.add_node("brightwater robotics", name="Brightwater Robotics", type="ORG", source_chunk_ids=["c1"],
               description=ROWS["c1"][0][0])
    g.add_node("stellan industries", name="Stellan Industries", type="ORG", source_chunk_ids=["c3"],
               description=ROWS["c3"][0][0])
    g.add_node("kessling", name="Kessling", type="GPE", source_chunk_ids=["c3"], description="")
    g.add_edge("ilse marren", "brightwater robotics", source_chunk_ids=["c1"], keywords=["found"])
    g.add_edge("brightwater robotics", "stellan industries", source_chunk_ids=["c9"], keywords=["acquire"])
    return g


class _Bank:
    def __init__(self, graph: nx.Graph) -> None:
        self.by_chunk = {cid: build_sentences(cid, f"{cid}.md, chunk 1", rows, graph, {}) for cid, rows in ROWS.items()}

    def get(self, chunk_ids):
        return {c: self.by_chunk.get(c, []) for c in dict.fromkeys(chunk_ids)}

    def sentences(self, chunk_ids):
        return [s for ss in self.get(chunk_ids).values() for s in ss]


class _Views:
    def __init__(self) -> None:
        self.vectors = MatrixSearch(lambda collection: VectorMatrix(
            list(ROWS) if collection == "chunks" else [],
            np.zeros((len(ROWS) if collection == "chunks" else 0, 4), dtype=np.float32),
            [{"chunk_id": c} for c in ROWS] if collection == "chunks" else []))


class _Workspace:
    def __init__(self) -> None:
        self.views = _Views()


def _inputs() -> AnswerInputs:
    graph = _graph()
    inp = AnswerInputs(_Workspace(), graph, _Bank(graph), make_frame(QUESTION, ("ilse marren",)), 10, cache={})
    inp.question_vector = lambda: np.ones(4, dtype=np.float32)  # type: ignore[method-assign]
    return inp


def _chunk(cid: str) -> ChunkHit:
    return ChunkHit(chunk_id=cid, score=0.0, reason="", doc_id=f"{cid}.md", doc_name=f"{cid}.md")


def _lines(builder, result: RetrievalResult) -> tuple[list[str], list[str]]:
    inp = _inputs()
    candidates, entries = builder(inp, result)
    return [entry.text for entry in entries], [p.sentence.text for p in candidates]


def test_path_quotes_the_description_sentence_of_a_kept_paths_node():
    path = PathHit(rank=1, keys=["ilse marren", "brightwater robotics", "stellan industries"],
                   nodes=["Ilse Marren", "Brightwater Robotics", "Stellan Industries"], relations=[], resources={},
                   score=1.0, hops=2, text="", why="")
    lines, candidates = _lines(path_answer, RetrievalResult(mode="path", query=QUESTION, paths=[path],
                                                            chunks=[_chunk("c1")]))
    said = "node Stellan Industries: Stellan Industries builds cranes"
    assert any(line.startswith(said) for line in lines)
    assert ROWS["c3"][0][0] not in candidates  # an evidence line only: the first line is chosen as before


def test_lightrag_quotes_the_description_sentence_of_a_retrieved_entity():
    entity = EntityHit(key="stellan industries", name="Stellan Industries", type="ORG",
                       description=ROWS["c3"][0][0], score=1.0, reason="")
    lines, candidates = _lines(lightrag_answer, RetrievalResult(mode="local", query=QUESTION, entities=[entity],
                                                                chunks=[_chunk("c1")]))
    assert any(line.startswith("entity Stellan Industries: Stellan Industries builds cranes") for line in lines)
    assert ROWS["c3"][0][0] not in candidates


def test_without_the_rule_no_description_line_is_quoted(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(path_module, "DESCRIBED_NODES", 0)
    monkeypatch.setattr(lightrag_module, "DESCRIBED", 0)
    path = PathHit(rank=1, keys=["ilse marren", "brightwater robotics", "stellan industries"],
                   nodes=["Ilse Marren", "Brightwater Robotics", "Stellan Industries"], relations=[], resources={},
                   score=1.0, hops=2, text="", why="")
    lines, _ = _lines(path_answer, RetrievalResult(mode="path", query=QUESTION, paths=[path], chunks=[_chunk("c1")]))
    assert not any("Stellan Industries builds cranes" in line for line in lines)
