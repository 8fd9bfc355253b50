"""RAGScope settings: one pydantic model whose field descriptions double as the UI help text.

Settings live in ``<workspace>/settings.json`` (never containing secrets). API keys are read
from the environment (``OPENAI_API_KEY``) or passed in memory by the app session only.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal, Mapping, Optional

from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from core.errors import SettingsError
from core.settings_labels import label_for

SETTINGS_VERSION = 1
SETTINGS_FILE = "settings.json"

DEFAULT_ENTITY_TYPES = [
    "PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "EVENT",
    "WORK_OF_ART", "PRODUCT", "LAW", "LANGUAGE",
]


class Settings(BaseModel):
    """Every tunable parameter of indexing and retrieval, with the papers' defaults."""

    model_config = ConfigDict(extra="ignore", validate_assignment=True)

    version: int = Field(SETTINGS_VERSION, ge=1, le=SETTINGS_VERSION, description="Settings schema version.")

    # --- providers -------------------------------------------------------------------------
    provider: Literal["offline", "openai"] = Field(
        "offline",
        description="'offline' uses spaCy extraction and extractive answers (no LLM); "
        "'openai' uses any OpenAI-compatible chat endpoint for extraction, summaries, keywords and answers.",
    )
    llm_base_url: str = Field("", description="Base URL of the OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1.")
    llm_model: str = Field("", description="Chat model name sent to the server.")
    llm_temperature: float = Field(0.0, ge=0.0, le=2.0, description="Sampling temperature of LLM calls.")
    llm_max_tokens: int = Field(1024, ge=16, le=32768, description="Maximum completion tokens per LLM call.")
    llm_timeout_s: float = Field(120.0, gt=0, le=3600, description="LLM timeout: the longest silence allowed while a reply streams in, in seconds (a server still producing tokens is not cut off).")
    llm_max_retries: int = Field(4, ge=0, le=10, description="Retries on timeouts, 429 and 5xx (exponential backoff).")
    llm_concurrency: int = Field(4, ge=1, le=32, description="Concurrent LLM calls while indexing.")
    llm_context_tokens: int = Field(0, ge=0, le=2_000_000, description="The model's context window in tokens; every prompt is fitted to it (evidence trimmed with a marker). 0 = what the server reports (vLLM, llama.cpp server), else what a refusal names.")
    embedder: Literal["local-minilm", "local-minilm-int8", "openai"] = Field(
        "local-minilm-int8",
        description="'local-minilm-int8' (default for new workspaces) = all-MiniLM-L6-v2 quantised to int8 on "
        "onnxruntime (made at install time by scripts/install-minilm-int8.sh); 'local-minilm' = the same model on torch "
        "(384-d). A workspace keeps the local model it was built with unless another is chosen explicitly (then it "
        "refuses; `repair --reembed` converts it); 'openai' = an OpenAI-compatible embeddings endpoint.",
    )
    embedding_base_url: str = Field("", description="Base URL of the OpenAI-compatible embeddings server (embedder = openai), e.g. http://127.0.0.1:7997 for Infinity or http://HOST:8000/v1 for vLLM; empty = the OpenAI API.")
    embedding_model: str = Field("", description="Embedding model name sent to the server (embedder = openai); the workspace records it and refuses another.")
    embedding_batch_size: int = Field(16, ge=1, le=1024, description="Texts per embedding batch (local MiniLM: 16 measured fastest on 2 cores, 1.5x faster than 64 on chunks); for an embeddings server, texts per request.")
    embedding_concurrency: int = Field(4, ge=1, le=64, description="Embeddings server: requests kept in flight at once (indexing also overlaps them with the extraction of the next batch).")
    embedding_timeout_s: float = Field(60.0, gt=0, le=3600, description="Embeddings server: timeout of one request, in seconds.")
    embedding_max_retries: int = Field(4, ge=0, le=10, description="Embeddings server: retries on timeouts, 429 and 5xx (exponential backoff).")
    chroma_url: str = Field(
        "",
        description="Empty = embedded ChromaDB in the workspace folder; http://HOST:PORT = a ChromaDB server started with `chroma run`.",
    )

    # --- indexing --------------------------------------------------------------------------
    chunk_vector_windows: bool = Field(
        True,
        description="Embed a chunk longer than one window (~200 tokens) window by window, one vector per window, "
        "and score the chunk by its best window; off = the embedder reads only the start (MiniLM: 256 "
        "wordpieces, a fifth of a 1,200-token chunk). Changing it affects newly indexed chunks only.",
    )
    vector_search: Literal["exact", "approximate"] = Field(
        "exact",
        description="Retrieval's vector searches: exact cosines over the workspace's vectors held in memory "
        "(deterministic, like LightRAG's brute-force nano-vectordb) or ChromaDB's approximate HNSW index (less "
        "memory on very large corpora; results can vary slightly from one process to the next).",
    )
    chunk_tokens: int = Field(1200, ge=50, le=8000, description="Chunk size in cl100k tokens (LightRAG / E2GraphRAG: 1200).")
    chunk_overlap: int = Field(100, ge=0, le=1000, description="Overlap between consecutive chunks of a document, in tokens (100).")
    short_document_tokens: int = Field(
        3000, ge=100, le=100_000,
        description="A document of at most this many tokens counts as short (see the short-document chunk size).",
    )
    short_document_chunk_tokens: int = Field(
        0, ge=0, le=8000,
        description="Short documents are cut at paragraph ends into chunks of at most this many tokens (0 = off: "
        "they are chunked like any other, usually into one chunk, so every mode retrieves the same text). "
        "Changing it affects newly indexed documents only.",
    )
    tree_group_size: int = Field(5, ge=2, le=20, description="g: children summarised by one summary-tree node (E2GraphRAG: 5).")
    tree_summary_similarity: Literal["tfidf", "embedder"] = Field(
        "tfidf",
        description="Offline tree summaries rank sentences by LexRank centrality over TF-IDF vectors (fast) or "
        "over embedder vectors (slower: every sentence of the corpus gets embedded).",
    )
    summary_tokens: int = Field(300, ge=50, le=2000, description="Target length of a summary-tree node, in tokens.")
    entity_types: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ENTITY_TYPES),
        description="Named-entity types kept for the graphs (spaCy labels; also the LLM extraction type list).",
    )
    profile_max_fragments: int = Field(8, ge=1, le=100, description="Merged descriptions with at least this many fragments are summarised (LightRAG: 8).")
    profile_max_tokens: int = Field(1200, ge=50, le=10000, description="Merged descriptions longer than this many tokens are summarised (LightRAG: 1200).")
    profile_summary_tokens: int = Field(200, ge=20, le=2000, description="Length of a summarised entity/relation profile, in tokens.")
    gleaning_passes: int = Field(1, ge=0, le=5, description="Extra LLM extraction passes asking for missed entities (LightRAG: 1).")
    max_document_mb: float = Field(50.0, gt=0, le=2048, description="Documents larger than this are refused with a clear message.")

    # --- bounded parsing (core/parsing; issue 20) --------------------------------------------
    max_documents_per_upload: int = Field(200_000, ge=1, le=10_000_000, description="A JSONL corpus (or a set of uploaded files) with more documents than this is refused with a clear message before anything is registered.")
    max_document_pages: int = Field(2000, ge=1, le=100_000, description="A PDF with more pages than this is refused before its text is read.")
    max_document_chars: int = Field(20_000_000, ge=1_000, le=500_000_000, description="Text extraction stops and the file is refused once it yields more characters than this (per document; per line of a JSONL corpus).")
    max_archive_uncompressed_mb: float = Field(256.0, gt=0, le=10_000, description="Compressed content (an uploaded .zip's members, a DOCX's zip members, a PDF's page content streams) that expands past this many MB is refused before it is parsed.")
    max_archive_ratio: float = Field(100.0, ge=1, le=10_000, description="Compressed content that expands more than this many times the file's size is refused before it is parsed (ordinary documents stay under 20x).")
    max_archive_entries: int = Field(10_000, ge=10, le=10_000_000, description="An uploaded .zip or a DOCX whose zip holds more members than this is refused before its zip directory is read (ordinary DOCX files hold a few dozen).")
    parse_cpu_seconds: int = Field(120, ge=1, le=3_600, description="CPU time one PDF, DOCX or HTML file may take in the parsing worker process; past it the worker is stopped and the file fails alone.")
    parse_memory_mb: int = Field(2048, ge=256, le=65_536, description="Address space of the parsing worker process, in MB; a file needing more fails alone.")
    parse_timeout_s: float = Field(300.0, gt=0, le=7_200, description="Wall-clock time one file may take in the parsing worker, in seconds; past it the worker is stopped and the file fails alone.")
    # --- end of bounded parsing ----------------------------------------------------------------
    max_eval_questions: int = Field(1000, ge=1, le=1_000_000, description="An evaluation, edit comparison, router training set or judge run over more questions than this is refused with a clear message (each holds one of the few heavy work slots while it runs).")

    # --- retrieval: naive / LightRAG -------------------------------------------------------
    naive_top_k: int = Field(10, ge=1, le=200, description="naive: chunks returned by the dense search.")
    lightrag_top_k: int = Field(40, ge=1, le=500, description="local/global: entities (local) or relations (global) retrieved (LightRAG: 40).")
    cosine_threshold: float = Field(0.2, ge=-1.0, le=1.0, description="local/global: minimum cosine similarity of a retrieved entity or relation (LightRAG: 0.2).")
    chunks_per_entity: int = Field(3, ge=1, le=50, description="local/global: source chunks kept per entity, ranked by similarity to the question.")
    max_entity_tokens: int = Field(6000, ge=100, le=200_000, description="Token budget of the entities section of the context (LightRAG: 6000).")
    max_relation_tokens: int = Field(8000, ge=100, le=200_000, description="Token budget of the relations section of the context (LightRAG: 8000).")
    max_total_tokens: int = Field(30000, ge=500, le=1_000_000, description="Total context token budget; chunks get what is left (LightRAG: 30000).")

    paper_strict: bool = Field(
        False,
        description="Use the papers' own choices where they leave things open: keywords joined into one "
        "entity/relation search with top-N and an absolute cosine cut-off, evidence chunks ordered by cosine "
        "to the question, PathRAG's reliability-only path ranking, every mention-graph term as a tree query "
        "entity. Off = RAGScope's measured choices (question names linked to entities, relations anchored to "
        "the question's entities, question-relevant paths; see the README's 'Graph modes' table).",
    )
    seed_relative_cutoff: float = Field(
        0.9, ge=0.0, le=1.0,
        description="Seed selection (paper_strict off): an entity found by a keyword's vector search is kept "
        "when its cosine is at least this fraction of that keyword's best hit.",
    )

    # --- retrieval: E2GraphRAG tree ---------------------------------------------------------
    tree_top_k: int = Field(25, ge=1, le=500, description="tree: k, the maximum number of chunks/summaries returned (E2GraphRAG: 25).")
    tree_hops: int = Field(4, ge=1, le=10, description="tree: h, the maximum number of nodes on the shortest path between two query entities (4 = at most 3 hops).")

    # --- retrieval: PathRAG -----------------------------------------------------------------
    path_top_nodes: int = Field(40, ge=2, le=500, description="path: N, nodes retrieved from the low-level keywords (PathRAG: 40).")
    path_top_paths: int = Field(15, ge=1, le=200, description="path: K, paths kept overall (PathRAG: 15).")
    path_alpha: float = Field(0.8, gt=0.0, le=1.0, description="path: α, decay rate of resource propagation (PathRAG: 0.8).")
    path_theta: float = Field(0.05, ge=0.0, le=1.0, description="path: θ, a node with S(v)/deg(v) < θ is not expanded (paper: 0.05).")
    path_max_hops: int = Field(3, ge=1, le=6, description="path: longest path kept, in edges (PathRAG: 3).")
    path_max_expansions: int = Field(20000, ge=100, le=1_000_000, description="path: cap on partial paths explored per start node (reported in the trace when hit).")

    # --- answers ----------------------------------------------------------------------------
    answer_sentences: int = Field(4, ge=1, le=20, description="Offline answers: lines of the extractive answer (the best sentence, short answer in bold, then the mode's own evidence: bridge sentences, path chains, summary and leaf sentences).")

    @model_validator(mode="after")
    def _rules_across_fields(self) -> "Settings":
        problems = rule_problems(self)
        if problems:
            raise PydanticCustomError("settings_rules", "{message}", {"message": _joined(problems)})
        return self

    def __setattr__(self, name: str, value: object) -> None:
        if name in type(self).model_fields:  # check the whole first: pydantic would keep a value that breaks a rule
            validate_settings({**self.model_dump(), name: value})
        super().__setattr__(name, value)

    @classmethod
    def field_help(cls) -> dict[str, str]:
        """Field name -> description, for UI help text."""
        return {name: (f.description or "") for name, f in cls.model_fields.items()}

    def with_overrides(self, overrides: dict[str, object]) -> "Settings":
        """Return a copy with some fields replaced (validated)."""
        data = self.model_dump()
        unknown = sorted(set(overrides) - set(data))
        if unknown:
            raise ValueError(f"unknown setting(s): {', '.join(unknown)}")
        data.update(overrides)
        return keep_fields_set(validate_settings(data), self.model_fields_set | set(overrides))


