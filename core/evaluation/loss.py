"""Where each mode lost the gold evidence: one stage per gold document (or gold chunk).

Stages, from best to worst (a document takes the best stage of its chunks):

* ``found`` — in the mode's ranked evidence within the top k (k = the largest cut-off evaluated);
* ``below_k`` — in the evidence (so in the context), but ranked below k;
* ``over_budget`` — selected for the context, then cut by a token budget;
* ``not_selected`` — reached (a source chunk of a retrieved entity, relation, path node or edge, or a
  tree candidate) but not among the chunks the mode selected;
* ``not_reached`` — never reached by the keyword / entity / relation / dense search.

The selected and reached chunks come from ``RetrievalResult.candidate_chunk_ids`` and
``reached_chunk_ids`` (``core.retrieval.funnel``). A result that reports neither (a mode written
without them) is read as having selected and reached exactly its evidence, so only ``found``,
``below_k`` and ``not_reached`` can occur for it.
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, Mapping, Optional, Sequence

from core.evaluation.metrics import ranked_documents
from core.types import RetrievalResult

STAGES = ("found", "below_k", "over_budget", "not_selected", "not_reached")
STAGE_LABELS = {"found": "found in the top k", "below_k": "in the context, ranked below k",
                "over_budget": "selected, cut by a token budget", "not_selected": "reached, not selected",
                "not_reached": "never reached"}
# Funnel levels: how many gold items got at least this far.
LEVELS = ("gold", "reached", "selected", "in context", "top k")
_LEVEL_OF = {"not_reached": 0, "not_selected": 1, "over_budget": 2, "below_k": 3, "found": 4}


def _funnel_lists(result: RetrievalResult) -> tuple[list[str], list[str]]:
    selected = list(result.candidate_chunk_ids)
    reached = list(result.reached_chunk_ids)
    if not selected and not reached:
        selected = reached = list(result.evidence_chunk_ids)
    return selected, reached


def _stage(in_top: bool, in_evidence: bool, in_selected: bool, in_reached: bool) -> str:
    if in_top:
        return "found"
    if in_evidence:
        return "below_k"
    if in_selected:
        return "over_budget"
    if in_reached:
        return "not_selected"
    return "not_reached"


def document_loss(result: RetrievalResult, gold_doc_ids: Sequence[str], chunk_doc: Mapping[str, str],
                  k: int) -> dict[str, str]:
    """``{gold_doc_id: stage}`` of one mode's result at cut-off ``k`` (documents ranked as in recall@k)."""
    ranked = ranked_documents(result.evidence_chunk_ids, dict(chunk_doc))
    top = set(ranked[:k])
    selected, reached = _funnel_lists(result)
    selected_docs = {chunk_doc.get(c) for c in selected}
    reached_docs = selected_docs | {chunk_doc.get(c) for c in reached}
    return {doc: _stage(doc in top, doc in ranked, doc in selected_docs, doc in reached_docs)
            for doc in dict.fromkeys(gold_doc_ids)}


def chunk_loss(result: RetrievalResult, gold_chunk_ids: Sequence[str], k: int) -> dict[str, str]:
    """``{gold_chunk_id: stage}`` at cut-off ``k`` over the ranked evidence chunks."""
    evidence = list(result.evidence_chunk_ids)
    top = set(evidence[:k])
    selected, reached = _funnel_lists(result)
    selected_set, reached_set = set(selected), set(reached) | set(selected)
    return {chunk: _stage(chunk in top, chunk in evidence, chunk in selected_set, chunk in reached_set)
            for chunk in dict.fromkeys(gold_chunk_ids)}


def stage_counts(losses: Iterable[Mapping[str, str]]) -> dict[str, int]:
    """How many gold items ended at each stage, over several ``{item: stage}`` maps (every stage listed)."""
    counts = Counter(stage for loss in losses for stage in loss.values())
    return {stage: int(counts.get(stage, 0)) for stage in STAGES}


def funnel(counts: Mapping[str, int]) -> dict[str, int]:
    """Stage counts → the funnel: gold items that got at least as far as each level."""
    out = {level: 0 for level in LEVELS}
    for stage, n in counts.items():
        for level in LEVELS[: _LEVEL_OF[stage] + 1]:
            out[level] += int(n)
    return out


def biggest_loss(counts: Mapping[str, int]) -> Optional[tuple[str, float]]:
    """(stage, share of gold items) of the loss stage that lost most, or None when nothing was lost."""
    total = sum(counts.values())
    losses = {stage: n for stage, n in counts.items() if stage != "found" and n}
    if not total or not losses:
        return None
    stage = max(losses, key=lambda s: (losses[s], -STAGES.index(s)))
    return stage, losses[stage] / total


def loss_sentence(mode: str, counts: Mapping[str, int], noun: str = "gold documents") -> str:
    """One line such as "path lost 60% of 10 gold documents at “never reached” (20% found in the top k)"."""
    total = sum(counts.values())
    if not total:
        return f"{mode}: no gold evidence to follow"
    worst = biggest_loss(counts)
    found = counts.get("found", 0) / total
    if worst is None:
        return f"{mode}: found all {total} {noun} in the top k"
    stage, share = worst
    return (f"{mode} lost {100 * share:.0f}% of {total} {noun} at “{STAGE_LABELS[stage]}” "
            f"({100 * found:.0f}% found in the top k)")
