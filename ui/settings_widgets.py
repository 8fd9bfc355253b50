"""One Streamlit widget for one ``core.settings.Settings`` field, shared by the Settings page and
Inspect's per-mode parameter overrides.

The field's type picks the widget: a ``Literal`` a select box, ``bool`` a checkbox, ``int`` and
``float`` a number input bounded by the field's ``ge``/``gt``/``le``/``lt`` constraints
(``core.settings.field_bounds``), a ``list`` a multiselect (entity types, new ones allowed), anything
else a text input. A float whose range spans at most ``FRACTION_SPAN`` (a fraction such as α, θ, a cosine
or the temperature) steps by ``fine_step`` and shows three decimals; a wider float (a timeout, a size in
MB) steps by 1.

With ``enforce_bounds`` (Inspect) the browser keeps a number within those bounds; without it (the
Settings page) any number reaches the script, where ``core.settings.validate_settings`` refuses one
outside its bounds with a message naming them, shown under the field (a bounded browser box only
turns red and names its bounds on hover). The help text always ends with the allowed range.

A number input is given ``value=current``: Streamlit keys its identity on ``key`` alone, so a typed
value survives reruns, and emptying the box brings back ``current`` (the widget's default) rather
than the lowest allowed value. The other widgets are seeded through ``st.session_state[key]`` when the
key is not there yet. Either way a page drops its keys to reload the form from new values.
"""
from __future__ import annotations

import typing
from typing import Any, Optional

import streamlit as st

from core.settings import DEFAULT_ENTITY_TYPES, Settings, field_bounds
from ui.settings_labels import label_for

FINE_STEP = 0.05  # +/- step of a fraction-like float (the Settings page's)
FRACTION_SPAN = 2.0  # a float whose allowed range is at most this wide steps finely


def _float_or_none(bound: Optional[float]) -> Optional[float]:
    return float(bound) if bound is not None else None


def _is_fraction(low: Optional[float], high: Optional[float]) -> bool:
    return low is not None and high is not None and high - low <= FRACTION_SPAN


def range_text(field: str) -> str:
    """The allowed range of a numeric settings field, e.g. "50 – 8,000"."""
    low, high = field_bounds(field)
    low_text = "…" if low is None else f"{low:,}"
    high_text = "…" if high is None else f"{high:,}"
    return f"{low_text} – {high_text}"


def _number_widget(field: str, annotation: type, current: Any, key: str, label: str, help_: Optional[str],
                   fine_step: float, enforce_bounds: bool, disabled: bool = False) -> Any:
    """The number input of an int or float field (bounds from the field's constraints)."""
    help_ = f"{help_ or ''} Allowed: {range_text(field)}.".strip()
    low, high = field_bounds(field)
    if not enforce_bounds:
        fraction = annotation is float and _is_fraction(low, high)
        low = high = None
        if fraction:
            return st.number_input(label, value=_float_or_none(current), step=fine_step, format="%.3f", key=key,
                                   help=help_, disabled=disabled)
    if annotation is int:
        return st.number_input(label, value=current, min_value=low, max_value=high, step=1, key=key, help=help_, disabled=disabled)
    low, high, current = _float_or_none(low), _float_or_none(high), _float_or_none(current)
    if _is_fraction(low, high):  # a fraction: fine steps, three decimals
        return st.number_input(label, value=current, min_value=low, max_value=high, step=fine_step, format="%.3f",
                               key=key, help=help_, disabled=disabled)
    return st.number_input(label, value=current, min_value=low, max_value=high, step=1.0, key=key, help=help_, disabled=disabled)


def settings_field_widget(field: str, current: Any, key: str, *, label: Optional[str] = None,
                          help_text: Optional[str] = None, fine_step: float = FINE_STEP,
                          enforce_bounds: bool = True, disabled: bool = False) -> Any:
    """Draw the widget of settings field ``field`` under widget key ``key`` and return its value
    (``disabled``: shown greyed out, its value still returned).

    ``current`` is the value shown the first time (when ``key`` is not in the session state yet).
    ``label`` defaults to the human label (``ui.settings_labels.label_for``), ``help_text`` to the
    field's description; ``fine_step`` is the step of a float bounded on both sides;
    ``enforce_bounds`` False lets a number outside the field's bounds through to the validator.
    """
    annotation = Settings.model_fields[field].annotation
    label = label or label_for(field)
    help_ = (help_text if help_text is not None else Settings.model_fields[field].description) or None
    if annotation in (int, float):
        return _number_widget(field, annotation, current, key, label, help_, fine_step, enforce_bounds, disabled)
    if key not in st.session_state:
        st.session_state[key] = list(current) if isinstance(current, list) else current
    if typing.get_origin(annotation) is typing.Literal:
        return st.selectbox(label, list(typing.get_args(annotation)), key=key, help=help_, disabled=disabled)
    if annotation is bool:
        return st.checkbox(label, key=key, help=help_, disabled=disabled)
    if typing.get_origin(annotation) is list:
        options = list(dict.fromkeys(list(DEFAULT_ENTITY_TYPES) + list(st.session_state[key])))
        return st.multiselect(label, options, key=key, help=help_, accept_new_options=True, disabled=disabled)
    return st.text_input(label, key=key, help=help_, disabled=disabled)
