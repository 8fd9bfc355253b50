"""Answers of the two modes whose evidence is text rather than graph records.

* naive — its top chunks in rank order: every sentence of the first ``NAIVE_CHUNKS`` chunks is a
  candidate; the evidence lines are each chunk's best sentence, chunk by chunk ("chunk #1", …).
* ppr — the same, in HippoRAG 2's passage order, except that a passage whose best sentence scores below
  ``PPR_WEAK_HEAD`` gives up its place: the walk reaches passages through the question's entity nodes,
  so a high-ranked passage can say nothing the question asks ("The company supplies coffee to … Korea"
  reached through Korea); its line then competes by score with the other passages' further sentences.
* tree — E2GraphRAG's evidence: the selected summaries' sentences ("summary, level L"), the sentences
  of the leaf chunks that name the tree's query entities ("leaf (A, B)", those naming more of them
  score higher) and the other sentences of the first leaves, as evidence lines by score (a summary
  sentence restates its leaves: it leads only when it scores as high; ``SUMMARIES_FIRST`` puts the best
  two first, as before). A summary sentence has a role bonus (``scoring.ROLE``) and a leaf's other
  sentence none, so one holding the asked-for type near the question (the shape of a second hop's answer)
  gets the summary's bonus (``TYPED_LEAF_BONUS``): it no longer trails a summary sentence that merely
  restates the tree's neighbourhood. A summary sentence is matched to the stored sentence of one of the
  summary's leaves (the few closest to the question), so its typed mentions are known; an unmatched
  one is still quoted, citing the summary.
"""
from __future__ import annotations

from core.answers.inputs import AnswerInputs
from core.answers.layout import Entry, sentence_entry
from core.answers.question import sentence_stems
from core.answers.scoring import ROLE, Pick, best
from core.answers.sentences import MIN_WORDS, Sentence
from core.types import RetrievalResult, SummaryHit

NAIVE_CHUNKS = 8  # naive (and ppr, auto): chunks whose sentences are candidates (5 until issue 31: see docs/offline-answers.md)
TREE_SUMMARIES = 3  # tree: summaries read, in rank order
SUMMARY_LINES = 2  # tree: summary sentences quoted before the leaf sentences (with SUMMARIES_FIRST)
SUMMARIES_FIRST = False  # tree: summary lines before the leaf lines whatever their score (the order before issue 31, part 4)
SUMMARY_LEAVES = 6  # tree: leaves of a summary searched for its sentences' stored records
TREE_CHUNKS = 8  # tree: leaf chunks read, in rank order
TYPED_LEAF_BONUS = ROLE["summary"]  # tree: a leaf's other sentence with a wanted-type mention scores as a summary sentence (0: as before)
PPR_WEAK_HEAD = 0.7  # ppr: a passage's best sentence scoring below this loses its rank-order line (0: naive's order)


def chunk_picks(inp: AnswerInputs, result: RetrievalResult) -> tuple[list[Pick], list[Pick]]:
    """Every sentence of the first ``NAIVE_CHUNKS`` chunks, scored (the candidates), and each chunk's best
    sentence in the mode's rank order."""
    ids = [c.chunk_id for c in result.chunks[:NAIVE_CHUNKS]]
    candidates: list[Pick] = []
    heads: list[Pick] = []
    for rank, sentences in enumerate(inp.bank.get(ids).values()):
        picks = [inp.score(s, "chunk", rank, f"chunk #{rank + 1}") for s in sentences]
        candidates += picks
        top = best(picks)
        if top is not None:
            heads.append(top)
    return candidates, heads


def chunk_lines(heads: list[Pick], candidates: list[Pick], weak_below: float = 0.0) -> list[Entry]:
    """Evidence lines of a chunk mode: each chunk's best sentence (``heads``) in rank order, then the other
    candidates by score. A head scoring below ``weak_below`` keeps no rank-order line: it competes by score
    with the other candidates (0 or less: every head keeps its line)."""
    kept = [p for p in heads if p.score >= weak_below]
    texts = {p.sentence.text for p in kept}
    rest = sorted((p for p in candidates if p.sentence.text not in texts), key=lambda p: -p.score)
    return [sentence_entry(p) for p in kept + rest]


def naive_answer(inp: AnswerInputs, result: RetrievalResult) -> tuple[list[Pick], list[Entry]]:
    """Candidates and evidence lines of the naive mode."""
    candidates, heads = chunk_picks(inp, result)
    return candidates, chunk_lines(heads, candidates)


