"""The summary tree summarises the sentences spaCy found at extraction time, not a regex split.

A punctuation regex cuts "Dr. Smith joined the U.S. Navy" into "Dr.", "Smith joined the U.S." and
"Navy …"; the stored spaCy sentences keep it whole. Every path that builds or recomputes a summary
(one batch, one document per batch, a deletion) must read the same sentences.
"""
from __future__ import annotations

import re

from conftest import HashEmbedder
from core.chunking import chunk_text, join_without_overlap
from core.indexing.summarize import extractive_summary, split_known, tfidf_vectors, unparsed_sentences
from core.indexing.tree import Passage, SummaryTree, load_rows, run_sentences
from core.storage import graph_store
from core.storage.sqlite_backend import SqliteStore as Store
from core.types import ChunkExtraction, SentenceRecord

DOCS = {
    "d1.txt": ("Dr. Smith joined the U.S. Navy in 1990. He served on St. Helena with Mr. J. R. Jones until 1995. "
               "The ship left Portsmouth in May. Its crew counted forty sailors and two cooks. "
               "Dr. Smith wrote a book about the voyage. The book sold well in the U.S. and in Canada. "
               "Mr. Jones later became a teacher in Leeds. He taught geography for twenty years. "
               "St. Mary's School in Leeds gave him a prize in 2001. Dr. Smith came to the ceremony by train. "
               "The U.S. Embassy sent a letter of thanks. Mrs. Jones kept it in a frame for many years. "
               "Their son joined the U.K. Royal Navy in 2010."),
    "d2.txt": ("Prof. Brown studied the St. Lawrence River for the U.S. Geological Survey. She measured its floods "
               "every spring. Dr. Smith visited her camp at St. Regis in 1998. They compared the river with the "
               "Thames. Mr. J. R. Jones sent them maps."),
    "d3.txt": "The U.S. Navy bought three ships in 1992. Adm. Clark named them after rivers of Maine.",
}


def test_split_known_cuts_at_known_sentences_and_splits_the_rest():
    known = ["Dr. Smith joined the U.S. Navy.", "Peter Bonetti", "Peter Bonetti (born 1941) is a goalkeeper."]
    text = "Dr. Smith joined the U.S. Navy. Peter Bonetti Peter Bonetti (born 1941) is a goalkeeper. Mr. X left."
    assert split_known(text, known) == known + ["Mr.", "X left."]  # the unknown rest: regex
    assert split_known("Dr. Who. Yes.", []) == unparsed_sentences("Dr. Who. Yes.") == ["Dr.", "Who.", "Yes."]


def test_level_one_passage_has_the_stored_sentences_without_the_overlap(tmp_path):
    store = Store(tmp_path / "db.sqlite3")
    text = " ".join(f"Sentence number {i} talks about Dr. Who." for i in range(12))
    chunks = chunk_text("d1", text, chunk_tokens=50, overlap=10)
    assert len(chunks) >= 2 and chunks[1].text.startswith("Sentence number")  # the overlap: whole sentences
    store.insert_document("d1", "d1.txt", "", "d1", text, 1)
    store.insert_chunks(chunks)
    for chunk in chunks:  # a "parse" that keeps "Dr. Who." inside its sentence
        sentences = re.split(r"(?<=Who\.)\s+", chunk.text.strip())
        graph_store.insert_chunk_extraction(store.db, "d1", chunk.chunk_id,
                                            ChunkExtraction(sentences=[SentenceRecord(s) for s in sentences]))
    seen: list[list[Passage]] = []

    def record(passages: list[Passage]) -> str:
        seen.append(passages)
        return " ".join(s for p in passages for s in (p.sentences or ()))

    tree = SummaryTree(store, 5, record)
    tree.build_document("d1", chunks)
    level_one = seen[0][0]
    assert level_one.sentences == tuple(f"Sentence number {i} talks about Dr. Who." for i in range(12))
    rows = load_rows(store, [c.chunk_id for c in chunks])
    assert run_sentences(chunks[:1], rows) == tuple(rows[chunks[0].chunk_id])
    assert run_sentences(chunks, {}) is None  # no sentence rows: the summarizer splits the text


