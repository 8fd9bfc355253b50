"""Issue 38, item 3: a LightRAG import's GraphML and JSON files are parsed in the parsing worker under
the workspace's parsing limits (``core.importers.lightrag.reader.read_index_isolated``), like uploaded
documents: a graph that expands past ``parse_memory_mb`` is refused with the limit named and the app's
process does not grow; format errors still name the file; a valid directory reads the same as in process.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import psutil
import pytest

from core.importers.lightrag import reader
from core.importers.lightrag.reader import LightRAGFormatError, read_index, read_index_isolated
from core.parsing.limits import ParseLimits

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "lightrag"


def test_the_worker_reads_a_directory_as_the_process_does():
    folder = FIXTURES / "ainsert"
    assert read_index_isolated(folder) == read_index(folder)


def test_a_format_error_in_the_worker_names_the_file(tmp_path):
    folder = tmp_path / "lr"
    shutil.copytree(FIXTURES / "ainsert", folder)
    (folder / "kv_store_text_chunks.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(LightRAGFormatError, match="kv_store_text_chunks.json: JSON nested too deeply"):
        read_index_isolated(folder)


def test_a_bad_workspace_name_is_refused_before_the_worker(tmp_path, monkeypatch):
    def never(*_args, **_kwargs):
        raise AssertionError("the worker was asked")

    monkeypatch.setattr("core.parsing.worker.call_isolated", never)
    with pytest.raises(LightRAGFormatError, match="not a LightRAG workspace name"):
        read_index_isolated(FIXTURES / "ainsert", "../elsewhere")


def _expanding_graphml(path: Path, nodes: int) -> None:
    """A GraphML of ``nodes`` tiny nodes: about 60 bytes each on disk, far more once parsed."""
    with open(path, "w", encoding="utf-8") as out:
        out.write('<?xml version="1.0" encoding="utf-8"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
                  '<key id="d0" for="node" attr.name="entity_id" attr.type="string" />\n'
                  '<graph edgedefault="undirected">\n')
        block = 10_000
        for start in range(0, nodes, block):
            out.write("".join(f'<node id="n{i}"><data key="d0">n{i}</data></node>\n'
                              for i in range(start, min(nodes, start + block))))
        out.write("</graph>\n</graphml>\n")


@pytest.mark.slow
def test_a_graphml_that_expands_is_refused_by_the_workers_memory_limit(tmp_path):
    folder = tmp_path / "lr"
    shutil.copytree(FIXTURES / "ainsert", folder)
    graph = folder / reader.GRAPH_FILE
    _expanding_graphml(graph, 1_500_000)
    assert graph.stat().st_size < reader.MAX_IMPORT_FILE_BYTES  # not the size cap: the parse itself
    rss_before = psutil.Process().memory_info().rss
    with pytest.raises(LightRAGFormatError) as refused:
        read_index_isolated(folder, limits=ParseLimits(parse_memory_mb=400, parse_cpu_seconds=120,
                                                        parse_timeout_s=300))
    message = str(refused.value)
    assert "400 MB memory limit" in message and "`parse_memory_mb`" in message, message
    assert psutil.Process().memory_info().rss - rss_before < 100 * 2**20  # the parse was the worker's
    assert read_index_isolated(FIXTURES / "ainsert").documents  # the next import gets a fresh worker
