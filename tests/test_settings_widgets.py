"""``ui.settings_widgets.settings_field_widget``: the one widget helper of the Settings page and of
Inspect's parameter overrides (AppTest on a tiny script that draws every settings field)."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.settings import Settings, field_bounds
from ui.settings_labels import label_for

ROOT = str(Path(__file__).resolve().parent.parent)


def _every_field(root: str, fine_step: float) -> None:
    import sys

    if root not in sys.path:
        sys.path.insert(0, root)
    from core.settings import Settings
    from ui.settings_widgets import settings_field_widget

    current = Settings(path_theta=0.1, chunk_tokens=900)
    for field in Settings.model_fields:
        if field != "version":
            settings_field_widget(field, getattr(current, field), f"w::{field}", fine_step=fine_step)


def _run(fine_step: float = 0.05) -> AppTest:
    at = AppTest.from_function(_every_field, args=(ROOT, fine_step), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_every_field_gets_its_label_bounds_and_current_value():
    at = _run()
    numbers = {w.key.split("::")[1]: w for w in at.number_input}
    assert set(numbers) == {f for f, i in Settings.model_fields.items() if i.annotation in (int, float)} - {"version"}
    for field, widget in numbers.items():
        low, high = field_bounds(field)
        assert widget.label == label_for(field)
        assert widget.help.startswith(Settings.model_fields[field].description) and "Allowed: " in widget.help
        assert widget.min == low and widget.max == high, field
    assert numbers["chunk_tokens"].value == 900 and numbers["path_theta"].value == 0.1
    assert at.selectbox(key="w::provider").value == "offline"
    assert at.checkbox(key="w::paper_strict").value is False
    assert at.multiselect(key="w::entity_types").value == Settings().entity_types


def test_fractions_step_finely_and_open_floats_by_one():
    at = _run()
    for field in ("llm_temperature", "cosine_threshold", "path_alpha", "path_theta", "seed_relative_cutoff"):
        widget = at.number_input(key=f"w::{field}")
        assert widget.step == 0.05 and widget.proto.format == "%.3f", field
    assert at.number_input(key="w::seed_relative_cutoff").max == 1.0  # was unbounded with step 1 on Settings
    assert at.number_input(key="w::llm_timeout_s").step == 1.0
    assert _run(fine_step=0.01).number_input(key="w::path_alpha").step == 0.01


def test_a_typed_value_survives_a_rerun_and_an_emptied_box_falls_back_to_the_current_value():
    at = _run()
    at.number_input(key="w::chunk_tokens").set_value(700).run()
    at.run()
    assert at.number_input(key="w::chunk_tokens").value == 700
    assert at.number_input(key="w::chunk_tokens").proto.default == 900  # what the browser restores when emptied
