"""A no-op re-index (``python -m core index`` on sources already indexed) makes its hash check first and
loads nothing: no embedding model, spaCy, ChromaDB or LLM client; the generation does not move. Its
quick vector check reads an embedded store's counts from the ChromaDB file, and those counts are the
ones ChromaDB itself reports, so a lost vector is still noticed and re-embedded."""
from __future__ import annotations

import json
import shutil

from conftest import SAMPLES, sample_sources
from test_cli_readonly import run_cli


def test_a_no_op_index_run_loads_no_model_and_moves_nothing(sample_workspace_dir, tmp_path):
    from core.workspace import Workspace

    path = tmp_path / "ws"
    shutil.copytree(sample_workspace_dir, path)
    ws = Workspace(path)
    generation, status = ws.generation(), ws.status()
    ws.close()
    result = run_cli("index", "--workspace", str(path), "--json", "--quiet", str(SAMPLES))
    assert result["code"] == 0 and result["heavy"] == [], result
    report = json.loads(result["stdout"])
    assert report["unchanged"] == 11 and report["processed"] == 0 and report["new_documents"] == 0
    heavy_llm = run_cli("index", "--workspace", str(path), "--quiet", "--llm-base-url", "http://127.0.0.1:9/v1",
                        "--llm-model", "m", str(SAMPLES))  # an LLM configured (and unreachable): never built
    assert heavy_llm["code"] == 0 and heavy_llm["heavy"] == []
    ws = Workspace(path)
    try:
        assert ws.generation() == generation and ws.status() == status
    finally:
        ws.close()


def test_the_hash_check_sees_a_changed_source_and_a_pending_document(sample_ws_copy):
    from core.indexing.pipeline import nothing_to_index
    from core.types import SourceDocument

    sources, _ = sample_sources()
    assert nothing_to_index(sample_ws_copy, sources)
    changed = [SourceDocument(name=sources[0].name, text=sources[0].text + "\nOne more line.", source=sources[0].source)]
    assert not nothing_to_index(sample_ws_copy, sources[1:] + changed)
    first = sample_ws_copy.records.documents()[0]
    with sample_ws_copy.records.unit_of_work():
        sample_ws_copy.records.set_status(first.doc_id, "pending")
    assert not nothing_to_index(sample_ws_copy, sources)


def test_file_counts_are_chromas_counts_and_a_lost_vector_is_re_embedded(sample_ws_copy):
    from core.indexing.reconcile import quick_counts, reconcile
    from core.storage.chroma_counts import embedded_counts
    from core.storage.vectors import COLLECTIONS
    from core.workspace import Workspace

    ws = sample_ws_copy
    counts = quick_counts(ws, list(COLLECTIONS))
    assert counts == {c: ws.vectors.count(c) for c in COLLECTIONS} and all(counts.values())
    assert embedded_counts(ws.path / "missing", "ns", COLLECTIONS) is None
    lost = sorted(ws.vectors.all_ids("chunks"))[0]
    ws.vectors.delete("chunks", [lost])
    path = ws.path
    ws.close()
    again = Workspace(path)
    try:
        assert quick_counts(again, ["chunks"]) == {"chunks": counts["chunks"] - 1}
        assert reconcile(again, quick=True) == {"chunks": {"removed": 0, "added": 1}}
        assert quick_counts(again, list(COLLECTIONS)) == counts
    finally:
        again.close()
