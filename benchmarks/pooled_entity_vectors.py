"""Experiment (issue 36): entity and relation vectors pooled from the chunk-window pass, not embedded texts.

Today an entity's vector embeds its name, up to three merged aliases and the first 32 cl100k tokens of its
merged profile (``core.indexing.profiles.entity_vector_text``; 1.52 wordpieces per corpus token on
dev_musique_full), and a relation's its keywords and both names (1.41). The sentence vectors indexing
already stores (``core.sentence_vectors``: means of the chunk-window pass's token outputs over each
sentence's span) cost no wordpiece of their own. This script rewrites, in a COPY of an indexed workspace,
the entity vectors (or with ``--relations`` the relation vectors) as a blend of a short embedded head and
such pooled vectors; ids and metadata stay, only the vectors move, so ``core eval`` runs on the copy:

    cp -r WORKSPACE COPY && chmod -R u+w COPY && rm -f COPY/write.lock
    python benchmarks/pooled_entity_vectors.py --workspace COPY --context first --alpha -1
    python -m core eval --quiet --workspace COPY --questions Q --modes all --k 2,5,10

Entities (head: the name with its embedded aliases, ``--head name+type`` adds the type): the vector is
normalise(a * embed(head) + (1 - a) * context), the context (``--context``) being

* ``all``: the mean of the stored vectors of the sentences of the entity's source chunks that mention it
  (their stored mentions carry its key or an alias's key, or their text names it or an alias,
  case-insensitive, on word boundaries); of all their sentences when none does;
* ``first``: the first such sentence in corpus order (the profile text starts with that sentence);
* ``profile``: the stored sentences the embedded start of the profile is made of (an offline profile is
  the mentioning sentences, verbatim), each weighted by its wordpieces against the head's, as mean pooling
  of one text would weigh them (``--alpha`` unused; an empty profile gives the head alone, as today);
* ``span``: the mean of the token outputs inside the entity's mentions themselves (the window pass is run
  again: a built workspace keeps only pooled vectors).

``--alpha -1`` (with ``first``) sets a per entity: the head's share of the wordpieces of head + sentence.
An entity without any context keeps the head's vector alone.

Relations (``--relations``; head: "source\\ntarget", no keywords): the context is the stored sentence of the
relation's source chunks its description starts with, else the first one naming both endpoints.

Every run prints the wordpieces a build with these vectors would embed per corpus token (the texts of
``benchmarks/embedded_wordpieces.py`` with the entity or relation texts replaced by the heads; ``span``
with ``--alpha 0`` embeds no entity head at all except as a fallback, which the count does not discount);
``--count-only`` writes nothing.
"""
from __future__ import annotations

import argparse
import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

HEADS = ("name", "name+type")
CONTEXTS = ("all", "first", "profile", "span")
Sentence = tuple[str, set[str], Optional[np.ndarray]]  # text, mention keys, pooled vector (None: not located)
Part = tuple[str, np.ndarray]  # the text a pooled vector stands for, the vector


def entity_head(name: str, aliases: Sequence[str], etype: str, head: str = "name") -> str:
    """The short text embedded for an entity: its name (and up to three embedded aliases, as in the
    profile text), plus its type in lower case for ``name+type``."""
    text = name + (f" ({', '.join(list(aliases)[:3])})" if aliases else "")
    if head == "name+type" and etype and etype != "UNKNOWN":
        text += f"\n{etype.lower()}"
    return text


def unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return (vector / norm if norm > 0 else vector).astype(np.float32)


def mention_spans(text: str, surfaces: Sequence[str]) -> list[tuple[int, int]]:
    """Character spans of the surfaces in ``text`` (case-insensitive, on word boundaries)."""
    lowered = text.lower()
    spans: list[tuple[int, int]] = []
    for surface in dict.fromkeys(s.lower().strip() for s in surfaces):
        if surface:
            spans += [m.span() for m in re.finditer(r"(?<!\w)" + re.escape(surface) + r"(?!\w)", lowered)]
    return spans


def chunk_sentence_vectors(records: Any, chunk_ids: Sequence[str]) -> dict[str, list[Sentence]]:
    """chunk id -> its stored sentences in order, located as indexing located them (``sentence_spans``)."""
    from core.sentence_vectors import decode_vector, sentence_spans

    chunks = records.chunks_by_id(chunk_ids)
    sentences = records.chunk_sentences(chunk_ids)
    stored = records.sentence_vectors(chunk_ids)
    out: dict[str, list[Sentence]] = {}
    for chunk_id, chunk in chunks.items():
        rows = sentences.get(chunk_id, [])
        by_span = {(start, end): decode_vector(blob) for start, end, blob in stored.get(chunk_id, [])}
        spans = sentence_spans(chunk.text, [text for text, _ in rows])
        out[chunk_id] = [(text, {m[2] for m in mentions if len(m) > 2 and m[2]}, by_span.get(span) if span else None)
                         for (text, mentions), span in zip(rows, spans)]
    return out


