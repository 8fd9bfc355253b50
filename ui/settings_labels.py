"""Human labels for the settings fields (the Settings page and Inspect's parameter overrides).

The labels live in ``core.settings_labels`` so that the library's settings validator names fields the
way the pages show them; this module re-exports them for the UI. The help text stays the field's
description in ``core.settings``.
"""
from __future__ import annotations

from core.settings_labels import LABELS, label_for

__all__ = ["LABELS", "label_for"]
