"""Open a LightRAG working directory (lightrag-hku 1.5.7, default file storages) as a RAGScope workspace.

``import_lightrag(ws, directory)`` reads it (``reader``), maps its records (``mapping``), and writes them
through the workspace's storage (``writer``, the one module that touches storage) in one transaction
(``importer``); re-importing applies only the difference. docs/lightrag-import.md describes what comes over.
"""
from core.importers.lightrag.importer import (ImportReport, LightRAGImportError, check_vector_reuse, import_lightrag,
                                              part_origins, provenance)
from core.importers.lightrag.reader import LightRAGFormatError, LightRAGIndex, read_index

__all__ = ["ImportReport", "LightRAGFormatError", "LightRAGImportError", "LightRAGIndex", "check_vector_reuse",
           "import_lightrag", "part_origins", "provenance", "read_index"]