def mentioning(keys: set[str], surfaces: Sequence[str], chunk_ids: Sequence[str],
               sentences: dict[str, list[Sentence]]) -> list[Part]:
    """The located sentences of ``chunk_ids`` (in that order) that mention the entity: a stored mention
    with one of ``keys``, or one of ``surfaces`` in the text."""
    return [(text, vector) for c in chunk_ids for text, mention_keys, vector in sentences.get(c, [])
            if vector is not None and (mention_keys & keys or mention_spans(text, surfaces))]


def profile_sentences(description: str, chunk_ids: Sequence[str], sentences: dict[str, list[Sentence]]) -> list[Part]:
    """The stored sentences the embedded start of the profile is made of: the description cut at
    ``ENTITY_PROFILE_TOKENS`` is read from its start, each next piece matched to a located sentence of the
    source chunks it begins with (or that begins with what is left); reading stops at a piece none gives."""
    from core.indexing.profiles import ENTITY_PROFILE_TOKENS
    from core.tokens import truncate

    rest = truncate(description, ENTITY_PROFILE_TOKENS).strip()
    candidates = [(text.strip(), vector) for c in chunk_ids for text, _k, vector in sentences.get(c, [])
                  if vector is not None and text.strip()]
    out: list[Part] = []
    while rest:
        found = next(((t, v) for t, v in candidates if rest.startswith(t) or (len(rest) < len(t) and t.startswith(rest))),
                     None)
        if found is None:
            break
        covered = found[0] if rest.startswith(found[0]) else rest
        out.append((covered, found[1]))
        rest = rest[len(covered):].strip()
    return out


def chunk_token_states(ws: Any, chunk_ids: Sequence[str]) -> dict[str, tuple[str, list[tuple[np.ndarray, np.ndarray, int]]]]:
    """chunk id -> (text, per window (token outputs, wordpiece character spans, window offset in the
    chunk)): the chunk-window pass indexing runs (``core.sentence_vectors.window_states``), run again."""
    from core.sentence_vectors import window_offsets, window_states

    chunks = ws.records.chunks_by_id(chunk_ids)
    ids = list(chunks)
    texts = [chunks[c].text for c in ids]
    windows = any(chunks[c].windows > 1 for c in ids) or ws.settings.chunk_vector_windows
    pieces, states = window_states(ws.embedder, texts, windows)
    out, position = {}, 0
    for chunk_id, text, ws_ in zip(ids, texts, pieces):
        mine = states[position:position + len(ws_)]
        position += len(ws_)
        out[chunk_id] = (text, [(st, off, shift) for (st, off), shift in zip(mine, window_offsets(text, ws_))])
    return out


def span_vector(surfaces: Sequence[str], chunk_ids: Sequence[str],
                states: dict[str, tuple[str, list[tuple[np.ndarray, np.ndarray, int]]]]) -> Optional[np.ndarray]:
    """The normalised mean of the token outputs inside the mentions of ``surfaces`` in ``chunk_ids``."""
    total, count = None, 0
    for chunk_id in chunk_ids:
        text, parts = states.get(chunk_id, ("", []))
        for start, end in mention_spans(text, surfaces):
            for st, off, shift in parts:
                inside = (off[:, 1] > off[:, 0]) & (off[:, 0] + shift >= start) & (off[:, 1] + shift <= end)
                if inside.any():
                    piece = st[inside].astype(np.float64).sum(axis=0)
                    total = piece if total is None else total + piece
                    count += int(inside.sum())
    return unit(total / count) if total is not None and count else None


def _tokenizer() -> Any:
    from benchmarks.embedded_wordpieces import _tokenizer as tokenizer

    return tokenizer()


