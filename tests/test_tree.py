"""Summary tree: per-document subtrees and the incremental corpus level (right-most path only)."""
from __future__ import annotations

from core.chunking import chunk_text
from core.storage.sqlite_backend import SqliteStore as Store
from core.indexing.tree import Passage, SummaryTree


def joined(passages: list[Passage]) -> str:
    """A deterministic stand-in summarizer: the first 3 words of every child."""
    return " | ".join(" ".join(p.text.split()[:3]) for p in passages)


def add_doc(store: Store, doc_id: str, n_chunks: int, g: int = 5) -> list[str]:
    store.insert_document(doc_id, doc_id + ".txt", "", doc_id, "x", 1)
    text = " ".join(f"w{i}" for i in range(n_chunks * 40))
    chunks = chunk_text(doc_id, text, chunk_tokens=50, overlap=10)[:n_chunks]
    store.insert_chunks(chunks)
    tree = SummaryTree(store, g, joined)
    root = tree.build_document(doc_id, chunks)
    tree.append_document(doc_id, root)
    return [n.node_id for n in tree.flush()]


def corpus_shape(store: Store) -> dict[str, list[str]]:
    return {n.node_id: n.child_ids for n in store.tree_nodes(scope="corpus")}


def test_single_chunk_document_is_its_own_root(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    add_doc(store, "d1", 1)
    assert store.tree_nodes(scope="doc") == []
    root_id, parent = store.doc_roots()["d1"]
    assert root_id.startswith("chunk-") and parent == "corpus-L1-0"


def test_document_subtree_groups_g_chunks_per_parent(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    add_doc(store, "d1", 12, g=5)
    nodes = store.tree_nodes(scope="doc", doc_id="d1")
    by_level = {}
    for n in nodes:
        by_level.setdefault(n.level, []).append(n)
    # 12 chunks -> ceil(12/5) = 3 level-1 nodes (5, 5, 2 children) -> 1 level-2 root
    assert [len(n.child_ids) for n in by_level[1]] == [5, 5, 2]
    assert len(by_level[2]) == 1 and by_level[2][0].child_ids == [n.node_id for n in by_level[1]]
    assert len(by_level[2][0].leaf_chunk_ids) == 12
    assert all(n.parent_id == by_level[2][0].node_id for n in by_level[1])


def test_corpus_level_grows_on_the_right_spine_only(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    for i in range(25):
        add_doc(store, f"d{i:02d}", 1)
    # 25 roots -> 5 full level-1 nodes -> 1 level-2 node with 5 children
    shape = corpus_shape(store)
    assert sorted(k for k in shape if k.startswith("corpus-L1")) == [f"corpus-L1-{i}" for i in range(5)]
    assert shape["corpus-L2-0"] == [f"corpus-L1-{i}" for i in range(5)]
    # the 26th document opens a new level-1 node, which needs a new level-2 node and a new root
    recomputed = add_doc(store, "d25", 1)
    assert recomputed == ["corpus-L1-5", "corpus-L2-1", "corpus-L3-0"]
    # the 27th only touches the right-most path: L1-5 -> L2-1 -> L3-0
    recomputed = add_doc(store, "d26", 1)
    assert recomputed == ["corpus-L1-5", "corpus-L2-1", "corpus-L3-0"]
    shape = corpus_shape(store)
    assert shape["corpus-L3-0"] == ["corpus-L2-0", "corpus-L2-1"]
    leaves = {n.node_id: n.leaf_chunk_ids for n in store.tree_nodes(scope="corpus")}
    assert len(leaves["corpus-L3-0"]) == 27


def test_removing_a_document_recomputes_only_its_path(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    for i in range(12):
        add_doc(store, f"d{i:02d}", 1)
    before = {n.node_id: n.text for n in store.tree_nodes(scope="corpus")}
    tree = SummaryTree(store, 5, joined)
    tree.remove_document("d03")  # lives in corpus-L1-0
    recomputed = [n.node_id for n in tree.flush()]
    assert recomputed == ["corpus-L1-0", "corpus-L2-0"]
    after = {n.node_id: n.text for n in store.tree_nodes(scope="corpus")}
    assert after["corpus-L1-1"] == before["corpus-L1-1"]
    assert after["corpus-L1-0"] != before["corpus-L1-0"]
    assert len(corpus_shape(store)["corpus-L1-0"]) == 4


def test_removing_the_last_member_drops_empty_nodes(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    for i in range(6):
        add_doc(store, f"d{i}", 1)
    assert "corpus-L1-1" in corpus_shape(store)
    tree = SummaryTree(store, 5, joined)
    tree.remove_document("d5")
    tree.flush()
    shape = corpus_shape(store)
    assert "corpus-L1-1" not in shape
    assert shape["corpus-L2-0"] == ["corpus-L1-0"]
