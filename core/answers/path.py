"""Answers of the path mode (PathRAG) from its kept paths.

For each kept path, in the order the mode kept them (most relevant first), every edge A–B is
supported by the best-scoring sentence of its source chunks (the few closest to the question, the
mode's own source chunks first) that names both A and B. The path becomes one evidence line, a
chain::

    path #1: Ilse Marren —[Brightwater … was founded in 2011 by Ilse Marren … [doc, chunk 1]]→ Brightwater Robotics
             —[In 2019 Brightwater was acquired by Stellan Industries … [doc, chunk 2]]→ Stellan Industries

An edge no stored sentence supports shows its relation keywords instead. The first line is the best
edge sentence or the best sentence of the mode's source chunks (its Sources section; "node X" when it
names a node of those paths, with no path a retrieved node). The evidence lines are the chains of the
first ``CHAIN_LINES`` paths, then by score the source sentences and the sentences of the first
``DESCRIBED_NODES`` path nodes' descriptions (the context shows them; read from each node's
``DESCRIPTION_CHUNKS`` source chunks closest to the question; evidence lines only, never the first line).
"""
from __future__ import annotations

from core.answers.inputs import AnswerInputs
from core.answers.layout import Entry, quoted, sentence_entry
from core.answers.scoring import Pick, best
from core.types import RetrievalResult

PATHS = 8  # kept paths turned into chains
EDGE_CHUNKS = 3  # source chunks read per path edge
SOURCE_CHUNKS = 6  # own source chunks (the Sources section) whose sentences are candidates
CHAIN_LINES = 1  # chains shown before the best source sentences
DESCRIBED_NODES = 6  # nodes of the kept paths whose description sentences may be evidence lines
DESCRIPTION_CHUNKS = 2  # source chunks read per described node


def _edge(inp: AnswerInputs, a: str, b: str, own: list[str], rank: int, label: str, before: list[str]
          ) -> list[Pick]:
    """Scored sentences supporting the edge a–b; the nodes ``before`` it on the question's side of the
    path are where the question comes from, so they are not the answer."""
    graph = inp.graph
    if not graph.has_relation(a, b):
        return []
    ids = inp.closest_chunks(graph.relation_attributes(a, b).get("source_chunk_ids") or [], EDGE_CHUNKS, own)
    return [inp.score(s, "edge", rank, label, exclude=before)
            for s in inp.bank.sentences(ids) if a in s.keys and b in s.keys]


def _question_side(keys: list[str], i: int, question: frozenset[str]) -> list[str]:
    """The nodes between the path's question entity and edge i (keys[i]–keys[i+1]), the edge's end
    nearer to the question included: the question comes from there, so they are not its answer.
    Nothing when no question entity lies on the path (its direction says nothing then)."""
    at = next((j for j, k in enumerate(keys) if k in question), None)
    if at is None:
        return []
    return keys[at:i + 1] if at <= i else keys[i + 1:at + 1]


def _keywords(inp: AnswerInputs, a: str, b: str) -> str:
    data = inp.graph.relation_attributes(a, b) if inp.graph.has_relation(a, b) else {}
    words = ", ".join((data.get("keywords") or [])[:4])
    return f"related: {words}" if words else "related"


def _described(inp: AnswerInputs, result: RetrievalResult, own: list[str], bridges: set[str]) -> list[Pick]:
    """Evidence-only picks: the description sentences of the kept paths' first ``DESCRIBED_NODES`` nodes."""
    graph = inp.graph
    nodes = list(dict.fromkeys(k for path in result.paths[:PATHS] for k in path.keys))
    return [pick for key in nodes[:DESCRIBED_NODES] if key in graph
            for pick in inp.described(key, graph.attributes(key).get("description"), "node", f"node {graph.name(key)}",
                                      own, DESCRIPTION_CHUNKS, exclude=bridges)]


def path_answer(inp: AnswerInputs, result: RetrievalResult) -> tuple[list[Pick], list[Entry]]:
    """Candidates and evidence lines (one chain per path) of the path mode."""
    own = [c.chunk_id for c in result.chunks]
    candidates: list[Pick] = []
    entries: list[Entry] = []
    for rank, path in enumerate(result.paths[:PATHS]):
        keys, names = path.keys, path.nodes
        label = f"path #{path.rank}"
        parts = [names[0] if names else ""]
        quotes: set[tuple[str, int]] = set()
        for i, (a, b) in enumerate(zip(keys, keys[1:])):
            picks = _edge(inp, a, b, own, rank, label, _question_side(keys, i, inp.frame.entity_keys))
            candidates += picks
            top = best(picks)
            if top is not None:
                quotes.add((top.sentence.chunk_id, top.sentence.ord))
                parts.append(f" —[{quoted(top)}]→ {names[i + 1]}")
            else:
                parts.append(f" —[{_keywords(inp, a, b)}]→ {names[i + 1]}")
        if len(parts) > 1:
            entries.append(Entry(f"{label}: " + "".join(parts), quotes | {("path", rank)}))
    # the Sources section: every sentence of the mode's source chunks, those naming a node of a kept
    # path (with no path: a retrieved node) labelled with it: PathRAG describes every node of a path
    nodes = {k for path in result.paths[:PATHS] for k in path.keys}
    if not result.paths:
        nodes = {e.key for e in result.entities} - {""}
    # in a multi-hop question the entities one hop from a question entity on a kept path are bridges:
    # the question asks about them, not for them
    question = inp.frame.entity_keys
    bridges: set[str] = set()
    if inp.frame.multi_hop:
        for path in result.paths[:PATHS]:
            keys = path.keys
            bridges |= {b for a, b in zip(keys, keys[1:]) if a in question} | {a for a, b in zip(keys, keys[1:])
                                                                               if b in question}
    bridges -= set(question)
    source_picks: list[Pick] = []
    for rank, sentences in enumerate(inp.bank.get(own[:SOURCE_CHUNKS]).values()):
        for s in sentences:
            held = sorted(s.keys & nodes)
            if held:
                held_names = ", ".join(inp.graph.name(k) for k in held[:3])
                source_picks.append(inp.score(s, "node", rank, f"node {held_names}", exclude=bridges))
            else:
                source_picks.append(inp.score(s, "chunk", rank, f"source #{rank + 1}", exclude=bridges))
    candidates += source_picks
    described = _described(inp, result, own, bridges)
    lines = sorted(source_picks + described, key=lambda p: -p.score)
    entries = entries[:CHAIN_LINES] + [sentence_entry(p) for p in lines]
    return candidates, entries
