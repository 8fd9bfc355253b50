"""Merge suggestions: pairs of entities that are probably one thing, ranked, each with its evidence.

Candidates come from three cheap blockings, never from all pairs: entities sharing a rare name word,
a short name equal to another's initials (an abbreviation), and each entity's nearest profile vectors.
Each candidate of a compatible type (the same type, or two types extractors often confuse, e.g. GPE and
LOC) is scored from

* its name evidence: containment (every word of one name in the other), abbreviation, or edit-distance
  similarity of the two keys;
* the cosine of the two profile vectors (the vectors the graph modes search: name and description);
* the share of source documents and of neighbours the two have in common.

Dismissed pairs are remembered in the workspace (keyed by the two entity keys, so they stay dismissed
through re-indexing) and never suggested again. ``rank`` is pure (profiles and a vector matrix in, ranked
suggestions out), so the benchmark times it at any size; ``suggestions`` reads a workspace.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Iterable, Optional, Sequence

import numpy as np

from core.storage.records import Pair, node_pair
from core.workspace import Workspace

DISMISSED_META = "merge_suggestions_dismissed"
MAX_BLOCK = 40  # a name word shared by more entities than this is too common to pair them on
NEIGHBOURS = 5  # nearest profile vectors looked at per entity
MIN_VECTOR_COSINE = 0.80  # a vector-only candidate must be at least this close
WEIGHTS = {"name": 0.55, "cosine": 0.20, "documents": 0.15, "neighbours": 0.10}
_STOP = frozenset("and at de del der des di du for in la le of on or the to van von y".split())
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*", re.UNICODE)
_NON_ALNUM = re.compile(r"[\W_]+", re.UNICODE)
_ROMAN = re.compile(r"(?=[ivxlcdm])m{0,4}(cm|cd|d?c{0,3})(xc|xl|l?x{0,3})(ix|iv|v?i{0,3})")
_DIRECTIONS = frozenset("north south east west northern southern eastern western northeast northwest southeast "
                        "southwest upper lower central new old greater".split())
# head words that make a longer name another thing than the shorter one it contains
_HEADS = frozenset("airport station county township city town village district province state river lake "
                   "bridge road street tower church cathedral university college school hospital hotel stadium "
                   "park museum company group club team party league award prize war battle peninsula island "
                   "islands mountain valley building house palace castle line railway highway".split())
# types an extractor often swaps for one another: a pair across these is still compatible
_GROUPS = ({"GPE", "LOC"}, {"ORG", "NORP"}, {"WORK_OF_ART", "PRODUCT"}, {"FAC", "ORG"})


@dataclass(frozen=True)
class Profile:
    """What the ranking needs of one entity."""

    key: str
    name: str
    type: str = ""
    documents: frozenset[str] = frozenset()
    chunks: int = 0
    neighbours: frozenset[str] = frozenset()


@dataclass
class Suggestion:
    """One candidate pair: ``merge`` folds into ``into`` (the entity with more sources, then the longer
    name); ``score`` in 0..1 and the evidence behind it."""

    merge: str
    into: str
    merge_name: str
    into_name: str
    merge_type: str
    into_type: str
    score: float
    name_reason: str
    name_score: float
    cosine: Optional[float]
    shared_documents: int
    shared_neighbours: int
    evidence: list[str] = field(default_factory=list)


def words(name: str) -> list[str]:
    """The content words of a name, lower-cased (stop words such as "of", "the" left out)."""
    return [w for w in _WORD.findall(name.casefold()) if w not in _STOP]


def _all_words(name: str) -> list[str]:
    return _WORD.findall(name.casefold())


def _squeeze(parts: Sequence[str]) -> str:
    return _NON_ALNUM.sub("", "".join(parts))


def compatible(a: str, b: str) -> bool:
    """Whether two entity types may name one thing (same, unknown, or an often-confused pair)."""
    a, b = (a or "").upper(), (b or "").upper()
    return a == b or not a or not b or any(a in g and b in g for g in _GROUPS)


def _initials(name: str) -> str:
    parts = words(name)
    return "".join(p[0] for p in parts) if len(parts) >= 2 else ""


def _marked(word: str) -> bool:
    """A word that tells two otherwise equal names apart: a number, an ordinal, a Roman numeral, a
    compass direction ("35th Chess Olympiad" is not the "36th", "West Columbia" not "Columbia")."""
    return len(word) == 1 or any(ch.isdigit() for ch in word) or bool(_ROMAN.fullmatch(word)) or word in _DIRECTIONS


def _close(a: str, b: str, at_least: float = 0.0) -> float:
    """The similarity ratio of two strings (0 when a cheap upper bound is already below ``at_least``)."""
    matcher = SequenceMatcher(None, a, b, autojunk=False)
    if matcher.real_quick_ratio() < at_least or matcher.quick_ratio() < at_least:
        return 0.0
    return matcher.ratio()


def name_evidence(a: str, b: str) -> tuple[str, float]:
    """(reason, score) of the name evidence that ``a`` and ``b`` are one thing; ("", 0) when none.

    Same words (stop words aside) 1.0; an abbreviation (one name the other's initials) 0.9; containment
    (every word of the shorter in the longer) 0.6-0.95 by the share of words, 0.5 when the longer adds a
    generic head word of its own ("Panama" / "Panama Airport"; not "Velmora Council" / "Velmora
    County Council"); a spelling variant (every word close to
    its counterpart, names of five letters or more) up to 0.85. Never when the names differ by a number,
    an ordinal, a Roman numeral or a direction."""
    wa, wb = words(a), words(b)
    squeezed_a, squeezed_b = _squeeze(wa), _squeeze(wb)
    if not squeezed_a or not squeezed_b:
        return "", 0.0
    if squeezed_a == squeezed_b:
        return ("same words", 1.0) if _squeeze(_all_words(a)) == _squeeze(_all_words(b)) else ("same words", 0.95)
    differing = set(wa) ^ set(wb)
    if any(_marked(w) for w in differing):
        return "", 0.0
    short, long_ = (wa, wb) if len(squeezed_a) <= len(squeezed_b) else (wb, wa)
    if len(short) == 1 and 2 <= len(short[0]) <= 6 and short[0] == _initials(" ".join(long_)):
        return "abbreviation", 0.9
    if set(short) <= set(long_):
        if long_[-1] != short[-1] and long_[-1] in _HEADS:  # "Panama" / "Panama Airport": another head
            return "containment", 0.5
        return "containment", round(0.6 + 0.35 * len(set(short)) / max(1, len(set(long_))), 4)
    if min(len(squeezed_a), len(squeezed_b)) < 5:
        return "", 0.0
    wanted = 0.8 if len(wa) == len(wb) else 0.88
    if len(wa) == len(wb) and any(_close(x, y, 0.75) < 0.75 for x, y in zip(wa, wb) if x != y):
        return "", 0.0
    ratio = _close(squeezed_a, squeezed_b, wanted)
    if ratio >= wanted:
        return "spelling", round(ratio * 0.85, 4)
    return "", 0.0


def _share(a: frozenset[str], b: frozenset[str]) -> tuple[int, float]:
    common = len(a & b)
    return common, (common / min(len(a), len(b)) if a and b else 0.0)


def _candidates(profiles: Sequence[Profile], vectors: Optional[np.ndarray]) -> dict[tuple[int, int], float]:
    """Index pairs worth scoring, with their vector cosine (NaN when not computed)."""
    pairs: dict[tuple[int, int], float] = {}
    blocks: dict[str, list[int]] = {}
    initials: dict[str, list[int]] = {}
    for i, p in enumerate(profiles):
        ws = words(p.name)
        for w in set(ws):
            blocks.setdefault("w:" + w, []).append(i)
        squeezed = _squeeze(ws)
        if len(squeezed) >= 6:
            blocks.setdefault("p:" + squeezed[:5], []).append(i)
        if init := _initials(p.name):
            initials.setdefault(init, []).append(i)
    for members in blocks.values():
        if 1 < len(members) <= MAX_BLOCK:
            for x, i in enumerate(members):
                for j in members[x + 1:]:
                    pairs.setdefault((i, j), float("nan"))
    for i, p in enumerate(profiles):
        ws = words(p.name)
        if len(ws) == 1 and ws[0] in initials:
            for j in initials[ws[0]][:MAX_BLOCK]:
                if j != i:
                    pairs.setdefault((min(i, j), max(i, j)), float("nan"))
    if vectors is not None and len(vectors) > 1:
        k = min(NEIGHBOURS, len(vectors) - 1)
        for start in range(0, len(vectors), 1024):
            block = vectors[start:start + 1024] @ vectors.T
            for r in range(block.shape[0]):
                block[r, start + r] = -2.0
            top = np.argpartition(block, block.shape[1] - k, axis=1)[:, -k:]
            for r, row in enumerate(top):
                i = start + r
                for j in row.tolist():
                    cosine = float(block[r, j])
                    if cosine >= MIN_VECTOR_COSINE:
                        pairs[(min(i, j), max(i, j))] = cosine
    return pairs


def rank(profiles: Sequence[Profile], vectors: Optional[np.ndarray] = None,
         dismissed: Iterable[Pair] = (), top: int = 50) -> list[Suggestion]:
    """The ``top`` merge suggestions, best first. ``vectors``: unit rows aligned with ``profiles`` (a zero
    row where an entity has no vector), or None to rank on names, documents and neighbours alone."""
    skip = {node_pair(a, b) for a, b in dismissed}
    scored: list[Suggestion] = []
    for (i, j), cosine in _candidates(profiles, vectors).items():
        a, b = profiles[i], profiles[j]
        if not compatible(a.type, b.type) or node_pair(a.key, b.key) in skip or a.key == b.key:
            continue
        if vectors is not None and cosine != cosine:  # NaN: a name-blocked pair, cosine not yet computed
            cosine = float(vectors[i] @ vectors[j])
        cos = None if vectors is None or not np.any(vectors[i]) or not np.any(vectors[j]) else cosine
        reason, name_score = name_evidence(a.name, b.name)
        if not reason and (cos is None or cos < 0.9):
            continue
        docs, doc_share = _share(a.documents, b.documents)
        neigh, neigh_share = _share(a.neighbours - {b.key}, b.neighbours - {a.key})
        score = (WEIGHTS["name"] * name_score + WEIGHTS["cosine"] * max(cos or 0.0, 0.0)
                 + WEIGHTS["documents"] * doc_share + WEIGHTS["neighbours"] * neigh_share)
        keep, fold = sorted((a, b), key=lambda p: (p.chunks, len(p.name), p.key), reverse=True)
        evidence = [f"names: {reason or 'different'} ({name_score:.2f})"]
        evidence.append("profile vectors: cosine " + ("—" if cos is None else f"{cos:.2f}"))
        evidence.append(f"{docs} shared source document(s)")
        evidence.append(f"{neigh} shared neighbour(s)")
        if a.type != b.type:
            evidence.append(f"types differ: {a.type or '—'} / {b.type or '—'}")
        scored.append(Suggestion(fold.key, keep.key, fold.name, keep.name, fold.type, keep.type, round(score, 4),
                                 reason, round(name_score, 4), None if cos is None else round(cos, 4), docs,
                                 neigh, evidence))
    scored.sort(key=lambda s: (-s.score, s.into, s.merge))
    return scored[:top]


# --- a workspace's profiles and dismissals ------------------------------------------------------------
def profiles_of(ws: Workspace) -> tuple[list[Profile], Optional[np.ndarray]]:
    """Every entity of the workspace as a ``Profile`` and the matrix of its profile vectors (unit rows,
    zero where a vector is missing; None when the workspace has no entity vectors)."""
    graph = ws.knowledge_graph()
    doc_of = {c: d for c, d in _chunk_docs(ws)}
    profiles: list[Profile] = []
    for key in sorted(graph.nodes):
        data = graph.nodes[key]
        chunks = list(data.get("source_chunk_ids") or [])
        profiles.append(Profile(key, str(data.get("name") or key), str(data.get("type") or ""),
                                frozenset(doc_of[c] for c in chunks if c in doc_of), len(chunks),
                                frozenset(graph.adj[key])))
    vector_of = {row[0]: row[3] for row in ws.records.entity_vector_rows()}
    wanted = [vector_of[p.key] for p in profiles if vector_of.get(p.key)]
    found: dict[str, np.ndarray] = {}
    try:
        for start in range(0, len(wanted), 2000):
            found.update(ws.vectors.get_vectors("entities", wanted[start:start + 2000]))
    except Exception:  # no vector index (a store without vectors): rank on names alone
        return profiles, None
    if not found:
        return profiles, None
    dim = len(next(iter(found.values())))
    vectors = np.zeros((len(profiles), dim), dtype=np.float32)
    for i, p in enumerate(profiles):
        vector = found.get(vector_of.get(p.key, ""))
        if vector is not None:
            vectors[i] = vector
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return profiles, np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


def _chunk_docs(ws: Workspace) -> Iterable[tuple[str, str]]:
    for doc in ws.records.documents():
        for chunk in ws.records.chunks_of(doc.doc_id):
            yield chunk.chunk_id, doc.doc_id


def dismissed(ws: Workspace) -> set[Pair]:
    """The pairs dismissed in this workspace (entity keys)."""
    try:
        raw = json.loads(ws.records.get_meta(DISMISSED_META, "[]") or "[]")
    except ValueError:
        return set()
    return {node_pair(str(a), str(b)) for a, b in raw if isinstance(a, str) and isinstance(b, str)}


def dismiss(ws: Workspace, a: str, b: str, restore: bool = False) -> set[Pair]:
    """Remember (or, with ``restore``, forget) that ``a`` and ``b`` are not one thing; under the writer
    lock (refused while indexing runs). Returns the dismissed pairs."""
    from core.editing.replay import EditError, key_of

    pair = node_pair(key_of(a), key_of(b))
    if pair[0] == pair[1]:
        raise EditError("a pair needs two different entities")
    with ws.writer():
        records = ws.records
        with records.unit_of_work():
            pairs = dismissed(ws)
            pairs = pairs - {pair} if restore else pairs | {pair}
            records.set_meta(DISMISSED_META, json.dumps(sorted(pairs), ensure_ascii=False))
            records.log("merge_suggestion_" + ("restored" if restore else "dismissed"), {"pair": list(pair)})
    return pairs


def suggestions(ws: Workspace, top: int = 50) -> list[Suggestion]:
    """The workspace's ``top`` merge suggestions, dismissed pairs left out."""
    profiles, vectors = profiles_of(ws)
    return rank(profiles, vectors, dismissed(ws), top)
