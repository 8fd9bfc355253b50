"""E2GraphRAG summary tree, maintained incrementally.

Per document: the leaves are its chunks in order; each parent summarises ``g`` consecutive
children (chunk overlap removed), recursively up to one root (a single-chunk document's root is
the chunk itself). Corpus level: document roots are grouped ``g`` at a time in insertion order,
recursively up to one corpus root. The corpus part grows like the right spine of a B-tree:
appending a document touches only the right-most path; deleting one touches only the path that
held it. Node ids are positional and stable (``corpus-L2-0``); vector ids hash the node's text.

A summarizer gets each child as a ``Passage``: its text and, where a parse covers it, its sentences —
the sentences spaCy found in the chunks at extraction time (read from the store, which the batch
fills before it builds the tree, so a tree built in one run, resumed, or recomputed after a deletion
sees the same sentences). A document's summary is cut at its leaves' sentences (``split_known``); a
corpus-level summary's text and a chunk without sentence rows have none (the summarizer splits
their text itself).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Callable, Optional, Sequence, cast

from core.chunking import join_without_overlap, split_overlap
from core.extraction.markup import plain_text
from core.indexing.summarize import split_known
from core.storage.ports import RecordStore
from core.storage.records import TreeNode
from core.tokens import count_tokens
from core.types import Chunk, checkpoint


@dataclass(frozen=True)
class Passage:
    """One child of a summary node: its text, and its sentences when a parse covers it (else None)."""

    text: str
    sentences: Optional[tuple[str, ...]] = None


Summarizer = Callable[[list[Passage]], str]  # the children -> summary text
Rows = dict[str, list[str]]  # chunk id -> its stored sentences


def run_sentences(chunks: Sequence[Chunk], rows: Rows) -> Optional[tuple[str, ...]]:
    """The stored sentences of consecutive chunks of one document, in order, each once: a chunk's
    leading sentences that lie inside the text it repeats from the chunk before (the overlap) are
    skipped, and a sentence the previous chunk ends with is dropped when the next one holds it whole
    (a chunk cut inside a sentence: "… Dr." then "… Dr. Who."). None when a chunk has no sentence
    rows (the summarizer then splits the joined text)."""
    if any(c.chunk_id not in rows for c in chunks):
        return None
    ordered = sorted(chunks, key=lambda c: c.order)
    out: list[str] = []
    for chunk, (repeated, _) in zip(ordered, split_overlap(list(ordered))):
        sentences = [" ".join(s.split()) for s in rows[chunk.chunk_id]]
        overlap = " ".join(plain_text(repeated).split())
        skip = 0
        while overlap and skip < len(sentences) and sentences[skip] in overlap:
            skip += 1
        while overlap and out and skip < len(sentences) and out[-1] in sentences[skip] and out[-1] in overlap:
            out.pop()
        out += sentences[skip:]
    return tuple(out)


def load_rows(store: RecordStore, chunk_ids: Sequence[str]) -> Rows:
    """The stored sentence texts of these chunks (chunks without rows are absent)."""
    return {c: [text for text, _ in rows] for c, rows in store.chunk_sentences(chunk_ids).items()}


def summary_passage(text: str, leaf_ids: Sequence[str], rows: Rows) -> Passage:
    """A document summary's text with the sentences of its leaves it is made of (none without rows)."""
    known = [s for leaf in leaf_ids for s in rows.get(leaf, [])]
    return Passage(text, tuple(split_known(text, known)) if known else None)


def tree_vector_id(node_id: str, text: str) -> str:
    return "tree-" + hashlib.sha256(f"{node_id}\x00{text}".encode("utf-8")).hexdigest()[:24]


