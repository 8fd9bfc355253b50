"""What indexing embeds for entities, relations and summary-tree nodes (issue 36's wordpiece budget):
the caps of ``core.indexing.profiles`` hold, and a re-embedding (``reconcile``) embeds the very texts
indexing embedded, so a workspace's vectors do not depend on how they were made."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import core.indexing.profiles as profiles
from core.indexing.profiles import relation_vector_text, tree_vector_text
from core.indexing.vector_writes import graph_texts
from core.storage.records import TreeNode
from core.tokens import count_tokens

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def _node(text: str) -> TreeNode:
    return TreeNode("n1", "doc", "d1", 1, 0, None, [], [], text, count_tokens(text), "v1")


def test_tree_node_embeds_at_most_the_cap():
    long = " ".join(f"Sentence {i} tells of the harbour and its keeper." for i in range(80))
    embedded = tree_vector_text(long)
    if profiles.TREE_VECTOR_TOKENS:
        assert count_tokens(embedded) <= profiles.TREE_VECTOR_TOKENS < count_tokens(long)
        assert long.startswith(embedded.rstrip())
    else:
        assert embedded == long
    assert graph_texts([], [], [_node(long)]) == [embedded]  # indexing embeds exactly that text


def test_tree_cap_off_keeps_the_text(monkeypatch):
    monkeypatch.setattr(profiles, "TREE_VECTOR_TOKENS", 0)
    assert tree_vector_text("a b c " * 300) == "a b c " * 300
    monkeypatch.setattr(profiles, "TREE_VECTOR_TOKENS", 5)
    assert count_tokens(tree_vector_text("a b c " * 300)) <= 5


def test_relation_names_at_most_the_keyword_cap():
    keywords = [f"kw{i}" for i in range(12)]
    text = relation_vector_text(keywords, "Ada Lovelace", "Charles Babbage", "Ada worked with Babbage.")
    head = text.split("\t", 1)[0].split(", ")
    assert head == keywords[: profiles.RELATION_KEYWORDS]
    assert "Ada Lovelace" in text and "Charles Babbage" in text


def test_reconcile_embeds_the_texts_indexing_embedded(sample_torch_workspace_dir, tmp_path):
    """Every entity, relation and tree vector dropped and re-embedded by ``reconcile`` comes back with
    the vector indexing gave it (same text in, same vector out). Pinned to the torch MiniLM: its vector of
    a text does not depend on the batch it is embedded in, the int8 model's does slightly (one activation
    scale per batch), so only torch shows a changed text as a cosine below 0.9999."""
    import shutil

    import numpy as np

    from core.indexing.reconcile import reconcile
    from core.workspace import Workspace

    shutil.copytree(sample_torch_workspace_dir, tmp_path / "ws")
    ws = Workspace(tmp_path / "ws")
    before = {c: ws.vectors.get_vectors(c, sorted(ws.vectors.all_ids(c))) for c in ("entities", "relations", "tree")}
    with ws.writer():
        for collection, vectors in before.items():
            ws.vectors.delete(collection, list(vectors))
        report = reconcile(ws)
    for collection, vectors in before.items():
        assert report[collection]["added"] == len(vectors) > 0
        again = ws.vectors.get_vectors(collection, list(vectors))
        assert set(again) == set(vectors)
        worst = min(float(np.dot(again[i], vectors[i])) for i in vectors)
        assert worst > 0.9999, (collection, worst)
    ws.close()


def test_wordpiece_counter_matches_the_embedded_texts(sample_ws_copy):
    sys.path.insert(0, str(BENCHMARKS))
    import embedded_wordpieces

    report = embedded_wordpieces.count(Path(sample_ws_copy.path))
    kinds = report["by_kind"]
    assert set(kinds) == {"chunk windows", "entities", "relations", "tree"}
    assert kinds["entities"]["texts"] == len(sample_ws_copy.records.entity_vector_rows())
    assert kinds["relations"]["texts"] == len(sample_ws_copy.records.relation_vector_rows())
    assert report["wordpieces"] == sum(k["wordpieces"] for k in kinds.values()) > 0
    assert report["per_corpus_token"] == pytest.approx(report["wordpieces"] / report["corpus_tokens"], abs=1e-3)


def test_wordpiece_counter_prices_a_candidate_cut(sample_ws_copy, monkeypatch):
    """``--entity-tokens`` / ``--tree-tokens`` / ``--relation-keywords`` count what a cut would embed,
    without editing the code: fewer entity and tree wordpieces, the chunk windows unchanged."""
    sys.path.insert(0, str(BENCHMARKS))
    import embedded_wordpieces

    for constant in embedded_wordpieces.CAPS.values():  # restored after the test
        monkeypatch.setattr(profiles, constant, getattr(profiles, constant))
    today = embedded_wordpieces.count(Path(sample_ws_copy.path))["by_kind"]
    caps = embedded_wordpieces.with_caps(entity_tokens=3, tree_tokens=8, relation_keywords=1)
    assert caps == {"entity_tokens": 3, "tree_tokens": 8, "relation_keywords": 1}
    cut = embedded_wordpieces.count(Path(sample_ws_copy.path))["by_kind"]
    assert cut["chunk windows"] == today["chunk windows"]
    for kind in ("entities", "tree"):
        assert cut[kind]["texts"] == today[kind]["texts"] and cut[kind]["wordpieces"] < today[kind]["wordpieces"]
    assert cut["relations"]["wordpieces"] <= today["relations"]["wordpieces"]
