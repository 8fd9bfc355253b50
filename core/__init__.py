"""RAGScope core library: graph-based RAG indexes (LightRAG, E2GraphRAG, PathRAG) and their retrieval modes.

Plain Python, no Streamlit. Entry points: ``core.workspace.Workspace`` and ``python -m core``.
"""
import os as _os

_os.environ.setdefault("HF_HUB_OFFLINE", "1")
_os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
_os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
_os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
