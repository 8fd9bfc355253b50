"""Explanations as data: a retrieval mode's trace is a list of ``TraceEvent(stage, event, data)``
records. Logic and tests read the records; the UI and the CLI show ``.text()``.

The wording of each event lives in one table (``TEXTS``; the retrieval modes' events are registered
by ``core.retrieval.trace_text``): a ``str.format`` template over the event's data, or a function of
it when the sentence depends on the values. ``branch`` names the part of a combined mode that
emitted the event (hybrid and mix: "local" or "global") and prefixes its text."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Union

Template = Union[str, Callable[[Mapping[str, Any]], str]]
TEXTS: dict[str, Template] = {"note": "{text}"}  # "note": free text (modes added from outside core)


def register_texts(texts: Mapping[str, Template]) -> None:
    """Add the wording of some events (event name -> template or function of the data)."""
    TEXTS.update(texts)


@dataclass
class TraceEvent:
    """One step of a retrieval: the pipeline stage, what happened there, and the values involved."""

    stage: str  # e.g. "keywords", "seeds", "relations", "chunks", "budgets", "flow", "h_loop"
    event: str  # the event's name, a key of ``TEXTS``
    data: dict[str, Any] = field(default_factory=dict)
    branch: str = ""  # the combined mode's branch that emitted it ("local" / "global"), else ""

    def text(self) -> str:
        """The event as one line of the trace shown to users."""
        template = TEXTS.get(self.event)
        if template is None:
            body = f"{self.event}: " + ", ".join(f"{k}={v}" for k, v in self.data.items())
        elif isinstance(template, str):
            body = template.format(**self.data)
        else:
            body = template(self.data)
        return f"{self.branch}: {body}" if self.branch else body

    def to_dict(self) -> dict[str, Any]:
        """The record as JSON-ready data (values kept as they are: numbers, strings, lists)."""
        return {"stage": self.stage, "event": self.event, "data": dict(self.data), "branch": self.branch}


def note(text: str, stage: str = "") -> TraceEvent:
    """A free-text trace line (for modes outside core that have no registered wording)."""
    return TraceEvent(stage, "note", {"text": text})


def trace_text(events: list[TraceEvent]) -> list[str]:
    """The trace's lines as shown to users."""
    return [event.text() for event in events]