def keep_fields_set(settings: Settings, chosen: "set[str]") -> Settings:
    """``settings`` with ``chosen`` as the fields set explicitly (pydantic's ``model_fields_set``): a copy or
    an override keeps knowing which values were chosen and which are defaults (a workspace follows its
    recorded local embedder unless ``embedder`` was chosen, ``core.workspace``)."""
    object.__setattr__(settings, "__pydantic_fields_set__", set(chosen))
    return settings


class InvalidSettingsError(SettingsError):
    """Settings values that cannot be used; ``problems`` maps each field to its rule (the message the
    Settings page shows next to the field; ``str(error)`` lists them with the fields' labels)."""

    def __init__(self, problems: dict[str, str]) -> None:
        self.problems = dict(problems)
        super().__init__("invalid settings: " + _joined(self.problems))


URL_HINT = {"llm_base_url": "http(s)://host[:port]/v1", "embedding_base_url": "http(s)://host[:port]/v1",
            "chroma_url": "http(s)://host:port"}
MODEL_NEEDED = (("provider", "openai", "llm_model"), ("embedder", "openai", "embedding_model"))


RULE_READS = {"chunk_overlap": {"chunk_tokens"}, "short_document_chunk_tokens": {"chunk_tokens", "chunk_overlap"},
              "llm_model": {"provider"}, "embedding_model": {"embedder"}}  # the other fields a rule reads


