"""Configuration in one place: process environment, data folder, and the resolution of a run's
settings as **flags > environment > settings file**.

* ``apply_process_environment()`` — the variables every run needs (no download at run time, no
  telemetry); called once when ``core`` is imported.
* ``data_dir()`` / ``default_workspace()`` — the workspaces folder (``RAGSCOPE_DATA_DIR``, default
  ``data/workspaces``) and the default workspace in it (``RAGSCOPE_WORKSPACE``, default ``default``),
  for the CLI and the app alike.
* ``load_settings(folder)`` — the settings file with the ``RAGSCOPE_*`` provider variables over it.
* ``resolve_settings(folder, flags)`` — the same with the command's flags over both (the CLI).
* ``resolve_llm(settings, base_url, model)`` — which LLM server and model to use, if any.

Every ``RAGSCOPE_*`` variable that selects a provider is read here and nowhere else.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from core.errors import WorkspaceNameError
from core.settings import Settings, read_settings

DEFAULT_DATA_DIR = Path(__file__).resolve().parent.parent / "data" / "workspaces"
DEFAULT_WORKSPACE_NAME = "default"

# Models and tokenizers ship with the install: nothing may be fetched at run time, and no library
# reports usage. setdefault: a value set by the user wins.
PROCESS_ENVIRONMENT = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "ANONYMIZED_TELEMETRY": "False",  # ChromaDB
    "TOKENIZERS_PARALLELISM": "false",
    "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
}


def apply_process_environment() -> None:
    """Set the process-wide variables of ``PROCESS_ENVIRONMENT`` that the user did not set."""
    for name, value in PROCESS_ENVIRONMENT.items():
        os.environ.setdefault(name, value)


def _env(name: str) -> str:
    return os.environ.get(name) or ""


def data_dir() -> Path:
    """The folder holding the workspaces, created owner-only (0700) when it does not exist yet."""
    folder = Path(_env("RAGSCOPE_DATA_DIR") or DEFAULT_DATA_DIR)
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # documents and indexes: nobody else's to read
    return folder


WORKSPACE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
WORKSPACE_NAME_RULE = "1–64 letters, digits, '.', '_' or '-', starting with a letter or digit"


def workspace_dir(name: str) -> Path:
    """The folder of the workspace ``name`` inside ``data_dir()``; WorkspaceNameError for a malformed name
    or one that would lead outside the data folder (e.g. through a symbolic link)."""
    name = str(name or "").strip()
    if not WORKSPACE_NAME.match(name):
        raise WorkspaceNameError(f"invalid workspace name {name[:80]!r}: use {WORKSPACE_NAME_RULE}")
    root = data_dir().resolve()
    path = (root / name).resolve()
    if path.parent != root:
        raise WorkspaceNameError(f"workspace {name!r} resolves to {path}, outside the data folder {root} "
                                 "(RAGSCOPE_DATA_DIR): refused")
    return path


def default_workspace_name() -> str:
    """``RAGSCOPE_WORKSPACE`` (a name, or a path inside the data folder), default ``default``;
    WorkspaceNameError for a path outside the data folder or a malformed name."""
    value = _env("RAGSCOPE_WORKSPACE").strip()
    if not value:
        return DEFAULT_WORKSPACE_NAME
    if "/" in value or os.sep in value:
        path = Path(value).expanduser().resolve()
        root = data_dir().resolve()
        if path.parent != root:
            raise WorkspaceNameError(f"RAGSCOPE_WORKSPACE={value} is outside the data folder {root} "
                                     "(RAGSCOPE_DATA_DIR): name a workspace in it instead")
        value = path.name
    try:
        workspace_dir(value)
    except WorkspaceNameError as exc:
        raise WorkspaceNameError(f"RAGSCOPE_WORKSPACE: {exc}") from None
    return value


def default_workspace() -> Path:
    """The workspace used when none is named."""
    return data_dir() / default_workspace_name()


def list_workspaces() -> list[str]:
    """Names of the workspace folders in ``data_dir()``."""
    folder = data_dir()
    if not folder.exists():
        return []
    return sorted(p.name for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))


@dataclass(frozen=True)
class Flags:
    """A command's provider flags (None / False: not given)."""

    chroma_url: Optional[str] = None
    embedding_base_url: Optional[str] = None
    embedding_model: Optional[str] = None
    embedder: Optional[str] = None  # --embedder: local-minilm or local-minilm-int8
    llm: bool = False  # the command takes the LLM flags (then an LLM asked for is resolved and checked)
    llm_base_url: Optional[str] = None
    llm_model: Optional[str] = None
    offline: bool = False


