"""Settings: every field of ``core.settings.Settings`` with its description as help text, grouped.

Edits take effect when saved (to the workspace's settings.json and this session). In local mode (sign-in
off) the API key field keeps the user's own key in this browser session only
(``st.session_state["llm_api_key"]``), never written to disk. With sign-in on there is no key field and
the base URLs are chosen among the operator's allowed providers (``core.providers``): an admin cannot
add a URL, and Save refuses one that is not allowed. Changing the embedder of a non-empty workspace is refused with the
embedder-mismatch message (vectors of different embedders cannot be mixed)."""
from __future__ import annotations

from typing import Any

import streamlit as st

from core.auth import Role  # noqa: E402
from ui.auth_gate import guard  # noqa: E402

guard(Role.admin)  # the refusal / sign-in page unless this session is an admin (app.py gates first)

from core import api
from core.config import apply_environment
from core.settings import InvalidSettingsError, Settings, saved_message, validate_settings
from ui import state
from ui.errors import escape_markdown, show_errors
from ui.reindex_offer import note_saved, reindex_offer
from ui.settings_labels import label_for
from ui.settings_widgets import settings_field_widget

CHAT_SECTION = "Chat model (LLM)"
GROUPS: dict[str, list[tuple[str, list[str]]]] = {  # tab -> sections (title, fields), by what they affect
    "Providers": [
        (CHAT_SECTION, ["provider", "llm_base_url", "llm_model", "llm_temperature", "llm_max_tokens",
                        "llm_timeout_s", "llm_max_retries", "llm_concurrency", "llm_context_tokens"]),
        ("Embeddings", ["embedder", "embedding_base_url", "embedding_model", "embedding_batch_size",
                        "embedding_concurrency", "embedding_timeout_s", "embedding_max_retries",
                        "chunk_vector_windows"]),
        ("Vector store", ["chroma_url", "vector_search"]),
    ],
    "Indexing": [
        ("Documents and chunks", ["max_document_mb", "chunk_tokens", "chunk_overlap"]),
        ("Entities and profiles", ["entity_types", "profile_max_fragments", "profile_max_tokens",
                                   "profile_summary_tokens", "gleaning_passes"]),
        ("Summary tree (E2GraphRAG)", ["tree_group_size", "summary_tokens", "tree_summary_similarity"]),
    ],
    "Retrieval: LightRAG": [
        ("naive, local, global, hybrid, mix", ["naive_top_k", "lightrag_top_k", "cosine_threshold",
                                               "chunks_per_entity"]),
        ("Context token budgets (all modes)", ["max_entity_tokens", "max_relation_tokens", "max_total_tokens"]),
        ("Seeds (RAGScope choices)", ["paper_strict", "seed_relative_cutoff"]),
    ],
    "Retrieval: tree": [("E2GraphRAG", ["tree_top_k", "tree_hops"])],
    "Retrieval: path": [("PathRAG", ["path_top_nodes", "path_top_paths", "path_alpha", "path_theta",
                                     "path_max_hops", "path_max_expansions"])],
    "Answers": [("Extractive answers (offline)", ["answer_sentences"])],
}
# what only the chat model reads: greyed out while the provider is 'offline' (the API key stays: an
# OpenAI-compatible embeddings server uses it too; so does the server URL, where setting up an LLM starts,
# checked as it is typed)
LLM_FIELDS = frozenset(f for f in GROUPS["Providers"][0][1] if f not in ("provider", "llm_base_url"))
HIDDEN = {"version"}
KEY_WIDGET = "settings_api_key_input"


def _form_key() -> str:
    return f"settings_form::{state.current_workspace_name()}"


def widget_key(field: str) -> str:
    """The widget key of a field; it carries the form's generation, which "Reset to defaults" moves on,
    so every widget (number boxes included, whose browser state outlives a dropped session key) is
    drawn anew from the defaults."""
    generation = st.session_state.get(_form_key(), 0)
    reset = f"reset{generation}::" if generation else ""
    return f"set::{state.current_workspace_name()}::{reset}{field}"