def _joined(problems: dict[str, str]) -> str:
    return "; ".join(f"{label_for(field)}: {message}" for field, message in problems.items())


def url_problem(value: str, hint: str) -> str:
    """Why ``value`` is not an http(s) server URL ('' when it is one, or empty: empty means the default)."""
    if not value:
        return ""
    try:
        parsed = urlparse(value.strip())
        parsed.port  # noqa: B018 - raises ValueError on a port that is not a number in range
    except ValueError:
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.hostname or value != value.strip():
        return f"not a URL: give {hint}"
    return ""


def rule_problems(settings: "Settings") -> dict[str, str]:
    """The rules that tie fields together (each field already within its own bounds): field -> rule
    broken, in the words of the Settings page. Empty when the settings can be used."""
    problems: dict[str, str] = {}
    if settings.chunk_overlap >= settings.chunk_tokens:
        problems["chunk_overlap"] = (f"must be smaller than {label_for('chunk_tokens')} "
                                     f"({settings.chunk_overlap:,} ≥ {settings.chunk_tokens:,})")
    short = settings.short_document_chunk_tokens
    if short and not 50 <= short <= settings.chunk_tokens:
        problems["short_document_chunk_tokens"] = (f"must be 0 (off) or between 50 and {label_for('chunk_tokens')} "
                                                   f"({settings.chunk_tokens:,}); got {short:,}")
    elif short and settings.chunk_overlap >= short:
        problems["short_document_chunk_tokens"] = (f"must be larger than {label_for('chunk_overlap')} "
                                                   f"({settings.chunk_overlap:,}); got {short:,}")
    for field, hint in URL_HINT.items():
        problem = url_problem(getattr(settings, field), hint)
        if problem:
            problems[field] = problem
    for switch, value, model in MODEL_NEEDED:
        if getattr(settings, switch) == value and not getattr(settings, model).strip():
            problems[model] = f"required when {label_for(switch)} is '{value}'"
    return problems