class SummaryTree:
    """Summary-tree maintenance inside the caller's SQLite transaction."""

    def __init__(self, store: RecordStore, group_size: int, summarize: Summarizer) -> None:
        self.store = store
        self.g = group_size
        self.summarize = summarize
        self.recomputed: list[TreeNode] = []  # nodes whose text changed (to embed)
        self.removed_vector_ids: list[str] = []
        self._corpus = {n.node_id: n for n in store.tree_nodes(scope="corpus")}
        self._dirty: set[str] = set()

    # --- per-document subtree ---------------------------------------------------------------
    def build_document(self, doc_id: str, chunks: Sequence[Chunk]) -> str:
        """Build a document's subtree; return its root id (a tree node id or the chunk id)."""
        if not chunks:
            raise ValueError("a document without chunks has no subtree")
        if len(chunks) == 1:
            return chunks[0].chunk_id
        rows = load_rows(self.store, [c.chunk_id for c in chunks])
        level_items: list[tuple[str, list[str], Sequence[Chunk] | None, str]] = [
            (c.chunk_id, [c.chunk_id], [c], c.text) for c in chunks]
        level = 0
        while len(level_items) > 1:
            level += 1
            next_items: list[tuple[str, list[str], Sequence[Chunk] | None, str]] = []
            for ord_, start in enumerate(range(0, len(level_items), self.g)):
                group = level_items[start : start + self.g]
                node_id = f"{doc_id}-L{level}-{ord_}"
                checkpoint("building the summary tree")
                if level == 1:
                    run = [c for item in group for c in cast(Sequence[Chunk], item[2])]  # level-0 items hold their chunk
                    text = self.summarize([Passage(join_without_overlap(run), run_sentences(run, rows))])
                else:
                    text = self.summarize([summary_passage(item[3], item[1], rows) for item in group])
                leaves = [leaf for item in group for leaf in item[1]]
                node = TreeNode(node_id, "doc", doc_id, level, ord_, None, [item[0] for item in group], leaves,
                                text, count_tokens(text), tree_vector_id(node_id, text))
                for item in group:
                    if item[0].startswith(f"{doc_id}-L"):
                        self.store.set_tree_parent(item[0], node_id)
                self.store.upsert_tree_node(node)
                self.recomputed.append(node)
                next_items.append((node_id, leaves, None, text))
            level_items = next_items
        return level_items[0][0]

    def delete_document_nodes(self, doc_id: str) -> None:
        nodes = self.store.tree_nodes(scope="doc", doc_id=doc_id)
        self.removed_vector_ids.extend(n.vector_id for n in nodes)
        self.store.delete_tree_nodes(n.node_id for n in nodes)

    # --- corpus level -------------------------------------------------------------------------
    def _level_nodes(self, level: int) -> list[TreeNode]:
        return sorted((n for n in self._corpus.values() if n.level == level), key=lambda n: n.ord)

    def _top_level(self) -> int:
        return max((n.level for n in self._corpus.values()), default=0)

    def _new_node(self, level: int, children: list[str]) -> TreeNode:
        ord_ = max((n.ord for n in self._level_nodes(level)), default=-1) + 1
        node = TreeNode(f"corpus-L{level}-{ord_}", "corpus", None, level, ord_, None, children, [], "", 0, "")
        self._corpus[node.node_id] = node
        self._mark_dirty(node.node_id)
        return node

    def _mark_dirty(self, node_id: Optional[str]) -> None:
        while node_id:
            self._dirty.add(node_id)
            node_id = self._corpus[node_id].parent_id

    def append_document(self, doc_id: str, root_id: str) -> None:
        """Attach a document root to the right-most corpus path."""
        parent = self._attach(root_id, 1)
        self.store.set_doc_root(doc_id, root_id, parent)

    def _attach(self, child_id: str, level: int) -> str:
        nodes = self._level_nodes(level)
        if not nodes:
            node = self._new_node(level, [child_id])
            self._set_parent(child_id, node.node_id)
            return node.node_id
        right = nodes[-1]
        if len(right.child_ids) < self.g:
            right.child_ids.append(child_id)
            self._set_parent(child_id, right.node_id)
            self._mark_dirty(right.node_id)
            return right.node_id
        node = self._new_node(level, [child_id])
        self._set_parent(child_id, node.node_id)
        if level == self._top_level() and len(nodes) == 1:
            top = self._new_node(level + 1, [right.node_id])
            self._set_parent(right.node_id, top.node_id)
        self._attach(node.node_id, level + 1)
        return node.node_id

    def _set_parent(self, child_id: str, parent_id: str) -> None:
        if child_id in self._corpus:
            self._corpus[child_id].parent_id = parent_id
            self._mark_dirty(parent_id)
            self.store.set_tree_parent(child_id, parent_id)

    def remove_document(self, doc_id: str) -> None:
        """Detach a document root from its corpus parent, dropping nodes left empty."""
        roots = self.store.doc_roots()
        if doc_id not in roots:
            return
        root_id, parent_id = roots[doc_id]
        self.store.delete_doc_root(doc_id)
        child = root_id
        while parent_id:
            parent = self._corpus[parent_id]
            parent.child_ids = [c for c in parent.child_ids if c != child]
            if parent.child_ids:
                self._mark_dirty(parent_id)
                return
            del self._corpus[parent_id]
            self._dirty.discard(parent_id)
            self.removed_vector_ids.append(parent.vector_id)
            self.store.delete_tree_nodes([parent_id])
            child, parent_id = parent_id, parent.parent_id

    # --- recompute --------------------------------------------------------------------------------
    def flush(self) -> list[TreeNode]:
        """Recompute dirty corpus nodes bottom-up and store them; return every node whose text changed."""
        roots = {root: doc for doc, (root, _) in self.store.doc_roots().items()}
        for node_id in sorted(self._dirty, key=lambda i: (self._corpus[i].level, self._corpus[i].ord)):
            node = self._corpus[node_id]
            checkpoint("building the summary tree")
            passages, leaves = self._children_content(node.child_ids, roots)
            text = self.summarize(passages)
            if node.vector_id:
                self.removed_vector_ids.append(node.vector_id)
            node.text, node.tokens, node.leaf_chunk_ids = text, count_tokens(text), leaves
            node.vector_id = tree_vector_id(node_id, text)
            self.store.upsert_tree_node(node)
            self.recomputed.append(node)
        self._dirty.clear()
        return self.recomputed

    def _children_content(self, child_ids: list[str], roots: dict[str, str]) -> tuple[list[Passage], list[str]]:
        doc_nodes = {}
        for child in child_ids:
            if child not in self._corpus and child in roots and not child.startswith("chunk-"):
                doc_nodes.update({n.node_id: n for n in self.store.tree_nodes(scope="doc", doc_id=roots[child])})
        chunks = self.store.chunks_by_id([c for c in child_ids if c not in self._corpus and c not in doc_nodes])
        rows = load_rows(self.store, list(chunks) + [leaf for c in child_ids if c in doc_nodes
                                                     for leaf in doc_nodes[c].leaf_chunk_ids])
        passages: list[Passage] = []
        leaves: list[str] = []
        for child in child_ids:
            node = self._corpus.get(child) or doc_nodes.get(child)
            if node is not None:
                # a corpus summary's leaves span many documents: its text is split by the summarizer
                passages.append(Passage(node.text) if child in self._corpus
                                else summary_passage(node.text, node.leaf_chunk_ids, rows))
                leaves.extend(node.leaf_chunk_ids)
            elif child in chunks:
                passages.append(Passage(chunks[child].text, run_sentences([chunks[child]], rows)))
                leaves.append(child)
        return passages, leaves