def api_key_widget(disabled: bool = False) -> None:
    """The API key field: copied to st.session_state['llm_api_key'] (session only, never saved)."""
    if KEY_WIDGET not in st.session_state:
        st.session_state[KEY_WIDGET] = st.session_state.get("llm_api_key", "")

    def _copy() -> None:
        st.session_state["llm_api_key"] = st.session_state.get(KEY_WIDGET) or ""

    st.text_input("API key", type="password", key=KEY_WIDGET, on_change=_copy, disabled=disabled,
                  help="Kept in this browser session only — never written to settings.json or logs. "
                       "Alternatively set OPENAI_API_KEY in the environment or Streamlit secrets.")
    st.session_state["llm_api_key"] = st.session_state.get(KEY_WIDGET) or ""


URL_FIELDS = {"llm_base_url": "llm", "embedding_base_url": "embeddings"}


def url_widget(field: str, value: str, disabled: bool = False) -> str:
    """With sign-in on: a choice among the operator's allowed base URLs (no free text). Off: None."""
    from core import providers

    kind = URL_FIELDS[field]
    choices = [p.url for p in providers.allowed_providers(kind)]
    current = providers.normalised_url(value, kind) if providers.is_allowed(value, kind) else ""
    options = list(dict.fromkeys(([current] if current else []) + choices))
    label = Settings.model_fields[field].description or field
    if not options:
        st.warning(f"The operator allowed no {kind} provider.")
        return value
    return st.selectbox(field.replace("_", " "), options, index=0, key=widget_key(field), disabled=disabled,
                        help=label + " Chosen among the providers the operator allowed (sign-in is on: URLs are "
                        "set in the server's environment or secrets, not here).")


def collect(current: Settings) -> tuple[dict[str, Any], dict[str, Any]]:
    """Draw every tab's sections of widgets (two per row); return the values entered and, per field, the
    empty slot under its widget where the validator's rule for it is shown."""
    values: dict[str, Any] = {}
    slots: dict[str, Any] = {}
    listed = {f for sections in GROUPS.values() for _, fields in sections for f in fields}
    extra = [f for f in Settings.model_fields if f not in listed and f not in HIDDEN]
    groups = dict(GROUPS)
    if extra:
        groups["Other"] = [("Other settings", extra)]
    signed_in = state.signin_enabled()
    tabs = st.tabs(list(groups), key="settings_tabs")
    for tab, (group, sections) in zip(tabs, groups.items()):
        with tab:
            if group == "Providers":
                st.caption("Offline = spaCy extraction and extractive answers (no LLM). OpenAI-compatible = "
                           "OpenAI, Ollama, vLLM, LM Studio, llama.cpp server… Embeddings: the local MiniLM, or an "
                           "OpenAI-compatible embeddings server (Infinity, TEI, vLLM, Ollama, OpenAI); *Test "
                           "connection* checks both. RAGSCOPE_EMBEDDING_BASE_URL / _MODEL override these fields.")
            for title, fields in sections:
                st.subheader(title)
                row = list(fields)
                if "llm_model" in row and not signed_in:  # the session-only key sits next to the model name
                    row.insert(row.index("llm_model") + 1, "__api_key__")
                for start in range(0, len(row), 2):
                    for col, field in zip(st.columns(2), row[start: start + 2]):
                        # the chat model's fields are greyed out while the provider is 'offline' (no LLM used)
                        idle = field in LLM_FIELDS and values.get("provider", current.provider) == "offline"
                        with col:
                            if field == "__api_key__":
                                api_key_widget(idle)
                            elif field in URL_FIELDS and signed_in:
                                values[field] = url_widget(field, getattr(current, field), idle)
                            else:
                                values[field] = settings_field_widget(field, getattr(current, field),
                                                                      widget_key(field), enforce_bounds=False,
                                                                      disabled=idle)
                                slots[field] = st.empty()
                if title == CHAT_SECTION and values.get("provider", current.provider) == "offline":
                    st.caption("The provider is 'offline' (spaCy extraction, extractive answers): the chat model's "
                               "fields are used only with 'openai'.")
    values["version"] = current.version
    return values, slots


