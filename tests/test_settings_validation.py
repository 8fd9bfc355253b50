"""The one settings validator (``core.settings.validate_settings``): every numeric field bounded on
both sides, the rules across fields, messages naming the fields by their Settings-page labels, the
library refusing what the page refuses, and the Settings page showing each rule under its field,
refusing to save, and resetting every field (AppTest)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.errors import SettingsError
from core.settings import InvalidSettingsError, Settings, field_bounds, is_numeric_field, validate_settings
from core.settings_labels import label_for

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 300


def test_every_numeric_setting_has_an_upper_and_a_lower_bound():
    numeric = [name for name in Settings.model_fields if is_numeric_field(name)]
    assert len(numeric) > 20  # the walk sees the model's fields, not an empty list
    unbounded = {name: field_bounds(name) for name in numeric if None in field_bounds(name)}
    assert not unbounded, f"numeric settings without both bounds (add ge=/le=): {unbounded}"
    for name in numeric:  # and the default lies within them
        low, high = field_bounds(name)
        assert low <= getattr(Settings(), name) <= high, name


def test_the_bounds_walk_would_catch_a_field_without_le():
    from pydantic import Field, create_model

    probe = create_model("Probe", __base__=Settings, extra_knob=(int, Field(3, ge=0)))
    bounds = [getattr(m, "le", None) for m in probe.model_fields["extra_knob"].metadata]
    assert bounds == [None]  # what the walk above reports as missing


@pytest.mark.parametrize("values, field, words", [
    ({"chunk_tokens": 50, "chunk_overlap": 500}, "chunk_overlap",
     "must be smaller than Chunk size (tokens) (500 ≥ 50)"),
    ({"llm_base_url": "not a url"}, "llm_base_url", "not a URL: give http(s)://host[:port]/v1"),
    ({"embedding_base_url": "ftp://host/v1"}, "embedding_base_url", "not a URL: give http(s)://host[:port]/v1"),
    ({"llm_base_url": "http://host:99999/v1"}, "llm_base_url", "not a URL"),
    ({"chroma_url": "localhost:8000"}, "chroma_url", "not a URL: give http(s)://host:port"),
    ({"provider": "openai", "llm_base_url": "http://127.0.0.1:8080/v1"}, "llm_model",
     "required when Provider is 'openai'"),
    ({"embedder": "openai", "embedding_base_url": "http://127.0.0.1:7997"}, "embedding_model",
     "required when Embedder is 'openai'"),
    ({"chunk_tokens": -5}, "chunk_tokens", "must be between 50 and 8,000 (got -5)"),
    ({"llm_timeout_s": 10_000}, "llm_timeout_s", "must be between 0 and 3,600 (got 10,000)"),
    ({"chunk_tokens": "lots"}, "chunk_tokens", "must be a whole number between 50 and 8,000"),
    ({"short_document_chunk_tokens": 2000, "chunk_tokens": 1200}, "short_document_chunk_tokens",
     "between 50 and Chunk size (tokens) (1,200)"),
])
def test_invalid_settings_name_the_field_by_its_label_and_the_rule(values, field, words):
    with pytest.raises(InvalidSettingsError) as info:
        validate_settings(values)
    assert words in info.value.problems[field]
    assert f"{label_for(field)}: " in str(info.value)
    assert "LLM model" not in str(info.value)


def test_every_broken_rule_is_named_at_once_not_only_the_first_kind():
    values = Settings().model_dump() | {"chunk_tokens": -5, "chunk_overlap": 500, "llm_base_url": "not a url",
                                        "provider": "openai", "llm_model": ""}
    with pytest.raises(InvalidSettingsError) as caught:
        validate_settings(values)
    assert caught.value.problems == {  # the bound, and the rules that do not read the broken field
        "chunk_tokens": "must be between 50 and 8,000 (got -5)",
        "llm_base_url": "not a URL: give http(s)://host[:port]/v1",
        "llm_model": "required when Provider is 'openai'"}  # overlap vs a broken chunk size: left until it is fixed


def test_the_library_refuses_the_same_settings_with_the_same_words(tmp_path):
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match=r"Chunk overlap \(tokens\): must be smaller than Chunk size"):
        Settings(chunk_tokens=50, chunk_overlap=500)
    with pytest.raises(InvalidSettingsError, match="Chat model: required when Provider is 'openai'"):
        Settings().with_overrides({"provider": "openai"})
    settings = Settings()
    with pytest.raises(InvalidSettingsError, match="must be smaller than"):
        settings.chunk_tokens = 60  # assignment runs the same rules
    assert settings.chunk_tokens == 1200
    (tmp_path / "settings.json").write_text(json.dumps({"chunk_tokens": 50, "chunk_overlap": 500}), encoding="utf-8")
    from core.settings import read_settings

    with pytest.raises(SettingsError, match=r"chunk_overlap: Chunk overlap \(tokens\) must be smaller"):
        read_settings(tmp_path)


def test_valid_settings_pass_and_empty_urls_mean_the_defaults():
    chosen = validate_settings({"provider": "openai", "llm_base_url": "https://api.example.org/v1",
                                "llm_model": "m", "chunk_tokens": 400, "chunk_overlap": 50,
                                "short_document_chunk_tokens": 300, "chroma_url": "http://127.0.0.1:8000"})
    assert (chosen.llm_model, chosen.chunk_tokens) == ("m", 400)
    assert validate_settings({}) == Settings()
    assert validate_settings(Settings()) == Settings()


# --- the Settings page (AppTest) -------------------------------------------------------------
@pytest.fixture()
def data_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "workspaces"
    folder.mkdir()
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(folder))
    for name in ("RAGSCOPE_WORKSPACE", "RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "RAGSCOPE_CHROMA_URL",
                 "RAGSCOPE_EMBEDDING_BASE_URL", "RAGSCOPE_EMBEDDING_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return folder


def settings_page() -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    at.switch_page("pages/settings.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def number(at: AppTest, field: str):
    """The page's number box of ``field`` (its key carries the form's reset generation)."""
    found = [n for n in at.number_input if n.key and n.key.endswith(f"::{field}")]
    assert len(found) == 1, [n.key for n in at.number_input]
    return found[0]


def errors(at: AppTest) -> list[str]:
    """The page's error boxes as the user reads them (markdown escapes removed)."""
    return [re.sub(r"\\(.)", r"\1", e.value) for e in at.error]


