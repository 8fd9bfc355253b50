"""Configuration in one place (core.config) and one error base (core.errors), issue 14."""
from __future__ import annotations

import inspect

import pytest

import core.errors
from core.config import Flags, data_dir, default_workspace, resolve_settings
from core.errors import KNOWN_ERRORS, RAGScopeError
from core.settings import Settings, save_settings

LLM_VARS = ("RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "RAGSCOPE_DATA_DIR", "RAGSCOPE_WORKSPACE",
            "RAGSCOPE_CHROMA_URL", "RAGSCOPE_EMBEDDING_BASE_URL", "RAGSCOPE_EMBEDDING_MODEL")


@pytest.fixture
def clean_env(monkeypatch):
    for name in LLM_VARS:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def test_every_user_facing_error_is_known_to_cli_and_ui():
    classes = [c for _, c in inspect.getmembers(core.errors, inspect.isclass) if c.__module__ == "core.errors"]
    assert len(classes) >= 7
    for cls in classes:
        assert issubclass(cls, RAGScopeError) and issubclass(cls, KNOWN_ERRORS), cls
    from core.llm.client import LLMCancelled
    from core.remote_embeddings import EmbeddingConfigError

    assert issubclass(LLMCancelled, KNOWN_ERRORS) and issubclass(EmbeddingConfigError, KNOWN_ERRORS)
    assert not issubclass(KeyError, KNOWN_ERRORS)


def test_data_dir_and_default_workspace_follow_the_environment(clean_env, tmp_path):
    assert data_dir().name == "workspaces"
    clean_env.setenv("RAGSCOPE_DATA_DIR", str(tmp_path))
    assert data_dir() == tmp_path and default_workspace() == tmp_path / "default"
    clean_env.setenv("RAGSCOPE_WORKSPACE", "other")
    assert default_workspace() == tmp_path / "other"


def test_cli_default_workspace_is_in_the_data_dir(clean_env, tmp_path, capsys):
    from core.cli.main import build_parser, main

    clean_env.setenv("RAGSCOPE_DATA_DIR", str(tmp_path))
    assert build_parser().parse_args(["status"]).workspace == str(tmp_path / "default")
    assert main(["status", "--json"]) == 0
    assert '"documents": 0' in capsys.readouterr().out
    assert (tmp_path / "default").is_dir()


def test_llm_flags_win_over_environment_over_settings(clean_env, tmp_path):
    save_settings(tmp_path, Settings(provider="openai", llm_base_url="http://file/v1", llm_model="file-model"))
    chosen = resolve_settings(tmp_path, Flags(llm=True))
    assert (chosen.provider, chosen.llm_base_url, chosen.llm_model) == ("openai", "http://file/v1", "file-model")
    clean_env.setenv("RAGSCOPE_LLM_MODEL", "env-model")
    assert resolve_settings(tmp_path, Flags(llm=True)).llm_model == "env-model"
    chosen = resolve_settings(tmp_path, Flags(llm=True, llm_model="flag-model", llm_base_url="http://flag/v1"))
    assert (chosen.llm_base_url, chosen.llm_model) == ("http://flag/v1", "flag-model")
    # a command without the LLM flags (status, docs) never resolves, so never fails on, a half-configured LLM
    save_settings(tmp_path, Settings())
    clean_env.delenv("RAGSCOPE_LLM_MODEL")
    clean_env.setenv("RAGSCOPE_LLM_BASE_URL", "http://env/v1")
    assert resolve_settings(tmp_path, Flags()).provider == "offline"
    with pytest.raises(ValueError, match="no model is named"):
        resolve_settings(tmp_path, Flags(llm=True))
    assert resolve_settings(tmp_path, Flags(llm=True, offline=True)).provider == "offline"


def test_resolving_does_not_write_the_settings_file(clean_env, tmp_path):
    save_settings(tmp_path, Settings())
    before = (tmp_path / "settings.json").read_text()
    resolve_settings(tmp_path, Flags(llm=True, llm_model="m", llm_base_url="http://x/v1", chroma_url="http://c:1"))
    assert (tmp_path / "settings.json").read_text() == before


def test_every_mode_declares_the_settings_it_reads():
    from core.retrieval.registry import mode_params, modes

    for mode in modes():
        names = mode_params(mode)
        assert names and set(names) <= set(Settings.model_fields), mode
        assert "max_total_tokens" in names, mode
    assert mode_params("naive") == ["naive_top_k", "max_total_tokens"]
    assert set(mode_params("mix")) == set(mode_params("hybrid")) | {"naive_top_k"}
    with pytest.raises(ValueError, match="unknown mode"):
        mode_params("nope")


def test_field_bounds_read_the_settings_constraints():
    from core.settings import field_bounds, is_numeric_field

    assert field_bounds("path_alpha") == (0.0, 1.0)  # gt=0, le=1
    assert field_bounds("llm_timeout_s") == (0, 3600)
    assert is_numeric_field("tree_top_k") and not is_numeric_field("paper_strict")
