"""Human labels of the settings fields: the names the Settings page shows, which the settings
validator (``core.settings.validate_settings``) also uses in its messages, so that an error names the
field the way the user sees it ("Chat model", not ``llm_model``).

A label names what the value is, with its paper symbol where the papers use one (k, g, h, N, K, α,
θ). A field without an entry falls back to its name with spaces (``label_for``), so a new setting
still shows up.
"""
from __future__ import annotations

LABELS: dict[str, str] = {
    "provider": "Provider",
    "llm_base_url": "Server URL",
    "llm_model": "Chat model",
    "llm_temperature": "Temperature",
    "llm_max_tokens": "Max completion tokens per call",
    "llm_timeout_s": "Request timeout (seconds)",
    "llm_max_retries": "Retries per request",
    "llm_context_tokens": "Model context window (tokens; 0 = ask the server)",
    "llm_concurrency": "Parallel LLM calls while indexing",
    "embedder": "Embedder",
    "embedding_base_url": "Embeddings server URL",
    "embedding_model": "Embedding model",
    "embedding_batch_size": "Texts per embedding batch",
    "embedding_concurrency": "Parallel embedding requests",
    "embedding_timeout_s": "Embedding request timeout (seconds)",
    "embedding_max_retries": "Retries per embedding request",
    "chroma_url": "ChromaDB server URL",
    "vector_search": "Vector search",
    "chunk_vector_windows": "Embed long chunks as windows",
    "chunk_tokens": "Chunk size (tokens)",
    "chunk_overlap": "Chunk overlap (tokens)",
    "tree_group_size": "Children per summary node (g)",
    "tree_summary_similarity": "Sentence similarity for summaries",
    "summary_tokens": "Summary length (tokens)",
    "entity_types": "Entity types to extract",
    "profile_max_fragments": "Summarise a profile from this many fragments",
    "profile_max_tokens": "Summarise a profile longer than (tokens)",
    "profile_summary_tokens": "Summarised profile length (tokens)",
    "gleaning_passes": "Gleaning passes (LLM)",
    "max_document_mb": "Largest document (MB)",
    "max_documents_per_upload": "Most documents per upload",
    "max_document_pages": "Most pages per PDF",
    "max_document_chars": "Most characters per document",
    "max_archive_uncompressed_mb": "Largest expanded content (MB)",
    "max_archive_ratio": "Largest expansion ratio (x)",
    "max_archive_entries": "Most zip members per DOCX",
    "max_eval_questions": "Most questions per evaluation",
    "parse_cpu_seconds": "Parser CPU time per file (seconds)",
    "parse_memory_mb": "Parser memory (MB)",
    "parse_timeout_s": "Parser time per file (seconds)",
    "naive_top_k": "naive: chunks retrieved (k)",
    "lightrag_top_k": "Entities / relations retrieved (top k)",
    "cosine_threshold": "Minimum cosine similarity",
    "chunks_per_entity": "Source chunks per entity",
    "max_entity_tokens": "Entities section budget (tokens)",
    "max_relation_tokens": "Relations section budget (tokens)",
    "max_total_tokens": "Whole context budget (tokens)",
    "paper_strict": "Follow the papers strictly (no RAGScope choices)",
    "seed_relative_cutoff": "Seed cut-off relative to the best hit",
    "tree_top_k": "Results returned (k)",
    "tree_hops": "Nodes on the shortest path (h)",
    "path_top_nodes": "Nodes retrieved (N)",
    "path_top_paths": "Paths kept (K)",
    "path_alpha": "Resource decay (α)",
    "path_theta": "Pruning threshold (θ)",
    "path_max_hops": "Longest path (edges)",
    "path_max_expansions": "Partial paths explored per start node (cap)",
    "answer_sentences": "Lines in an extractive answer",
    "short_document_chunk_tokens": "Chunk size of short documents (tokens)",
    "short_document_tokens": "Short document: at most (tokens)",
    "version": "Settings version",
}


def label_for(field: str) -> str:
    """The human label of a settings field (its name with spaces when it has none yet)."""
    return LABELS.get(field) or field.replace("_", " ").capitalize()
