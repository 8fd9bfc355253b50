"""The library's front door for the app, the CLI and scripts: one call per user action, one module per task.

Every public function takes the caller's ``core.auth.Principal`` first and declares its minimum role
with ``@requires`` (``core.auth``): viewer functions browse, query, compare, inspect, evaluate and export;
editor functions upload, index, delete documents and annotate; admin functions change settings and
create or delete workspaces. A caller below the role gets ``PermissionDeniedError`` before anything
runs; a function with a ``ws`` parameter also checks that the caller may open that workspace. The CLI
and the local single-user app pass ``core.auth.LOCAL_ADMIN``. tests/test_auth.py holds the table of
every function with its role.

=====================  ==============================================================================
module                 task
=====================  ==============================================================================
``indexing``           upload, index, delete, retry, resume; the sample corpus; loading the embedder
``querying``           the mode list (names, one-line help, parameters), running modes, streaming an answer
``workspaces``         list, open, create, delete a workspace; its settings, store, status and generation
``corpus``             documents, chunks and summary trees as indexed
``graphs``             the entity and mention graphs, the Knowledge graph page's reads, provenance, export
``evaluation``         evidence recall per mode, the LLM judge and its cost
``annotations``        relevance marks: read, save, delete, export, import
``editing``            hand edits of the knowledge graph, their log, undo, export, import, merge suggestions
``importing``          a LightRAG working directory (uploaded, or on the server for admins)
``models``             the chat model, checking a chat server, warming the models up
=====================  ==============================================================================

Import from ``core.api`` itself, never from its modules. It also re-exports the records its functions
take and return (``Workspace``, ``DocumentRow``, ``TreeNode``, ``Chunk``, ``IndexReport``, ``EvalReport``,
``JudgeReport``…), so that the pages and ``ui/`` name them from here. The records of modules that
``core.api`` does not load itself (the evaluation runner, the judge, the LLM client, the importer, the
graph page) are resolved on first use: importing ``core.api`` loads no retrieval and no LLM client.

The rule for ``pages/``, ``ui/`` and ``app.py`` (tests/test_front_door.py): from ``core`` they import
``core.api``, and otherwise only modules that cannot reach a workspace — modules whose imports, followed
all the way (``if TYPE_CHECKING:`` ones included), never reach ``core.workspace``, ``core.session``,
``core.storage`` (beyond its port records, ``core.storage.ports``), ``core.indexing``, ``core.retrieval``
or ``core.answers``: settings, errors, roles, records, question files, token counts, provider allowlists.
Anything that opens, reads or changes a workspace, runs a mode or names a mode goes through here.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from core.api.annotations import (annotation_for, annotation_list, delete_annotations, export_annotations,
                                  import_annotations, question_id, save_annotation_marks)
from core.api.corpus import (all_chunk_ids, chunk_count, chunks_by_id, chunks_of, doc_names, doc_roots, documents,
                             documents_table, dropped_records, position_gaps, readable_summary, source_view,
                             tree_index)
from core.api.editing import (delete_entities, dismiss_junk, dismiss_merge_suggestion, edit_graph, edit_question_diff,
                              evaluate_edits, export_graph_edits, graph_edits, import_graph_edits, junk_suggestions,
                              merge_suggestions, undo_graph_edit)
from core.api.evaluation import estimate_judge_cost, evaluate, question_limit, router_rows, run_judge, train_router
from core.api.graphs import (graph_bytes, graph_edge, graph_node, graph_part_origins, graph_provenance, graph_selection,
                             graph_summary, knowledge_graph, mention_chunks, mention_graph, mention_index)
from core.api.importing import import_lightrag, import_lightrag_from_server, server_import_dirs, server_import_root
from core.api.indexing import (cancel_indexing, delete, index_pending, index_sources, index_text, index_uploads, load_embedder, reindex,
                               resume, retry, sample_paths)
from core.api.models import chat_model, check_llm_connection, warm_up
from core.api.querying import mode_help, mode_names, mode_params, run_modes, stream_answer
from core.api.workspaces import (create_workspace, delete_workspace, embedder_setting, generation, open_workspace, refresh_vectors,
                                 save_workspace_settings, session_workspace, status, store_description,
                                 workspace_names, workspace_path, writer_active)
from core.indexing.pipeline import IndexReport
from core.storage.records import AnnotatedQuestion, GraphEdit
from core.storage.records import DocumentRow, TreeNode
from core.types import Chunk, RetrievalResult
from core.workspace import Workspace

if TYPE_CHECKING:
    from core.annotations.exchange import ImportReport as AnnotationImportReport
    from core.editing.log import EditResult, ImportReport as EditImportReport
    from core.editing.impact import EditImpact
    from core.editing.junk import JunkNode
    from core.editing.question_diff import QuestionDiff
    from core.editing.suggest import Suggestion as MergeSuggestion
    from core.evaluation.questions import Question
    from core.evaluation.runner import EvalReport
    from core.graph_page import EdgeDetail, GraphSelection, GraphSummary, NodeDetail
    from core.importers.lightrag.importer import ImportReport as LightRAGImportReport
    from core.judge.report import JudgeReport
    from core.llm.cache import UsageCounter

# Records resolved on first use (their modules load retrieval, the LLM client or the importer):
# name here -> (module, name there). The ``if TYPE_CHECKING:`` block above names the same ones.
LAZY_RECORDS: dict[str, tuple[str, str]] = {
    "AnnotationImportReport": ("core.annotations.exchange", "ImportReport"),
    "EditResult": ("core.editing.log", "EditResult"),
    "EditImportReport": ("core.editing.log", "ImportReport"),
    "MergeSuggestion": ("core.editing.suggest", "Suggestion"),
    "EditImpact": ("core.editing.impact", "EditImpact"),
    "QuestionDiff": ("core.editing.question_diff", "QuestionDiff"),
    "JunkNode": ("core.editing.junk", "JunkNode"),
    "Question": ("core.evaluation.questions", "Question"),
    "EvalReport": ("core.evaluation.runner", "EvalReport"),
    "EdgeDetail": ("core.graph_page", "EdgeDetail"),
    "GraphSelection": ("core.graph_page", "GraphSelection"),
    "GraphSummary": ("core.graph_page", "GraphSummary"),
    "NodeDetail": ("core.graph_page", "NodeDetail"),
    "SourceView": ("core.source_view", "SourceView"),
    "LightRAGImportReport": ("core.importers.lightrag.importer", "ImportReport"),
    "JudgeReport": ("core.judge.report", "JudgeReport"),
    "UsageCounter": ("core.llm.cache", "UsageCounter"),
}

if not TYPE_CHECKING:  # the type checker reads the imports above; at run time a lazy record loads here
    def __getattr__(name: str) -> Any:
        if name not in LAZY_RECORDS:
            raise AttributeError(f"module 'core.api' has no attribute {name!r}")
        module, attribute = LAZY_RECORDS[name]
        value = getattr(importlib.import_module(module), attribute)
        globals()[name] = value
        return value

FUNCTIONS = [
    # indexing
    "index_pending", "index_sources", "index_uploads", "index_text", "sample_paths", "delete", "retry", "resume", "reindex",
    "load_embedder", "cancel_indexing",
    # querying
    "mode_names", "mode_help", "mode_params", "run_modes", "stream_answer",
    # workspaces
    "workspace_names", "workspace_path", "open_workspace", "session_workspace", "create_workspace",
    "delete_workspace", "save_workspace_settings", "store_description", "status", "generation", "writer_active",
    "refresh_vectors", "embedder_setting",
    # corpus
    "documents", "doc_names", "documents_table", "dropped_records", "position_gaps", "source_view", "chunk_count", "chunks_of", "chunks_by_id",
    "all_chunk_ids", "doc_roots", "tree_index", "readable_summary",
    # graphs
    "knowledge_graph", "mention_graph", "mention_index", "graph_bytes", "graph_summary", "graph_selection",
    "graph_node", "graph_edge", "mention_chunks", "graph_provenance", "graph_part_origins",
    # evaluation
    "evaluate", "question_limit", "run_judge", "estimate_judge_cost", "router_rows", "train_router",
    # annotations
    "annotation_for", "annotation_list", "question_id", "export_annotations", "save_annotation_marks",
    "delete_annotations", "import_annotations",
    # editing
    "edit_graph", "graph_edits", "undo_graph_edit", "export_graph_edits", "import_graph_edits",
    "merge_suggestions", "dismiss_merge_suggestion", "evaluate_edits", "edit_question_diff",
    "junk_suggestions", "dismiss_junk", "delete_entities",
    # importing
    "import_lightrag", "server_import_root", "server_import_dirs", "import_lightrag_from_server",
    # models
    "chat_model", "check_llm_connection", "warm_up",
]
RECORDS = ["Workspace", "DocumentRow", "TreeNode", "Chunk", "RetrievalResult", "IndexReport", "AnnotatedQuestion",
           "GraphEdit", *LAZY_RECORDS]
__all__ = [*FUNCTIONS, *RECORDS]
