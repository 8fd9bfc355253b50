"""``ModeSpec``: everything RAGScope knows about one retrieval mode, in one record.

A spec names the mode, the system it reproduces, a one-line blurb (the Compare and Inspect help
text), and three builders given as ``"module:attribute"`` references, imported only when first
used (so listing the modes imports no retrieval code):

- ``retriever``: a class (or zero-argument factory) whose instances have ``name``, ``params``
  (the names of the ``Settings`` fields the mode reads) and ``retrieve(ctx) -> RetrievalResult``;
- ``offline_answer``: ``(AnswerInputs, RetrievalResult) -> (picks, entries)``, the extractive
  answer builder of ``core.answers``;
- ``llm_answer``: ``RetrievalResult -> str``, the user message sent to the LLM (``core.llm.generated_answers``).

The ordered tuple of specs in ``core.retrieval.registry`` is the single list of modes; its order
is the display order. Adding a mode = one new retriever module plus one ``ModeSpec`` entry there.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any, Callable

from core.errors import RAGScopeError

NAME_PATTERN = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
RESERVED_NAMES = frozenset({"all", "bm25"})  # "all" selects every mode; "bm25" is the evaluation baseline


class ModeSpecError(RAGScopeError, ValueError):
    """A mode spec that cannot be used: bad name, unresolvable reference or undeclared setting."""


def resolve(ref: str) -> Any:
    """The object a ``"package.module:attribute"`` reference names (imported on demand)."""
    module_name, sep, attribute = ref.partition(":")
    if not sep or not module_name or not attribute:
        raise ModeSpecError(f"{ref!r} is not a 'module:attribute' reference")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ModeSpecError(f"cannot import {module_name!r} for {ref!r}: {exc}") from exc
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise ModeSpecError(f"{module_name!r} has no attribute {attribute!r} ({ref!r})") from None


@dataclass(frozen=True)
class ModeSpec:
    """One retrieval mode: its name, origin, blurb, retriever and answer builders (see the module doc)."""

    name: str
    system: str
    blurb: str
    retriever: str
    offline_answer: str = "core.answers.chunk_modes:naive_answer"
    llm_answer: str = "core.llm.generated_answers:context_then_question"

    def __post_init__(self) -> None:
        if not NAME_PATTERN.match(self.name) or self.name in RESERVED_NAMES:
            raise ModeSpecError(f"mode name {self.name!r} must be 1-32 lowercase letters, digits, '-' or '_', "
                                f"start with a letter and not be one of {', '.join(sorted(RESERVED_NAMES))}")
        if not self.blurb.strip() or "\n" in self.blurb:
            raise ModeSpecError(f"mode {self.name!r}: the blurb must be one non-empty line")
        for ref in (self.retriever, self.offline_answer, self.llm_answer):
            if ref.count(":") != 1:
                raise ModeSpecError(f"mode {self.name!r}: {ref!r} is not a 'module:attribute' reference")

    @property
    def label(self) -> str:
        """``name (system)``: how pickers and help texts name the mode."""
        return f"{self.name} ({self.system})" if self.system else self.name

    def help_text(self) -> str:
        """``system: blurb`` in one line (the Compare and Inspect help)."""
        return f"{self.system}: {self.blurb}" if self.system else self.blurb

    def build_retriever(self) -> Any:
        """A new retriever instance; checks its name and that it reads only declared ``Settings`` fields."""
        from core.settings import Settings

        retriever = resolve(self.retriever)()
        if getattr(retriever, "name", None) != self.name:
            raise ModeSpecError(f"{self.retriever} calls itself {getattr(retriever, 'name', None)!r}, "
                                f"its spec {self.name!r}")
        unknown = [p for p in getattr(retriever, "params", ()) if p not in Settings.model_fields]
        if unknown:
            raise ModeSpecError(f"mode {self.name!r} declares parameters that are not settings: {', '.join(unknown)}")
        return retriever

    def offline_builder(self) -> Callable[..., Any]:
        return resolve(self.offline_answer)

    def llm_builder(self) -> Callable[..., str]:
        return resolve(self.llm_answer)