def by_wordpieces(heads: Sequence[str], head_vectors: np.ndarray, contexts: Sequence[Sequence[Part]],
                  cut: bool = True) -> np.ndarray:
    """Per row, normalise(n_head * head vector + sum of n_i * vector_i over its parts), n: wordpieces (the
    head's with [CLS] and [SEP]; a part's text without them, ``cut`` at the profile's
    ``ENTITY_PROFILE_TOKENS``): the weights mean pooling gives the parts of one text."""
    from core.indexing.profiles import ENTITY_PROFILE_TOKENS
    from core.tokens import truncate

    tok = _tokenizer()
    n_head = [len(e.ids) for e in tok.encode_batch(list(heads))]
    out = []
    for i, parts in enumerate(contexts):
        total = n_head[i] * head_vectors[i].astype(np.float64)
        if parts:
            counts = [len(e.ids) - 2 for e in tok.encode_batch([truncate(t, ENTITY_PROFILE_TOKENS) if cut else t for t, _ in parts])]
            for n, (_t, vector) in zip(counts, parts):
                total = total + n * vector.astype(np.float64)
        out.append(unit(total))
    return np.stack(out)


def blend(head_vectors: np.ndarray, contexts: Sequence[Optional[np.ndarray]], alpha: float) -> np.ndarray:
    """normalise(alpha * head + (1 - alpha) * context) per row; the head alone where there is no context."""
    return np.stack([unit(alpha * head_vectors[i] + (1 - alpha) * c) if c is not None else unit(head_vectors[i])
                     for i, c in enumerate(contexts)])


def entity_contexts(ws: Any, context: str) -> dict[str, Any]:
    """Per entity (the rows' order): its head text, its vector id and its context parts."""
    from core.extraction.names import normalize_name
    from core.indexing.profiles import embedded_aliases

    records = ws.records
    rows = records.entity_vector_rows()
    fragments = records.entity_fragments(sorted(key for key, *_ in rows))
    chunk_ids = sorted({f.chunk_id for fs in fragments.values() for f in fs})
    sentences = chunk_sentence_vectors(records, chunk_ids)
    states = chunk_token_states(ws, chunk_ids) if context == "span" else {}
    found: dict[str, int] = {"context": 0, "none": 0}
    out: dict[str, Any] = {"keys": [], "ids": [], "names": [], "parts": [], "vectors": [], "found": found}
    for key, name, description, vector_id in rows:
        frags = fragments.get(key, [])
        surfaces = list(dict.fromkeys([name] + [a for f in frags for a in f.aliases] + [f.name for f in frags]))
        sources = list(dict.fromkeys(f.chunk_id for f in frags))
        parts: list[Part] = []
        vector: Optional[np.ndarray] = None
        if context == "span":
            vector = span_vector(surfaces, sources, states)
        elif context == "profile" and not description.strip():
            pass  # an empty profile: today's text is the head alone
        else:
            parts = profile_sentences(description, sources, sentences) if context == "profile" else []
            if not parts:
                hits = mentioning({key} | {normalize_name(a) for a in surfaces}, surfaces, sources, sentences)
                every = [(t, v) for c in sources for t, _k, v in sentences.get(c, []) if v is not None]
                parts = hits[:1] if context in ("first", "profile") else (hits or every)
            if parts:
                vector = unit(np.mean([v for _t, v in parts], axis=0))
        found["context" if vector is not None else "none"] += 1
        out["keys"].append(key)
        out["ids"].append(vector_id)
        out["names"].append((name, embedded_aliases(key, name, frags)))
        out["parts"].append(parts)
        out["vectors"].append(vector)
    return out


def pooled_entities(path: Path, alpha: float, head: str = "name", context: str = "all", write: bool = True
                    ) -> dict[str, Any]:
    """Rewrite (``write``) the entity vectors of the workspace at ``path``; returns counts and the heads."""
    from core.workspace import Workspace

    ws = Workspace(path, check_embedder=write)
    try:
        with sqlite3.connect(path / "ragscope.sqlite3") as db:
            types = dict(db.execute("SELECT entity_key, type FROM entities").fetchall())
        if not write:
            rows = ws.records.entity_vector_rows()
            fragments = ws.records.entity_fragments(sorted(key for key, *_ in rows))
            from core.indexing.profiles import embedded_aliases

            heads = [entity_head(name, embedded_aliases(key, name, fragments.get(key, [])), types.get(key, ""), head)
                     for key, name, _d, _v in rows]
            return {"entities": len(rows), "heads": heads}
        got = entity_contexts(ws, context)
        heads = [entity_head(name, aliases, types.get(key, ""), head) for key, (name, aliases) in zip(got["keys"], got["names"])]
        head_vectors = ws.embedder.embed(heads)
        if context == "profile":
            vectors = by_wordpieces(heads, head_vectors, got["parts"], cut=False)  # the parts are the cut profile
        elif alpha < 0:  # the head's share of the wordpieces of head + first sentence
            vectors = np.stack([by_wordpieces([h], head_vectors[i:i + 1], [[(t, unit(x)) for t, x in p[:1]]])[0]
                                if v is not None
                                else unit(head_vectors[i]) for i, (h, p, v) in enumerate(zip(heads, got["parts"], got["vectors"]))])
        else:
            vectors = blend(head_vectors, got["vectors"], alpha)
        ws.vectors.upsert("entities", got["ids"], vectors, [{"key": key} for key in got["keys"]])
        return {"entities": len(heads), "heads": heads, "found": got["found"]}
    finally:
        ws.close()


