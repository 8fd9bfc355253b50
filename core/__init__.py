"""RAGScope core library: graph-based RAG indexes (LightRAG, E2GraphRAG, PathRAG) and their retrieval modes.

Plain Python, no Streamlit. Entry points: ``core.api`` (one call per user action),
``core.workspace.Workspace`` and ``python -m core``. Importing ``core`` sets the process
environment once (``core.config.apply_process_environment``: offline models, no telemetry).
"""
from core.config import apply_process_environment as _apply_process_environment

_apply_process_environment()