def index(path, batch_tokens, docs=DOCS):
    from core.indexing.pipeline import process_pending, register_documents
    from core.settings import Settings
    from core.types import SourceDocument
    from core.workspace import Workspace

    # chunks of up to 60 tokens and summaries of 50: even one chunk's summary selects sentences
    settings = Settings(chunk_tokens=60, chunk_overlap=10, summary_tokens=50, tree_group_size=2)
    ws = Workspace(path, settings=settings, embedder=HashEmbedder())
    with ws.writer():
        register_documents(ws, [SourceDocument(name, text) for name, text in docs.items()])
        report = process_pending(ws, batch_tokens=batch_tokens)
    assert report.processed == len(docs) and not report.failed
    return ws


def stored(ws, chunk_ids):
    return [s for rows in graph_store.chunk_sentences(ws.store.db, chunk_ids).values() for s, _ in rows]


def test_tree_summaries_are_made_of_the_parsed_sentences(tmp_path):
    ws = index(tmp_path / "together", batch_tokens=10**9)
    try:
        nodes = {n.node_id: n for n in ws.store.tree_nodes()}
        parsed = stored(ws, [c.chunk_id for d in ws.store.documents() for c in ws.store.chunks_of(d.doc_id)])
        assert "Dr. Smith joined the U.S. Navy in 1990." in parsed  # spaCy keeps the abbreviations inside
        summaries = [n for n in nodes.values() if n.scope == "doc" or n.level == 1]
        assert len(summaries) >= 4 and any(n.level >= 2 and n.scope == "doc" for n in summaries)
        for node in summaries:  # whole parsed sentences only: no "Dr." or "Navy in 1990." fragments
            pieces = split_known(node.text, parsed)
            assert pieces and all(p in parsed for p in pieces), (node.node_id, pieces)
        # the level-1 summary of d1's first chunks differs from what the regex split would have given
        d1 = next(d.doc_id for d in ws.store.documents() if d.name == "d1.txt")
        first = nodes[d1 + "-L1-0"]
        chunks = chunk_text(d1, DOCS["d1.txt"], 60, 10)[: len(first.leaf_chunk_ids)]  # as the batch made them
        assert [c.chunk_id for c in chunks] == first.leaf_chunk_ids
        parsed_run = run_sentences(chunks, load_rows(ws.store, first.leaf_chunk_ids))
        regex = extractive_summary(unparsed_sentences(join_without_overlap(chunks)), tfidf_vectors, 50)
        assert first.text == extractive_summary(parsed_run, tfidf_vectors, 50) != regex
        assert any(p not in parsed for p in split_known(regex, parsed))  # the regex summary quotes fragments
    finally:
        ws.close()


def test_same_sentences_in_one_run_one_by_one_and_after_a_deletion(tmp_path):
    from core.indexing.deletion import delete_documents

    def tree(ws):
        return {n.node_id: n.text for n in ws.store.tree_nodes()}

    together = index(tmp_path / "together", batch_tokens=10**9)
    one_by_one = index(tmp_path / "one-by-one", batch_tokens=1)
    fresh = index(tmp_path / "fresh", batch_tokens=10**9, docs={"d2.txt": DOCS["d2.txt"]})
    try:
        assert tree(together) == tree(one_by_one)
        before = tree(together)["corpus-L1-0"]  # summarises d1's root and d2's chunk
        with together.writer():  # d1 leaves corpus-L1-0: its summary is recomputed from the store
            delete_documents(together, [d.doc_id for d in together.store.documents() if d.name == "d1.txt"])
        after = tree(together)["corpus-L1-0"]
        assert after != before and after == tree(fresh)["corpus-L1-0"]
    finally:
        for ws in (together, one_by_one, fresh):
            ws.close()