def pooled_relations(path: Path, alpha: float, write: bool = True) -> dict[str, Any]:
    """Rewrite (``write``) the relation vectors of the workspace at ``path`` as a blend of
    embed("source\\ntarget") and the vector of the relation's sentence (``alpha`` < 0: weighted by
    wordpieces); returns counts and the heads."""
    from core.workspace import Workspace

    ws = Workspace(path, check_embedder=write)
    try:
        records = ws.records
        names = records.entity_names()
        rows = records.relation_vector_rows()
        heads = [f"{names.get(a, a)}\n{names.get(b, b)}" for a, b, _k, _d, _v in rows]
        if not write:
            return {"relations": len(rows), "heads": heads}
        with sqlite3.connect(path / "ragscope.sqlite3") as db:
            sources = {(a, b): json.loads(c) for a, b, c in db.execute(
                "SELECT source_key, target_key, source_chunk_ids FROM relations")}
            aliases = {k: json.loads(a) for k, a in db.execute("SELECT entity_key, aliases FROM entities")}
        sentences = chunk_sentence_vectors(records, sorted({c for cs in sources.values() for c in cs}))
        found = {"description": 0, "both named": 0, "none": 0}
        contexts: list[Optional[Part]] = []
        for a, b, _kws, description, _vid in rows:
            chunks = sources.get((a, b), [])
            located = [(t, m, v) for c in chunks for t, m, v in sentences.get(c, []) if v is not None and t.strip()]
            start = description.strip()
            part = next(((t, v) for t, _m, v in located if start.startswith(t.strip())), None)
            kind = "description"
            if part is None:
                kind = "both named"
                part = next(((t, v) for t, m, v in located
                             if all(key in m or mention_spans(t, [names.get(key, key)] + aliases.get(key, []))
                                    for key in (a, b))), None)
            contexts.append(part)
            found[kind if part is not None else "none"] += 1
        head_vectors = ws.embedder.embed(heads)
        if alpha < 0:
            vectors = by_wordpieces(heads, head_vectors, [[p] if p else [] for p in contexts])
        else:
            vectors = blend(head_vectors, [p[1] if p else None for p in contexts], alpha)
        ws.vectors.upsert("relations", [r[4] for r in rows], vectors, [{"source": r[0], "target": r[1]} for r in rows])
        return {"relations": len(rows), "heads": heads, "found": found}
    finally:
        ws.close()


def wordpieces_per_token(path: Path, kind: str, heads: Sequence[str]) -> dict[str, Any]:
    """``benchmarks/embedded_wordpieces.py``'s count with the texts of ``kind`` replaced by ``heads``."""
    from benchmarks.embedded_wordpieces import corpus_tokens, embedded_texts, wordpieces

    tok = _tokenizer()
    tokens = corpus_tokens(path)
    texts = embedded_texts(path)
    texts[kind] = list(heads)
    by_kind = {k: round(wordpieces(tok, t) / max(tokens, 1), 3) for k, t in texts.items()}
    return {"per_corpus_token": round(sum(by_kind.values()), 3), "by_kind": by_kind}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", required=True, type=Path, help="a COPY of an indexed workspace")
    parser.add_argument("--alpha", type=float, default=0.5,
                        help="weight of the head's own vector (0..1); -1: by wordpieces (head + first sentence)")
    parser.add_argument("--head", choices=HEADS, default="name")
    parser.add_argument("--context", choices=CONTEXTS, default="all")
    parser.add_argument("--relations", action="store_true", help="rewrite the relation vectors instead")
    parser.add_argument("--count-only", action="store_true", help="price the variant in wordpieces; write nothing")
    args = parser.parse_args()
    write = not args.count_only
    if args.relations:
        report, kind = pooled_relations(args.workspace, args.alpha, write), "relations"
    else:
        report, kind = pooled_entities(args.workspace, args.alpha, args.head, args.context, write), "entities"
    counted = wordpieces_per_token(args.workspace, kind, report.pop("heads"))
    print(json.dumps({**vars(args), "workspace": str(args.workspace), **report, "wordpieces": counted}, indent=1))


if __name__ == "__main__":
    main()