def ppr_answer(inp: AnswerInputs, result: RetrievalResult) -> tuple[list[Pick], list[Entry]]:
    """Candidates and evidence lines of the ppr mode: naive's, with a weak passage's line competing by
    score (``PPR_WEAK_HEAD``, see the module docstring)."""
    candidates, heads = chunk_picks(inp, result)
    return candidates, chunk_lines(heads, candidates, PPR_WEAK_HEAD)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def summary_sentences(inp: AnswerInputs, summary: SummaryHit) -> list[Sentence]:
    """A summary's sentences, each the stored record of a leaf sentence when one matches (the summary's
    text is cut at those sentences; the rest is split by ``split_known``'s regex fallback)."""
    from core.indexing.summarize import split_known

    leaves = inp.closest_chunks(summary.leaf_chunk_ids, SUMMARY_LEAVES)
    records = inp.bank.sentences(leaves)
    stored = {_norm(s.text): s for s in records}
    where = summary.doc_name or "the corpus"
    out: list[Sentence] = []
    for i, text in enumerate(split_known(summary.text, [s.text for s in records])):
        text = " ".join(text.lstrip("#-*•> \t").split())
        if len(text.split()) < MIN_WORDS:
            continue
        out.append(stored.get(_norm(text)) or Sentence(
            text, f"summary:{summary.node_id}", i, f"summary of {where}, level {summary.level}",
            stems=sentence_stems(text)))
    return out


def tree_answer(inp: AnswerInputs, result: RetrievalResult) -> tuple[list[Pick], list[Entry]]:
    """Candidates and evidence lines of the tree mode."""
    graph = inp.graph
    names: dict[str, str] = {}
    for entity in result.entities:
        key = entity.key
        if key:
            names[inp.bank.aliases.get(key, key) if key not in graph else key] = entity.name or key
    query_keys = set(names) | set(inp.frame.entity_keys)
    summary_picks: list[Pick] = []
    for rank, summary in enumerate(result.summaries[:TREE_SUMMARIES]):
        label = f"summary, level {summary.level}"
        summary_picks += [inp.score(s, "summary", rank, label)
                          for s in summary_sentences(inp, summary)]
    leaf_picks: list[Pick] = []
    ids = [c.chunk_id for c in result.chunks[:TREE_CHUNKS]]
    for rank, sentences in enumerate(inp.bank.get(ids).values()):
        for s in sentences:
            held = [k for k in s.keys if k in query_keys]
            if not held:
                continue
            shown = ", ".join(sorted(names.get(k) or graph.attributes(k).get("name", k) if k in graph else k for k in held))
            pick = inp.score(s, "leaf", rank, f"leaf ({shown})")
            pick.score = round(pick.score + 0.2 * (len(held) - 1), 6)
            leaf_picks.append(pick)
    # the other sentences of the first leaves (a second hop's answer rarely names the query entities)
    other_picks: list[Pick] = []
    named = {(p.sentence.chunk_id, p.sentence.ord) for p in leaf_picks}
    for rank, sentences in enumerate(inp.bank.get(ids[:NAIVE_CHUNKS]).values()):
        other_picks += [inp.score(s, "chunk", rank, f"leaf chunk #{rank + 1}")
                        for s in sentences if (s.chunk_id, s.ord) not in named]
    for pick in other_picks:
        if pick.typed:  # a wanted-type mention, the sentence near the question: the shape of the answer
            pick.score = round(pick.score + TYPED_LEAF_BONUS, 6)
    return summary_picks + leaf_picks + other_picks, tree_lines(summary_picks, leaf_picks, other_picks)


def tree_lines(summary_picks: list[Pick], leaf_picks: list[Pick], other_picks: list[Pick]) -> list[Entry]:
    """Tree's evidence lines: with ``SUMMARIES_FIRST`` (the order before issue 31's fourth part) the
    ``SUMMARY_LINES`` best summary sentences, then the leaf sentences naming the query entities, then the
    leaves' other sentences, each group by score; by default all of them by score (a summary sentence
    keeps its place only when it scores as high as the leaf sentences: it restates its leaves)."""
    by_score = sorted(summary_picks + leaf_picks + other_picks, key=lambda p: -p.score)
    if SUMMARIES_FIRST:
        by_score = (sorted(summary_picks, key=lambda p: -p.score)[:SUMMARY_LINES]
                    + sorted(leaf_picks, key=lambda p: -p.score) + sorted(other_picks, key=lambda p: -p.score))
    return [sentence_entry(p) for p in by_score]
