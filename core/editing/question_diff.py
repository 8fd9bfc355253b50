"""One question before and after the graph edits (issue 33): what the last edit(s) changed in every mode's
evidence, for Compare and Inspect.

The "before" index is the one ``core.editing.impact.workspace_before`` gives: a temporary copy of the
workspace with every active edit numbered ``since`` or later undone (default: the last active edit only).
The question runs on the copy and on the workspace itself with the same settings and offline keywords,
each mode answered extractively (no LLM: an LLM answer could change without any edit), and per mode
``compare_results`` lists what entered or left the top ``k``: evidence chunks (the ranked list the
evaluation scores), entities, relations and paths, and whether the answer changed. The workspace is
never written. Making the copy costs seconds (copying the folder, undoing the edits), so the last one is
kept (``BeforeCopies``) while the workspace's generation and the edits left out stay the same: the
next question on the same edits only runs the modes twice. It is deleted when it is replaced.
"""
from __future__ import annotations

import difflib
import threading
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from core.editing.impact import copy_before
from core.editing.log import edit_log
from core.editing.replay import EditError
from core.settings import Settings
from core.types import RetrievalResult
from core.workspace import Workspace

DEFAULT_TOP = 10
KINDS = ("chunks", "entities", "relations", "paths")


@dataclass
class Moved:
    """One item that entered the top ``k`` (``rank_after`` set) or left it (``rank_before`` set); the other
    rank is its place in the full list on the other side, None when it is not there at all."""

    key: str
    label: str
    rank_before: Optional[int]
    rank_after: Optional[int]


@dataclass
class ModeDiff:
    """What one mode retrieved differently after the edits."""

    mode: str
    entered: dict[str, list[Moved]] = field(default_factory=dict)  # kind -> items now in the top k
    left: dict[str, list[Moved]] = field(default_factory=dict)  # kind -> items no longer in the top k
    answer_before: str = ""
    answer_after: str = ""

    @property
    def answer_changed(self) -> bool:
        return self.answer_before.strip() != self.answer_after.strip()

    @property
    def answer_change(self) -> str:
        """"no", "first line" (the answer sentence itself) or "supporting lines" (what it quotes below)."""
        if not self.answer_changed:
            return "no"
        first = [text.strip().splitlines()[:1] for text in (self.answer_before, self.answer_after)]
        return "first line" if first[0] != first[1] else "supporting lines"

    def answer_lines(self) -> list[str]:
        """The answer lines only one side has: "− line" (before) and "+ line" (after), in order."""
        old, new = self.answer_before.strip().splitlines(), self.answer_after.strip().splitlines()
        return [f"{'−' if d[0] == '-' else '+'} {d[2:]}" for d in difflib.ndiff(old, new) if d[:1] in "-+"]

    @property
    def changed(self) -> bool:
        return self.answer_changed or any(self.entered.get(k) or self.left.get(k) for k in KINDS)


@dataclass
class QuestionDiff:
    """Every mode's ``ModeDiff`` for one question, and which edits the "before" side leaves out."""

    question: str
    since: int
    undone: list[int]
    top: int
    modes: list[ModeDiff]

    @property
    def changed_modes(self) -> list[str]:
        return [d.mode for d in self.modes if d.changed]


def _ranked(result: RetrievalResult, kind: str) -> list[tuple[str, str]]:
    """(key, label) in the mode's rank order for one kind of evidence, duplicates dropped."""
    if kind == "chunks":
        names = {c.chunk_id: f"{c.doc_name or c.doc_id} · chunk {c.order}" for c in result.chunks}
        pairs = [(cid, names.get(cid, cid)) for cid in result.evidence_chunk_ids]
    elif kind == "entities":
        pairs = [(e.key, e.name) for e in result.entities]
    elif kind == "relations":
        pairs = [("\x1f".join(sorted((r.source_key, r.target_key))), f"{r.source} — {r.target}")
                 for r in result.relations]  # a relation is undirected: path mode orients it along its path
    else:
        pairs = [("\x1f".join(p.keys), " → ".join(p.nodes)) for p in result.paths]
    return list(dict(pairs).items())


