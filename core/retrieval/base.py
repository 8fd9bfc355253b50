"""Transitional (issue 37): ``core.api.run_modes`` still builds its question object as
``core.retrieval.base.QueryContext(ws, question, settings=…, keywords=…)``. The question object is
now ``core.retrieval.query.QueryContext``, built with its strategies by
``core.retrieval.registry.query_context``; once the front door calls that, delete this module."""
from __future__ import annotations

from core.retrieval.registry import query_context as QueryContext  # noqa: N812

__all__ = ["QueryContext"]
