"""Answers of the LightRAG modes (local, global, hybrid, mix) from their entities and relations.

A multi-hop question names one entity and asks about another that the corpus links to it ("the
company founded by Ilse Marren" → Brightwater Robotics → who bought it). The mode's retrieved
relations are where that link is:

1. bridges — each retrieved relation between a question entity Q and another entity X, pre-ranked
   by how much of the question its keywords and description share plus the cosine of its stored
   vector to the question (its rank in the mode breaks ties), the best ``BRIDGES`` kept. A bridge's sentences are the sentences of its source chunks (the few
   closest to the question, the mode's own chunks first) that name both Q and X: "bridge Q → X".
2. about — for the ``ABOUT`` strongest bridges, the sentences of X's own source chunks that name X
   (directly or through an opening pronoun) without naming Q: "about X". The second hop's answer is
   usually there and does not name Q; X itself is never bolded as the answer there.
3. relation statements — with no bridge (no question entity, or none among the retrieved relations),
   the first ``RELATIONS`` relations in the mode's order and the sentences that name both endpoints.
4. the mode's own context chunks, first ``CONTEXT_CHUNKS``: every sentence, labelled with what
   brought the chunk ("entity chunk #n", "relation chunk #n", mix's "naive chunk #n"); from the later
   chunks only the sentences that say the question's verb, with its sides filled by what the question names
   or leads to (or, without a verb, its rank pairs: "the *first* keeper"), and a mention of the asked-for type
   (``_further``, ``FURTHER_CHUNKS``).

5. descriptions — the context shows each retrieved entity's description (sentences of its source chunks);
   for the first ``DESCRIBED`` entities, those sentences (read from the entity's ``DESCRIPTION_CHUNKS``
   source chunks closest to the question) are evidence lines ("entity X"), never the first line.

Evidence lines: the first ``GRAPH_LINES`` of [each bridge in order of its best sentence's score, its
sentence then the best sentence about X; or the relation statements], then the chunk and description
sentences by score, then the rest of the graph lines.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from core.answers.inputs import AnswerInputs
from core.answers.layout import Entry, sentence_entry
from core.answers.question import sentence_stems
from core.answers.scoring import Pick, best
from core.types import RelationHit, RetrievalResult

BRIDGES = 10  # bridge relations read, after the pre-rank
PRE_RANK_SIMILARITY = 1.0  # weight of the relation vector's cosine to the question in the pre-rank
BRIDGE_CHUNKS = 3  # source chunks read per bridge relation
ABOUT = 4  # bridge entities whose own sentences are read
ABOUT_CHUNKS = 3  # source chunks read per bridge entity
RELATIONS = 6  # relation statements read when there is no bridge
CONTEXT_CHUNKS = 5  # own context chunks whose sentences are candidates
GRAPH_LINES = 2  # bridge / about / relation lines shown before the best chunk sentences
DESCRIBED = 6  # retrieved entities whose description sentences may be evidence lines
DESCRIPTION_CHUNKS = 2  # source chunks read per described entity
FURTHER_RANKS = True  # … and, for a question without a focus verb, those saying its last hop's rank pairs (False: none)
FURTHER_CHUNKS = True  # the later context chunks' sentences saying the question's verb of what it leads to (False: none)


def _ends(relation: RelationHit) -> tuple[str, str]:
    return relation.source_key, relation.target_key


def _name(graph: Any, key: str) -> str:
    return graph.name(key)


def _pre_rank(inp: AnswerInputs, relation: RelationHit, other: str) -> float:
    words = " ".join([" ".join(relation.keywords), _name(inp.graph, other), str(relation.description)[:600]])
    stems = sentence_stems(words)
    total = sum(inp.frame.terms.values()) or 1.0
    lexical = sum(w for t, w in inp.frame.terms.items() if t in stems) / total
    return lexical + PRE_RANK_SIMILARITY * inp.pair_similarity(*_ends(relation))


def _sources(inp: AnswerInputs, relation: RelationHit, a: str, b: str) -> list[str]:
    ids: Optional[Sequence[str]] = relation.source_chunk_ids
    if not ids and inp.graph.has_relation(a, b):
        ids = inp.graph.relation_attributes(a, b).get("source_chunk_ids")
    return list(ids or [])


def _statements(inp: AnswerInputs, ids: list[str], a: str, b: str, role: str, rank: int, label: str) -> list[Pick]:
    """Sentences of these chunks naming both ``a`` and ``b``, scored."""
    return [inp.score(s, role, rank, label)
            for s in inp.bank.sentences(ids) if a in s.keys and b in s.keys]


def _described(inp: AnswerInputs, result: RetrievalResult, own: list[str]) -> list[Pick]:
    """Evidence-only picks: the description sentences of the first ``DESCRIBED`` retrieved entities."""
    graph = inp.graph
    return [pick for entity in result.entities[:DESCRIBED] if entity.key and entity.key in graph
            for pick in inp.described(entity.key, entity.description, "chunk", f"entity {graph.name(entity.key)}",
                                      own, DESCRIPTION_CHUNKS)]


def _further(inp: AnswerInputs, own: list[str], via: dict[str, str], candidates: list[Pick]) -> list[Pick]:
    """Candidates from the context chunks past the first ``CONTEXT_CHUNKS``, each holding a mention of the
    asked-for type and stating the question's relation: every focus term of the question ("Who *founded* …") with
    the question's verb's sides filled by what the question names or leads to in the mode's evidence
    (``arguments.argument_fit`` above 0: the described side's head noun, "the Velmora Marine *Institute*" for "the
    research institute …", or an entity one or two hops away), so a sentence saying the verb of unrelated entities
    is not read in; or, for a question without a focus verb ("Who was the *first* keeper of …"), every rank pair of
    its last hop said the same way ("The *first* principal *keeper* was …", ``scoring.rank_agreement``)."""
    import functools

    from core.answers.arguments import _layers, argument_fit, asked_relation
    from core.answers.cache import parsed_once
    from core.answers.scoring import rank_agreement

    frame = inp.frame
    if not frame.groups or not (frame.focus or (FURTHER_RANKS and frame.ranks)):
        return []
    asked = parsed_once(inp.cache, "asked_relation", frame.text, asked_relation) if frame.focus else None
    if frame.focus and asked is None:
        return []
    layers = functools.cache(lambda: _layers(candidates, frame, inp.graph, inp.cache))
    out: list[Pick] = []
    for rank, (chunk_id, sentences) in enumerate(inp.bank.get(own[CONTEXT_CHUNKS:]).items(), start=CONTEXT_CHUNKS):
        label = f"{via[chunk_id]} chunk #{rank + 1}".strip()
        for sentence in sentences:
            if frame.focus and not frame.focus <= sentence.stems:
                continue
            if not frame.focus and rank_agreement(frame, sentence) < 1.0:
                continue
            pick = inp.score(sentence, "chunk", rank, label)
            if pick.typed and (asked is None or argument_fit(pick, asked, frame, inp.graph, layers) > 0):
                out.append(pick)
    return out


def lightrag_answer(inp: AnswerInputs, result: RetrievalResult) -> tuple[list[Pick], list[Entry]]:
    """Candidates and evidence lines of a LightRAG mode."""
    graph, question = inp.graph, inp.frame.entity_keys
    own = [c.chunk_id for c in result.chunks]
    bridges: list[tuple[float, int, str, str, RelationHit]] = []
    for rank, relation in enumerate(result.relations):
        a, b = _ends(relation)
        if (a in question) == (b in question):
            continue
        q, x = (a, b) if a in question else (b, a)
        bridges.append((-_pre_rank(inp, relation, x), rank, q, x, relation))
    bridges.sort(key=lambda t: (t[0], t[1]))
    found: list[tuple[Pick, str, list[Pick]]] = []  # (best bridge sentence, X, all its sentences)
    for _, rank, q, x, relation in bridges[:BRIDGES]:
        ids = inp.closest_chunks(_sources(inp, relation, q, x), BRIDGE_CHUNKS, own)
        picks = _statements(inp, ids, q, x, "bridge", rank, f"bridge {_name(graph, q)} → {_name(graph, x)}")
        top = best(picks)
        if top is not None:
            found.append((top, x, picks))
    found.sort(key=lambda t: -t[0].score)
    candidates = [p for _, _, picks in found for p in picks]
    entries: list[Entry] = []
    about_done: set[str] = set()
    for top, x, _ in found:
        entries.append(sentence_entry(top))
        if x in about_done or len(about_done) >= ABOUT:
            continue
        about_done.add(x)
        source_ids = (graph.attributes(x).get("source_chunk_ids") or []) if x in graph else []
        ids = inp.closest_chunks(source_ids, ABOUT_CHUNKS, own)
        about = [inp.score(s, "about", 0, f"about {_name(graph, x)}", exclude=(x,))
                 for s in inp.bank.sentences(ids) if x in s.keys and not (s.keys & question)]
        candidates += about
        top_about = best(about)
        if top_about is not None:
            entries.append(sentence_entry(top_about))
    if not found:
        for rank, relation in enumerate(result.relations[:RELATIONS]):
            a, b = _ends(relation)
            ids = inp.closest_chunks(_sources(inp, relation, a, b), BRIDGE_CHUNKS, own)
            picks = _statements(inp, ids, a, b, "relation", rank, f"relation {_name(graph, a)} — {_name(graph, b)}")
            candidates += picks
            top_relation: Optional[Pick] = best(picks)
            if top_relation is not None:
                entries.append(sentence_entry(top_relation))
    chunk_picks: list[Pick] = []
    via = {c.chunk_id: c.via or "" for c in result.chunks}
    for rank, (chunk_id, sentences) in enumerate(inp.bank.get(own[:CONTEXT_CHUNKS]).items()):
        label = f"{via[chunk_id]} chunk #{rank + 1}".strip()  # who brought it: entity, relation, naive (mix)
        chunk_picks += [inp.score(s, "chunk", rank, label) for s in sentences]
    candidates += chunk_picks + (_further(inp, own, via, candidates) if FURTHER_CHUNKS else [])
    described = _described(inp, result, own)
    chunk_entries = [sentence_entry(p) for p in sorted(chunk_picks + described, key=lambda p: -p.score)]
    return candidates, entries[:GRAPH_LINES] + chunk_entries + entries[GRAPH_LINES:]
