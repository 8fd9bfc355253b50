"""The storage contract, run on every backend (``sqlite``, ``postgresql``): what retrieval, answers,
evaluation and indexing rely on from the ports of ``core.storage`` — documents, chunks, graph fragments,
merged graph view, mention graph, sentences, summary tree, meta and run log round trips; the unit of
work (a rolled-back batch leaves nothing; readers never see uncommitted rows); annotations; the LLM
cache; and the same index, record for record, from the same documents on both backends.

The PostgreSQL-only tests at the end check what makes it a shared system of record: no SQLite file in
the folder, the advisory writer lock (excludes a second writer, released when its holder is killed),
the versioned schema migration, and two CLI processes with different data folders seeing each other's
committed writes. PostgreSQL comes from ``tests/postgres_fixture.py`` (fails under
``RAGSCOPE_REQUIRE=postgres``/``all`` when it cannot be started, skips otherwise).
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from conftest import ROOT, HashEmbedder
from postgres_fixture import pg_store, postgres_server  # noqa: F401 - fixtures

from core.storage.records import TreeNode
from core.types import Chunk, ChunkExtraction, EntityRecord, MentionRecord, RelationRecord, SentenceRecord

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(params=BACKENDS)
def store_spec(request) -> str:
    """The store spec of the backend under test ("sqlite", or a fresh PostgreSQL database's URL)."""
    if request.param == "sqlite":
        return "sqlite"
    return request.getfixturevalue("pg_store")


def open_ws(path: Path, spec: str):
    from core.workspace import Workspace

    return Workspace(path, embedder=HashEmbedder(), store=spec)


@pytest.fixture()
def ws(tmp_path, store_spec):
    workspace = open_ws(tmp_path / "ws", store_spec)
    yield workspace
    workspace.close()


@pytest.fixture()
def other(tmp_path, store_spec):
    """A second handle on the same store: the same folder for SQLite, another folder for PostgreSQL."""
    folder = tmp_path / ("ws" if store_spec == "sqlite" else "other")
    workspace = open_ws(folder, store_spec)
    yield workspace
    workspace.close()


def add_document(records, doc_id: str, texts: list[str]) -> list[Chunk]:
    text = " ".join(texts)
    records.insert_document(doc_id, f"{doc_id}.txt", "test", "hash-" + doc_id, text, len(text.split()))
    chunks = [Chunk(f"{doc_id}-c{i}", doc_id, i, t, len(t.split()), 10 * i, windows=1 + i % 2)
              for i, t in enumerate(texts)]
    records.insert_chunks(chunks)
    return chunks


def extraction(entities: list[tuple[str, str]], relations: list[tuple[str, str, float]],
               terms: dict[str, int]) -> ChunkExtraction:
    ents = [EntityRecord(name, etype, f"{name} is a {etype.lower()}.", {etype: 1}, [name.upper()])
            for name, etype in entities]
    rels = [RelationRecord(a, b, ["link", a.lower()], f"{a} relates to {b}.", weight) for a, b, weight in relations]
    keys = sorted(terms)
    pairs = {(keys[i], keys[j]): 1 for i in range(len(keys)) for j in range(i + 1, len(keys))}
    mentions = MentionRecord(dict(terms), {t: "PROPN" for t in terms}, pairs)
    sentences = [SentenceRecord(f"{name} appears here.", [["ORG", name, name.lower()]]) for name, _ in entities]
    return ChunkExtraction(ents, rels, mentions, [], sentences)


# --- documents, chunks, meta and log ----------------------------------------------------------
def test_documents_and_chunks_round_trip(ws, other):
    records = ws.records
    with records.unit_of_work():
        a = add_document(records, "doc-a", ["Alpha one.", "Alpha two, with 'quotes' and 100% ?marks", "Ünïcode ✓"])
        b = add_document(records, "doc-b", ["Beta."])
        records.set_status("doc-a", "processed", elapsed_s=1.25)
        records.set_status("doc-b", "failed", error="bad file")
    seen = other.records
    docs = seen.documents()
    assert [d.doc_id for d in docs] == ["doc-a", "doc-b"] and [d.seq for d in docs] == [1, 2]
    assert [d.doc_id for d in seen.documents("processed")] == ["doc-a"]
    assert seen.document("doc-b").error == "bad file" and seen.document("missing") is None
    assert seen.document("doc-a").elapsed_s == 1.25
    assert abs(seen.document("doc-a").updated_at - time.time()) < 120  # a double, not a 4-byte real
    assert seen.document_text("doc-a") == "Alpha one. Alpha two, with 'quotes' and 100% ?marks Ünïcode ✓"
    assert seen.chunks_of("doc-a") == [Chunk(c.chunk_id, c.doc_id, c.order, c.text, c.tokens, c.start_token,
                                             windows=c.windows) for c in a]
    assert set(seen.chunks_by_id(["doc-b-c0", "doc-a-c2", "nope"])) == {"doc-b-c0", "doc-a-c2"}
    assert seen.all_chunk_ids() == [c.chunk_id for c in a + b]
    assert seen.count("chunks") == 4 and seen.count("documents") == 2
    assert seen.status_counts() == {"processed": 1, "failed": 1}
    assert seen.expected_vector_ids()["chunks"] == {  # one vector id per window
        "doc-a-c0", "doc-a-c1", "doc-a-c1#w1", "doc-a-c2", "doc-b-c0"}
    with records.unit_of_work():
        records.insert_chunks([Chunk("doc-b-c0", "doc-b", 0, "Beta, replaced.", 2, 0)])  # replace by key
        assert records.delete_chunks_of("doc-a") == ["doc-a-c0", "doc-a-c1", "doc-a-c2"]
        records.delete_document_row("doc-a")
    assert [d.doc_id for d in seen.documents()] == ["doc-b"]
    assert seen.chunks_of("doc-b")[0].text == "Beta, replaced." and seen.count("chunks") == 1


def test_meta_and_run_log(ws, other):
    records = ws.records
    with records.unit_of_work():
        records.set_meta("k", "one")
        records.set_meta("k", "two")
        records.log("event_x", {"b": 2, "a": 1})
        records.log("event_x", "plain")
        records.log("event_y", {"z": 0})
    assert other.records.get_meta("k") == "two" and other.records.get_meta("absent", "dflt") == "dflt"
    assert other.records.log_details("event_x") == ['{"a": 1, "b": 2}', "plain"]
    with records.unit_of_work():
        records.delete_meta("k")
    assert other.records.get_meta("k") == ""


# --- unit of work ---------------------------------------------------------------------------------
def test_rolled_back_unit_of_work_leaves_nothing(ws, other):
    records = ws.records
    with pytest.raises(RuntimeError, match="boom"):
        with records.unit_of_work():
            add_document(records, "doc-a", ["Alpha one.", "Alpha two."])
            records.insert_chunk_extraction("doc-a", "doc-a-c0", extraction([("Acme", "ORG")], [], {"acme": 1}))
            records.upsert_tree_node(TreeNode("t1", "doc", "doc-a", 1, 0, None, ["doc-a-c0"], ["doc-a-c0"], "s", 1))
            records.set_meta("partial", "yes")
            raise RuntimeError("boom")
    assert not records.in_unit_of_work()
    for view in (ws.records, other.records):
        assert view.documents() == [] and view.count("chunks") == 0 and view.tree_nodes() == []
        assert view.entity_fragments(["acme"])["acme"] == [] and view.get_meta("partial") == ""
    with records.unit_of_work():  # the store is usable again after the rollback
        add_document(records, "doc-b", ["Beta."])
    assert [d.doc_id for d in other.records.documents()] == ["doc-b"]


def test_readers_never_see_uncommitted_rows(ws, other):
    records = ws.records
    entered, release, seen = threading.Event(), threading.Event(), {}

    def write() -> None:
        with records.unit_of_work():
            add_document(records, "doc-a", ["Alpha."])
            entered.set()
            release.wait(30)

    writer = threading.Thread(target=write)
    writer.start()
    assert entered.wait(30)
    seen["during"] = [d.doc_id for d in other.records.documents()]
    release.set()
    writer.join(30)
    seen["after"] = [d.doc_id for d in other.records.documents()]
    assert seen == {"during": [], "after": ["doc-a"]}


# --- graph rows and the graph view --------------------------------------------------------------
def build_graph(ws):
    from core.indexing.remerge import merge_touched

    records = ws.records
    with records.unit_of_work():
        add_document(records, "doc-a", ["Acme hired Bob.", "Bob met Carol."])
        add_document(records, "doc-b", ["Carol founded Acme."])
        touched_e, touched_r = set(), set()
        for doc, chunk, ents, rels, terms in [
            ("doc-a", "doc-a-c0", [("Acme", "ORG"), ("Bob", "PERSON")], [("Acme", "Bob", 1.0)],
             {"acme": 1, "bob": 2}),
            ("doc-a", "doc-a-c1", [("Bob", "PERSON"), ("Carol", "PERSON")], [("Carol", "Bob", 2.0)],
             {"bob": 1, "carol": 1}),
            ("doc-b", "doc-b-c0", [("Carol", "PERSON"), ("Acme", "ORG")], [("Carol", "Acme", 0.5)],
             {"acme": 1, "carol": 3}),
        ]:
            e, r = records.insert_chunk_extraction(doc, chunk, extraction(ents, rels, terms))
            touched_e |= e
            touched_r |= r
        merge_touched(ws, touched_e, touched_r)
        ws.bump_generation()
    return touched_e, touched_r


def test_fragments_merged_graph_and_graph_view(ws, other):
    touched_e, touched_r = build_graph(ws)
    assert touched_e == {"acme", "bob", "carol"} and touched_r == {("acme", "bob"), ("bob", "carol"), ("acme", "carol")}
    records = other.records
    frags = records.entity_fragments(["bob"])["bob"]
    assert [f.chunk_id for f in frags] == ["doc-a-c0", "doc-a-c1"] and frags[0].type_votes == {"PERSON": 1}
    assert [f.weight for f in records.relation_fragments([("bob", "carol")])[("bob", "carol")]] == [2.0]
    graph = other.views.graph
    assert len(graph) == 3 and sorted(graph.keys()) == ["acme", "bob", "carol"] and graph.relation_count() == 3
    bob = graph.entity("bob")
    assert (bob.name, bob.type, bob.source_chunk_ids) == ("Bob", "PERSON", ("doc-a-c0", "doc-a-c1"))
    assert graph.name("bob") == "Bob" and graph.name("nobody") == "nobody" and "nobody" not in graph
    relation = graph.relation("carol", "bob")
    assert relation.pair == ("bob", "carol") and relation.weight == 2.0 and relation.source_chunk_ids == ("doc-a-c1",)
    assert sorted(graph.neighbours("acme")) == ["bob", "carol"] and graph.degree("acme") == 2
    assert set(graph.adjacency("carol")) == {"acme", "bob"} and graph.has_relation("acme", "carol")
    assert graph.alias_owner("acme") is None  # an alias that is its own key is left out
    assert other.mention_index()["carol"] == {"doc-a-c1": 1, "doc-b-c0": 3}
    mention = other.mention_graph()
    assert mention["acme"]["bob"]["weight"] == 1 and mention.number_of_nodes() == 3
    sentences = records.chunk_sentences(["doc-a-c1"])["doc-a-c1"]
    assert sentences[0] == ("Bob appears here.", [["ORG", "Bob", "bob"]])
    with ws.records.unit_of_work():  # removing a chunk's contributions, as a deletion does
        removed_e, removed_r = ws.records.remove_chunks(["doc-b-c0"])
        ws.bump_generation()
    assert removed_e == {"acme", "carol"} and removed_r == {("acme", "carol")}
    assert other.records.entity_fragments(["carol"])["carol"][0].chunk_id == "doc-a-c1"
    assert "carol" in other.mention_index() and "doc-b-c0" not in other.mention_index()["carol"]



def test_graph_edits_and_their_log(ws, other):
    """A merge re-keys, unites and drops the self-loop; the log round-trips; undo restores the graph
    (core.editing through the edit rows of the record store)."""
    from core.editing.log import make_edit, undo

    build_graph(ws)
    before = dump(other)
    result = make_edit(ws, "merge", {"names": ["CAROL"], "into": "bob"}, who="ana")
    graph = other.views.graph
    assert sorted(graph.keys()) == ["acme", "bob"] and graph.relation_count() == 1
    bob = graph.entity("bob")
    assert bob.name == "Bob" and "Carol" in bob.aliases and set(bob.source_chunk_ids) == {"doc-a-c0", "doc-a-c1", "doc-b-c0"}
    assert graph.relation("acme", "bob").weight == 1.5  # Acme-Bob 1.0 + Carol-Acme 0.5 (fragments)
    assert result.summary["dropped_self_loops"] == 1
    [edit] = other.records.graph_edits()
    assert (edit.op, edit.args, edit.principal, edit.undone) == ("merge", {"into": "bob", "names": ["CAROL"]}, "ana", False)
    assert edit.before["carol"]["relations"] == 2
    undo(ws)
    assert dump(other) == before and other.records.graph_edits()[0].undone
    assert other.records.graph_edits(include_undone=False) == []
    with ws.records.unit_of_work():
        assert ws.records.set_edit_undone(edit.id, False) == 1 and ws.records.set_edit_undone(999, True) == 0
        assert ws.records.fragment_pairs_touching(["carol"]) == {("acme", "carol"), ("bob", "carol")}
        assert ws.records.relation_row(("acme", "bob"))["weight"] == 1.0

def test_summary_tree_round_trip(ws, other):
    records = ws.records
    with records.unit_of_work():
        add_document(records, "doc-a", ["One.", "Two."])
        records.upsert_tree_node(TreeNode("corpus-1", "corpus", None, 2, 0, None, ["doc-node"], ["doc-a-c0", "doc-a-c1"],
                                          "corpus summary", 2, "v-corpus"))
        records.upsert_tree_node(TreeNode("doc-node", "doc", "doc-a", 1, 0, None, ["doc-a-c0", "doc-a-c1"],
                                          ["doc-a-c0", "doc-a-c1"], "doc summary", 2, "v-doc"))
        records.set_tree_parent("doc-node", "corpus-1")
        records.set_doc_root("doc-a", "doc-node", "corpus-1")
    nodes = other.records.tree_nodes()
    assert [n.node_id for n in nodes] == ["corpus-1", "doc-node"]
    assert nodes[1].parent_id == "corpus-1" and nodes[1].child_ids == ["doc-a-c0", "doc-a-c1"]
    assert other.records.tree_nodes(scope="doc", doc_id="doc-a")[0].text == "doc summary"
    assert other.records.doc_roots() == {"doc-a": ("doc-node", "corpus-1")}
    assert other.records.expected_vector_ids()["tree"] == {"v-corpus", "v-doc"}
    with records.unit_of_work():
        records.delete_tree_nodes(["doc-node"])
        records.delete_doc_root("doc-a")
    assert [n.node_id for n in other.records.tree_nodes()] == ["corpus-1"] and other.records.doc_roots() == {}


# --- annotations and the LLM cache -----------------------------------------------------------------
def test_annotations_round_trip(ws, other):
    from core.annotations import annotations, delete_questions, save_marks

    records = ws.records
    with records.unit_of_work():
        add_document(records, "doc-a", ["One.", "Two."])
    stored = save_marks(ws, "Who  hired Bob?", {"doc-a-c0": True, "doc-a-c1": False}, mode="local", answer="Acme")
    assert [m.chunk_id for m in stored.relevant] == ["doc-a-c0"] and stored.answer == "Acme"
    with pytest.raises(ValueError, match="not in this workspace"):
        save_marks(ws, "Who hired Bob?", {"doc-a-c0": None, "ghost": True})  # nothing written
    seen = annotations(other)
    assert [(q.question, q.answer, [(m.chunk_id, m.relevant, m.mode) for m in q.marks]) for q in seen] == [
        ("Who hired Bob?", "Acme", [("doc-a-c0", True, "local"), ("doc-a-c1", False, "local")])]
    assert delete_questions(other, [seen[0].qid]) == 1 and annotations(ws) == []


def test_annotation_store_port(ws, other):
    from core.storage.ports import AnnotationStore, AnnotationWriter

    with ws.records.unit_of_work():
        add_document(ws.records, "doc-a", ["One.", "Two."])
        add_document(ws.records, "doc-b", ["Three."])
    store, seen = ws.annotations, other.annotations
    assert isinstance(store, AnnotationStore)
    with pytest.raises(RuntimeError, match="abandoned"):
        with store.edit() as edit:  # a failed edit writes nothing at all
            assert isinstance(edit, AnnotationWriter)
            edit.upsert_question("q1", "First?", "yes", 1.0)
            edit.write_mark("q1", "doc-a-c0", "doc-a", True, "naive", 1.0)
            raise RuntimeError("abandoned")
    assert seen.questions() == []
    with store.edit() as edit:
        assert edit.chunk_docs(["doc-b-c0", "ghost", "doc-a-c1", "doc-b-c0"]) == {"doc-b-c0": "doc-b",
                                                                                 "doc-a-c1": "doc-a"}
        edit.upsert_question("q1", "First?", None, 1.0)
        edit.write_mark("q1", "doc-a-c1", "doc-a", False, "local", 2.0)
        edit.write_mark("q1", "doc-a-c0", "doc-a", True, "naive", 3.0)
        edit.upsert_question("q2", "Second? 100% 'quoted'", "an answer ✓", 2.0)
        edit.write_mark("q2", "doc-b-c0", "doc-b", True, "mix", 2.5)
        edit.upsert_question("q3", "Left bare?", None, 3.0)
        assert edit.prune() == 1  # q3: no mark, no answer
    q1, q2 = seen.questions()
    assert (q1.qid, q1.question, q1.answer, q2.question, q2.answer) == (
        "q1", "First?", "", "Second? 100% 'quoted'", "an answer ✓")
    assert [(m.chunk_id, m.relevant, m.mode) for m in q1.marks] == [("doc-a-c0", True, "naive"),
                                                                    ("doc-a-c1", False, "local")]
    assert [m.chunk_id for m in seen.questions("q2")[0].marks] == ["doc-b-c0"] and seen.questions("nope") == []
    with store.edit() as edit:
        edit.write_mark("q1", "doc-a-c1", "doc-a", True, "import", 4.0, keep_mode=True)  # flips, keeps its mode
        edit.delete_mark("q1", "doc-a-c0")
        edit.upsert_question("q2", "Second? 100% 'quoted'", "", 5.0)  # the answer is cleared
    assert [(m.chunk_id, m.relevant, m.mode) for m in seen.questions("q1")[0].marks] == [("doc-a-c1", True, "local")]
    assert seen.questions("q2")[0].answer == ""
    with pytest.raises(RuntimeError):
        with ws.records.unit_of_work():  # a deletion that fails keeps the document's marks
            assert ws.records.drop_document_annotations("doc-b") == 1
            raise RuntimeError("deletion fails")
    assert len(seen.questions("q2")[0].marks) == 1
    with ws.records.unit_of_work():
        assert ws.records.drop_document_annotations("doc-b") == 1  # and q2, left bare, goes with it
    assert [q.qid for q in seen.questions()] == ["q1"]
    with store.edit() as edit:
        assert edit.delete_question("q1") == 1 and edit.delete_question("q1") == 0
    assert seen.questions() == [] and store.questions() == []


def test_llm_cache_and_usage(ws, other):
    from core.storage.records import CachedReply

    cache = ws.open_llm_cache()
    with pytest.raises(RuntimeError):
        with ws.records.unit_of_work():  # a cache write inside a rolled-back batch is kept
            cache.put("k1", CachedReply("answer ✓", 12, 3))
            raise RuntimeError("batch fails")
    cache.add_usage("extraction", 2, 1, 30, 7, 0.5)
    cache.add_usage("extraction", 1, 0, 10, 3, 0.25)
    assert cache.flush()
    reader = other.open_llm_cache()
    assert reader.get("k1") == CachedReply("answer ✓", 12, 3) and reader.get("k2") is None
    assert other.llm_usage() == {"extraction": {"calls": 3, "cached": 1, "prompt_tokens": 40, "completion_tokens": 10,
                                                "seconds": 0.75}}


# --- the same index on both backends --------------------------------------------------------------
def dump(ws) -> dict:
    """Every record of a workspace, as plain data (what the two backends must agree on)."""
    records = ws.records
    docs = records.documents()
    graph = ws.views.graph
    return {
        "documents": [(d.doc_id, d.name, d.content_hash, d.tokens, d.status, d.seq) for d in docs],
        "chunks": {d.doc_id: [(c.chunk_id, c.text, c.tokens, c.windows) for c in records.chunks_of(d.doc_id)] for d in docs},
        "entities": [(k, graph.entity(k)) for k in graph.keys()],
        "relations": sorted((k, n, dict(a)) for k in graph.keys() for n, a in graph.adjacency(k).items()),
        "fragments": records.entity_fragments(list(graph.keys())),
        "mentions": ws.mention_index(),
        "mention_edges": sorted((a, b, d["weight"]) for a, b, d in ws.mention_graph().edges(data=True)),
        "tree": records.tree_nodes(), "roots": records.doc_roots(),
        "sentences": records.chunk_sentences(records.all_chunk_ids()),
        "vectors": {c: sorted(ids) for c, ids in records.expected_vector_ids().items()},
    }


def retrieved(ws, questions: list[str]) -> dict:
    """What every mode retrieves for each question, in order and with scores."""
    from core.retrieval.registry import query_context
    from core.retrieval.registry import modes, retrieve

    out = {}
    for mode in modes():
        for question in questions:
            r = retrieve(query_context(ws, question), mode)
            out[(mode, question)] = ([(c.chunk_id, c.score) for c in r.chunks], [(e.key, e.score) for e in r.entities],
                                     [(x.source_key, x.target_key, x.score) for x in r.relations],
                                     [(tuple(p.keys), p.score) for p in r.paths],
                                     [(x.node_id, x.score) for x in r.summaries], r.context_text)
    return out


@pytest.mark.slow
def test_same_index_and_same_retrieval_on_both_backends(tmp_path, pg_store):
    from conftest import sample_sources
    from core.evaluation.questions import load_questions
    from core.indexing.pipeline import process_pending, register_documents

    sources, _ = sample_sources()
    sources = sorted(sources, key=lambda s: s.name)[:3]
    questions = [q.question for q in load_questions(ROOT / "data" / "sample_questions.jsonl")][:6]
    dumps, results = {}, {}
    for name, spec in (("sqlite", "sqlite"), ("postgresql", pg_store)):
        workspace = open_ws(tmp_path / name, spec)
        with workspace.writer():
            register_documents(workspace, sources, [])
            report = process_pending(workspace)
        assert report.processed == 3 and not report.failed
        dumps[name] = dump(workspace)
        results[name] = retrieved(workspace, questions)
        workspace.close()
    assert dumps["sqlite"]["entities"] and dumps["sqlite"]["tree"]
    for part in dumps["sqlite"]:
        assert dumps["postgresql"][part] == dumps["sqlite"][part], part
    assert any(r[0] for r in results["sqlite"].values())  # modes did retrieve chunks
    differ = [key for key in results["sqlite"] if results["sqlite"][key] != results["postgresql"][key]]
    assert differ == []


@pytest.mark.slow
def test_delete_readd_and_a_failing_batch(ws):
    from conftest import sample_sources
    from core.indexing.deletion import delete_documents
    from core.indexing.pipeline import SpacyExtractor, process_pending, register_documents
    from core.indexing.reconcile import reconcile
    from core.types import SourceDocument

    class Exploding(SpacyExtractor):
        def extract(self, texts):
            if any("KABOOM" in t for t in texts):
                raise RuntimeError("extractor crashed on KABOOM")
            return super().extract(texts)

    sources = sorted(sample_sources()[0], key=lambda s: s.name)[:3]
    with ws.writer():
        register_documents(ws, sources, [])
        assert process_pending(ws).processed == 3
    before = dump(ws)
    doc = next(d for d in ws.records.documents() if d.name == sources[1].name)
    with ws.writer():
        delete_documents(ws, [doc.doc_id])
    assert [d.name for d in ws.records.documents()] == [sources[0].name, sources[2].name]
    assert ws.records.chunks_of(doc.doc_id) == [] and ws.records.tree_nodes(doc_id=doc.doc_id) == []
    assert reconcile(ws) == {}  # the vectors went with the rows
    with ws.writer():
        register_documents(ws, [sources[1]], [])
        assert process_pending(ws).processed == 1
    after = dump(ws)
    # the re-added document comes last in corpus order, so merged descriptions may read in another order;
    # what it contributed must be back in full
    assert [k for k, _ in after["entities"]] == [k for k, _ in before["entities"]]
    assert [r[:2] for r in after["relations"]] == [r[:2] for r in before["relations"]]
    for part in ("mentions", "mention_edges"):
        assert after[part] == before[part], part
    assert after["vectors"]["chunks"] == before["vectors"]["chunks"]  # merged rows' ids follow their text
    assert {c: len(v) for c, v in after["vectors"].items()} == {c: len(v) for c, v in before["vectors"].items()}
    assert sorted(map(sorted, after["chunks"].values())) == sorted(map(sorted, before["chunks"].values()))
    with ws.writer():  # one document fails: it alone is marked failed, the other is indexed
        register_documents(ws, [SourceDocument("bad.md", "KABOOM breaks the extractor."),
                                SourceDocument("good.md", "Tobias Wren inspected the breakwater at Port Sallow.")])
        report = process_pending(ws, extractor=Exploding(ws.settings.entity_types), batch_tokens=1)
    assert report.processed == 1 and [f["name"] for f in report.failed] == ["bad.md"]
    status = {d.name: d.status for d in ws.records.documents()}
    assert status["bad.md"] == "failed" and status["good.md"] == "processed"
    assert ws.records.chunks_of(next(d.doc_id for d in ws.records.documents() if d.name == "bad.md")) == []
    assert reconcile(ws) == {}