def text(at: AppTest, field: str):
    return next(t for t in at.text_input if t.key and t.key.endswith(f"::{field}"))


def test_overlap_larger_than_the_chunk_is_shown_under_the_field_and_not_saved(data_dir):
    at = settings_page()
    number(at, "chunk_tokens").set_value(50)
    number(at, "chunk_overlap").set_value(500)
    at.run()
    found = errors(at)
    assert "must be smaller than Chunk size (tokens) (500 ≥ 50)" in found  # the slot under the field
    assert any(e.startswith("Not saved until fixed — Chunk overlap (tokens)") for e in found), found
    assert at.button(key="settings_save").disabled  # a browser cannot press it
    assert not (data_dir / "default" / "settings.json").exists()
    assert not any("Saved" in s.value for s in at.success)


def test_a_value_outside_its_bounds_says_the_bounds_inline(data_dir):
    at = settings_page()
    number(at, "chunk_tokens").set_value(-5).run()
    assert "must be between 50 and 8,000 (got -5)" in errors(at)
    assert "Allowed: 50 – 8,000." in number(at, "chunk_tokens").help


def test_a_base_url_that_is_not_a_url_and_a_missing_model_are_refused_by_label(data_dir):
    at = settings_page()
    at.selectbox(key="set::default::provider").set_value("openai").run()  # the chat fields open
    text(at, "llm_base_url").input("not a url")
    at.run()
    found = errors(at)
    assert "not a URL: give http(s)://host[:port]/v1" in found, found
    assert "required when Provider is 'openai'" in found, found
    summary = next(e for e in found if e.startswith("Not saved"))
    assert "Chat model: required" in summary and "LLM model" not in summary


def test_reset_to_defaults_resets_every_field_number_boxes_included(data_dir):
    at = settings_page()
    number(at, "chunk_tokens").set_value(50)
    number(at, "chunk_overlap").set_value(40)
    number(at, "path_alpha").set_value(0.5)
    at.selectbox(key="set::default::vector_search").set_value("approximate")
    at.button(key="settings_save").click().run()
    assert json.loads((data_dir / "default" / "settings.json").read_text())["chunk_tokens"] == 50
    number(at, "chunk_overlap").set_value(45).run()  # an unsaved edit too
    before = {box.key for box in at.number_input}
    at.button(key="settings_reset").click().run()
    # a browser keeps a number box's typed value for as long as its key lives (AppTest does not model
    # that; it is what left 50 / 500 in the boxes): the reset draws every box under a new key
    assert not before & {box.key for box in at.number_input}
    defaults = Settings()
    for box in at.number_input:
        field = box.key.rsplit("::", 1)[1]
        assert box.value == getattr(defaults, field), field
    assert [s.value for s in at.selectbox if s.key.endswith("::vector_search")] == ["exact"]
    assert any("Defaults loaded" in i.value for i in at.info)
    at.run()  # the defaults stay in the form on the next rerun
    assert number(at, "chunk_tokens").value == 1200 and number(at, "chunk_overlap").value == 100
    at.button(key="settings_save").click().run()
    assert json.loads((data_dir / "default" / "settings.json").read_text())["chunk_tokens"] == 1200