def _moves(before: list[tuple[str, str]], after: list[tuple[str, str]], top: int) -> tuple[list[Moved], list[Moved]]:
    rank_before = {key: i + 1 for i, (key, _) in enumerate(before)}
    rank_after = {key: i + 1 for i, (key, _) in enumerate(after)}
    top_before, top_after = {k for k, _ in before[:top]}, {k for k, _ in after[:top]}
    entered = [Moved(k, label, rank_before.get(k), rank_after[k]) for k, label in after[:top] if k not in top_before]
    left = [Moved(k, label, rank_before[k], rank_after.get(k)) for k, label in before[:top] if k not in top_after]
    return entered, left


def _answer_text(result: RetrievalResult) -> str:
    return result.answer.text if result.answer is not None else ""


def compare_results(before: dict[str, RetrievalResult], after: dict[str, RetrievalResult],
                    top: int = DEFAULT_TOP) -> list[ModeDiff]:
    """Per mode present on both sides: what entered or left the top ``top`` of each kind, and the answers."""
    out = []
    for mode, new in after.items():
        old = before.get(mode)
        if old is None:
            continue
        diff = ModeDiff(mode, answer_before=_answer_text(old), answer_after=_answer_text(new))
        for kind in KINDS:
            diff.entered[kind], diff.left[kind] = _moves(_ranked(old, kind), _ranked(new, kind), top)
        out.append(diff)
    return out


def run_offline(ws: Workspace, question: str, modes: Sequence[str], settings: Optional[Settings] = None,
                keywords: Any = None) -> dict[str, RetrievalResult]:
    """Every mode on ``question`` with extractive answers (the modes share one query context)."""
    from core.answers import answer
    from core.retrieval.registry import query_context, retrieve

    ctx = query_context(ws, question, settings=settings, keywords=keywords)
    results = {}
    for mode in modes:
        result = retrieve(ctx, mode)
        result.answer = answer(result, ws, None, ctx.state, ctx)
        results[mode] = result
    return results


def last_edit_id(ws: Workspace) -> int:
    """The number of the newest active edit (EditError when there is none)."""
    active = [e.id for e in edit_log(ws, include_undone=False)]
    if not active:
        raise EditError("this workspace has no active edit: nothing to compare")
    return max(active)


class BeforeCopies:
    """The last "before" copy, keyed on the workspace folder, its generation and the first edit left out;
    one at a time (a lock serialises the questions run on it)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.key: Optional[tuple[str, int, int]] = None
        self.held: Optional[tuple[Any, Workspace, list[int]]] = None

    def drop(self) -> None:
        """Close and delete the copy held (if any)."""
        if self.held is not None:
            tmp, copy, _ = self.held
            self.held, self.key = None, None
            copy.close()
            tmp.cleanup()

    def run(self, ws: Workspace, since: int, question: str, modes: Sequence[str], settings: Optional[Settings],
            keywords: Any) -> tuple[dict[str, RetrievalResult], list[int]]:
        """The modes' results on the copy before edit ``since`` (made, or reused), and the edits undone."""
        key = (str(ws.path.resolve()), ws.generation(), since)
        with self.lock:
            if self.key != key:
                self.drop()
                self.held = copy_before(ws, since)
                self.key = key
            assert self.held is not None
            _, copy, undone = self.held
            return run_offline(copy, question, modes, settings, keywords), undone


BEFORE = BeforeCopies()


def question_before_after(ws: Workspace, question: str, modes: Sequence[str], since: Optional[int] = None,
                          top: int = DEFAULT_TOP, settings: Optional[Settings] = None,
                          keywords: Any = None) -> QuestionDiff:
    """``question`` through ``modes`` on the index before edit ``since`` (default: the last edit) and on the
    index as it is; what each mode's top ``top`` gained and lost."""
    if not question.strip():
        raise ValueError("the question is empty")
    start = last_edit_id(ws) if since is None else int(since)
    before, undone = BEFORE.run(ws, start, question, modes, settings, keywords)
    after = run_offline(ws, question, modes, settings, keywords)
    return QuestionDiff(question, start, sorted(undone), top, compare_results(before, after, top))