def _reset_to_defaults() -> None:
    defaults = apply_environment(Settings())
    for field in Settings.model_fields:
        st.session_state.pop(widget_key(field), None)
    st.session_state[_form_key()] = st.session_state.get(_form_key(), 0) + 1  # every widget drawn anew
    st.session_state["settings_pending"] = defaults
    st.session_state["settings_message"] = ("info", "Defaults loaded into the form — press Save to keep them.")


def check_providers(candidate: Settings) -> None:
    """Raise ProviderNotAllowedError for a base URL in use that is not http(s) or (sign-in on) not allowed."""
    from core import providers

    state.configure_providers()
    if candidate.provider == "openai":
        providers.check_base_url(candidate.llm_base_url, "llm")
    if candidate.embedder == "openai":
        providers.check_base_url(candidate.embedding_base_url, "embeddings")


def save(candidate: Settings) -> None:
    """Save through ``core.api`` (admins only; EmbedderMismatchError when the candidate's embedder differs
    from the workspace's vectors)."""
    check_providers(candidate)
    name = state.current_workspace_name()
    try:
        ws = state.workspace()
    except Exception:  # noqa: BLE001 - the saved settings may be what cannot open the workspace: write anyway
        ws = None
    api.save_workspace_settings(state.principal(), name, candidate, ws)
    state.store_session_settings(candidate, name)
    state.forget_workspace()


def test_connection(candidate: Settings) -> None:
    if candidate.embedder == "openai":
        from core.remote_embeddings import test_embedding_server

        with st.spinner("Contacting the embeddings server…"):
            ok, message = test_embedding_server(candidate, state.api_key())
        (st.success if ok else st.error)(escape_markdown("Embeddings: " + message))
    if candidate.provider == "offline":
        st.info("The provider is 'offline': no LLM is used. Choose 'openai' to test a server.")
        return
    with st.spinner("Contacting the LLM server…"):
        ok, message = api.check_llm_connection(state.principal(), candidate, state.api_key())
    (st.success if ok else st.error)(escape_markdown(message))


@show_errors()
def main() -> None:
    st.title("Settings")
    name = state.current_workspace_name()
    st.caption(f"Settings of workspace {escape_markdown(name)}. Defaults follow the LightRAG, E2GraphRAG and "
               "PathRAG papers.")
    with show_errors("Reading the store"):
        st.caption(f"Store (read-only: chosen by RAGSCOPE_STORE when the app starts): "
                   f"{escape_markdown(api.store_description(state.principal(), state.workspace()))}")
    current = st.session_state.pop("settings_pending", None) or state.session_settings()
    values, slots = collect(current)
    candidate = None
    try:
        candidate = validate_settings(values)  # the library's one validator: the same rules, the same words
    except InvalidSettingsError as exc:
        for field, rule in exc.problems.items():
            if field in slots:
                slots[field].error(escape_markdown(rule))
        listed = "; ".join(f"{label_for(field)}: {rule}" for field, rule in exc.problems.items())
        st.error(escape_markdown(f"Not saved until fixed — {listed}"))
    cols = st.columns([1, 1, 1, 3])
    save_clicked = cols[0].button("Save", key="settings_save", type="primary", disabled=candidate is None)
    cols[1].button("Reset to defaults", key="settings_reset", on_click=_reset_to_defaults)
    test_clicked = cols[2].button("Test connection", key="settings_test", disabled=candidate is None)
    message = st.session_state.pop("settings_message", None)
    if message:
        (st.info if message[0] == "info" else st.success)(message[1])
    with show_errors("Re-index offer"):
        reindex_offer()  # a saved new chunk size: offer to cut the indexed documents again
    if save_clicked and candidate is not None:
        before = state.session_settings()
        with show_errors("Not saved") as guard:
            save(candidate)
        if not guard.failed:
            st.session_state["settings_message"] = ("success", saved_message(before, candidate))
            note_saved(before, candidate)
            st.rerun()
    if test_clicked and candidate is not None:
        with show_errors("Connection test failed"):
            test_connection(candidate)
    if candidate is not None and candidate != state.session_settings():
        st.caption("You have unsaved changes.")


main()