def _bounds_text(field: str) -> str:
    low, high = field_bounds(field)
    low_text = "" if low is None else f"{low:,}"
    high_text = "" if high is None else f"{high:,}"
    if low is not None and high is not None:
        return f"between {low_text} and {high_text}"
    return f"at least {low_text}" if low is not None else f"at most {high_text}"


def _field_message(field: str, error: Mapping[str, Any]) -> str:
    """One pydantic field error in the Settings page's words."""
    kind = error.get("type", "")
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal"):
        got = error.get("input")
        return f"must be {_bounds_text(field)}" + (f" (got {got:,})" if isinstance(got, (int, float)) else "")
    if kind in ("int_parsing", "int_from_float", "int_type"):
        return f"must be a whole number {_bounds_text(field)}"
    if kind in ("float_parsing", "float_type"):
        return f"must be a number {_bounds_text(field)}"
    if kind == "literal_error":
        return "must be one of " + str(error.get("ctx", {}).get("expected", ""))
    return str(error.get("msg", "is invalid"))


def validate_settings(values: "dict[str, object] | Settings") -> Settings:
    """The one settings validator (the library, the CLI and the Settings page call it): each field
    within its bounds, then the rules across fields (``rule_problems``). Raises
    ``InvalidSettingsError`` naming every problem by the field's label."""
    data = values.model_dump() if isinstance(values, Settings) else dict(values)
    try:
        checked = Settings.model_validate(data)
        return keep_fields_set(checked, values.model_fields_set) if isinstance(values, Settings) else checked
    except ValidationError as exc:
        problems: dict[str, str] = {}
        for error in exc.errors():
            if error.get("type") == "settings_rules":
                continue
            field = str(error["loc"][0]) if error.get("loc") else ""
            if field in Settings.model_fields and field not in problems:
                problems[field] = _field_message(field, error)
        # the rules across fields, over the fields that are fine on their own (a broken field's default
        # stands in for it, and a rule that reads a broken field is left until that field is fixed)
        usable = {k: v for k, v in data.items() if k not in problems}
        for field, rule in rule_problems(Settings.model_construct(**{**Settings().model_dump(), **usable})).items():
            if field not in problems and not RULE_READS.get(field, set()) & set(problems):
                problems[field] = rule
        raise InvalidSettingsError(problems or {"settings": str(exc)}) from exc