def with_embedding_server(settings: Settings, base_url: str | None = None, model: str | None = None) -> Settings:
    """Select an OpenAI-compatible embeddings server when a URL or a model is given (CLI flags, or the
    RAGSCOPE_EMBEDDING_* variables); what is not given keeps the settings' value."""
    overrides: dict[str, object] = {}
    if base_url:
        overrides["embedding_base_url"] = base_url
    if model:
        overrides["embedding_model"] = model
    if not overrides:
        return settings
    check_embedding_server(settings.model_copy(update=overrides | {"embedder": "openai"}))  # the flag-naming message
    return settings.with_overrides(overrides | {"embedder": "openai"})


def apply_environment(settings: Settings) -> Settings:
    """Let RAGSCOPE_* environment variables select the providers (they win over the file): the LLM,
    the ChromaDB server and the embeddings server (RAGSCOPE_EMBEDDING_BASE_URL / _MODEL)."""
    overrides: dict[str, object] = {}
    base_url, model = _env("RAGSCOPE_LLM_BASE_URL"), _env("RAGSCOPE_LLM_MODEL")
    if base_url:
        overrides["llm_base_url"] = base_url
    if model:
        overrides["llm_model"] = model
    if base_url and model:
        overrides["provider"] = "openai"
    if _env("RAGSCOPE_CHROMA_URL"):
        overrides["chroma_url"] = _env("RAGSCOPE_CHROMA_URL")
    settings = settings.with_overrides(overrides) if overrides else settings
    return with_embedding_server(settings, _env("RAGSCOPE_EMBEDDING_BASE_URL"), _env("RAGSCOPE_EMBEDDING_MODEL"))


def load_settings(workspace_dir: Path) -> Settings:
    """The workspace's settings file (defaults when absent) with the environment over it."""
    return apply_environment(read_settings(workspace_dir))


def check_embedding_server(settings: Settings) -> None:
    """Raise ValueError (naming the fix) when the embedder is 'openai' but half-configured."""
    if settings.embedder != "openai":
        return
    if not settings.embedding_model:
        raise ValueError("an embeddings server is configured but no model is named: pass --embedding-model, set "
                         "RAGSCOPE_EMBEDDING_MODEL or Settings → Embedding model")
    if not settings.embedding_base_url and not _env("OPENAI_API_KEY"):
        raise ValueError("an embeddings server is configured but no URL is named: pass --embedding-base-url, set "
                         "RAGSCOPE_EMBEDDING_BASE_URL or Settings → Embeddings server URL")


def resolve_llm(settings: Settings, base_url: Optional[str] = None, model: Optional[str] = None
                ) -> Optional[tuple[str, str]]:
    """(base_url, model) of the configured LLM, or None for the offline path: explicit values (CLI
    flags) win over ``RAGSCOPE_LLM_BASE_URL``/``RAGSCOPE_LLM_MODEL``, which win over the settings
    (used when ``settings.provider == "openai"`` or when a flag/variable asked for an LLM).

    Raises ValueError when an LLM is asked for but half-configured (the message names the fix)."""
    env_url, env_model = _env("RAGSCOPE_LLM_BASE_URL"), _env("RAGSCOPE_LLM_MODEL")
    requested = bool(base_url or model or env_url or env_model) or settings.provider == "openai"
    if not requested:
        return None
    url = base_url or env_url or settings.llm_base_url
    name = model or env_model or settings.llm_model
    if not name:
        raise ValueError("an LLM is configured but no model is named: pass --llm-model, set RAGSCOPE_LLM_MODEL "
                         "or Settings → Chat model (or use --offline)")
    if not url and not _env("OPENAI_API_KEY"):
        raise ValueError("an LLM is configured but no server is named: pass --llm-base-url, set "
                         "RAGSCOPE_LLM_BASE_URL or Settings → Server URL (or use --offline)")
    return url, name


def resolve_settings(workspace_dir: Path, flags: Flags = Flags()) -> Settings:
    """A run's settings: the file (defaults when absent), the environment over it, the flags over both.

    With ``flags.llm`` (and not ``flags.offline``) an LLM asked for by a flag, a variable or the file
    is resolved into ``provider='openai'``, ``llm_base_url`` and ``llm_model`` (ValueError when it is
    half-configured). The embeddings server is checked the same way."""
    path = Path(workspace_dir)
    settings = load_settings(path) if path.exists() else apply_environment(Settings())
    if flags.chroma_url:
        settings = settings.with_overrides({"chroma_url": flags.chroma_url})
    if flags.embedder:
        settings = settings.with_overrides({"embedder": flags.embedder})
    settings = with_embedding_server(settings, flags.embedding_base_url, flags.embedding_model)
    check_embedding_server(settings)
    if flags.llm and not flags.offline:
        resolved = resolve_llm(settings, flags.llm_base_url, flags.llm_model)
        if resolved is not None:
            url, model = resolved
            settings = settings.with_overrides({"provider": "openai", "llm_base_url": url, "llm_model": model})
    return settings
