"""The answer entry point, kept at its historical place: ``core.answer.answer(result, ws, llm, cache)``.

Offline answers are extractive and built from each mode's own evidence (``core.answers``); with an
LLM the answer is generated (``core.llm.answers``).
"""
from __future__ import annotations

from core.answers import answer, extractive_answer

__all__ = ["answer", "extractive_answer"]