def field_bounds(name: str) -> tuple[Optional[float], Optional[float]]:
    """(lowest, highest) value of a numeric settings field from its ``ge``/``gt``/``le``/``lt``
    constraints (None: unbounded); the Settings and Inspect pages' number inputs use it."""
    low = high = None
    for meta in Settings.model_fields[name].metadata:
        low = getattr(meta, "ge", getattr(meta, "gt", low))
        high = getattr(meta, "le", getattr(meta, "lt", high))
    return low, high


def is_numeric_field(name: str) -> bool:
    """True for int and float settings (not bool: a bool is not a number input)."""
    return Settings.model_fields[name].annotation in (int, float)


def read_settings(workspace_dir: Path) -> Settings:
    """Read the workspace's settings file, or defaults when absent (``core.config.load_settings`` puts
    the environment over it)."""
    path = Path(workspace_dir) / SETTINGS_FILE
    settings = Settings()
    if path.exists():
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise SettingsError(f"settings file {path} is unreadable ({exc}); delete it to return to defaults") from exc
        if not isinstance(raw, dict):
            raise SettingsError(f"settings file {path} does not hold a JSON object; delete it to return to defaults")
        try:
            newer = int(raw.get("version", 1)) > SETTINGS_VERSION
            if not newer:
                settings = validate_settings(raw)
        except InvalidSettingsError as exc:
            problems = "; ".join(f"{field}: {label_for(field)} {rule}"
                                 for field, rule in list(exc.problems.items())[:5])
            raise SettingsError(f"settings file {path} has invalid values ({problems}); fix them "
                                f"or delete the file to return to defaults") from exc
        except (TypeError, ValueError) as exc:
            raise SettingsError(f"settings file {path} has invalid values ({exc}); fix them "
                                f"or delete the file to return to defaults") from exc
        if newer:
            raise SettingsError(
                f"settings file {path} was written by a newer RAGScope (version {raw.get('version')}, "
                f"this one understands {SETTINGS_VERSION}); upgrade RAGScope or delete the file"
            )
    return settings


def save_settings(workspace_dir: Path, settings: Settings) -> None:
    """Write settings (no secrets are part of the model) atomically."""
    path = Path(workspace_dir) / SETTINGS_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(settings.model_dump(), indent=2), encoding="utf-8")
    os.replace(tmp, path)


# Fields read while a document is indexed: changing one leaves the documents already indexed as they were.
INDEX_TIME_FIELDS = ("chunk_tokens", "chunk_overlap", "short_document_tokens", "short_document_chunk_tokens",
                     "chunk_vector_windows", "entity_types", "gleaning_passes", "tree_group_size",
                     "tree_summary_similarity", "summary_tokens")


def saved_message(before: Settings, after: Settings) -> str:
    """What the Settings page says after a save: which changed fields only apply to documents indexed from
    now on (the indexed ones keep their chunks, graph and tree until they are indexed again)."""
    changed = [label_for(f) for f in INDEX_TIME_FIELDS if getattr(before, f) != getattr(after, f)]
    if not changed:
        return "Saved. Indexing and retrieval now use these settings."
    return ("Saved. Retrieval uses these settings now, but documents already indexed keep their chunks, graph "
            "and summary tree until they are indexed again (" + ", ".join(changed) + " apply to newly indexed "
            "documents only). A new chunk size offers to re-index them below; otherwise delete them and add them "
            "again on the Documents page.")
