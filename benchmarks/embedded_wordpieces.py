"""Wordpieces per corpus token of an indexed workspace, without indexing it again.

Rebuilds every text a re-embedding would embed (``core.indexing.reconcile``: chunk windows, entity and
relation vector texts from the current code's ``entity_vector_text``/``relation_vector_text``, tree
nodes), tokenises them with MiniLM's own tokenizer (256 wordpieces at most, [CLS]/[SEP] included,
padding excluded) and divides by the corpus's tokens (the documents' cl100k counts). So the effect of a
change to what is embedded is read on the dev workspaces in seconds, before re-embedding them:

    python benchmarks/embedded_wordpieces.py --workspace COPY_OF_WORKSPACE [--json]

A candidate cut is priced the same way, without editing the code: ``--entity-tokens N``, ``--tree-tokens N``
and ``--relation-keywords N`` set ``core.indexing.profiles``' caps for this count only (0 for the tree: the
whole node).

``benchmarks/index_throughput.py --count-wordpieces`` books the same kinds during a real indexing run.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MAX_WORDPIECES = 256


def _tokenizer() -> Any:
    from tokenizers import Tokenizer

    from core.onnx_embeddings import model_dir

    path = model_dir() / "tokenizer.json"
    if path.is_file():
        tok = Tokenizer.from_file(str(path))
    else:  # the torch model's own fast tokenizer (same vocabulary)
        from core.embeddings import local_embedder

        tok = local_embedder(32)._model.tokenizer.backend_tokenizer
    tok.no_padding()
    tok.enable_truncation(MAX_WORDPIECES)
    return tok


def wordpieces(tok: Any, texts: Sequence[str]) -> int:
    """Wordpieces MiniLM computes for ``texts`` (each truncated at 256, special tokens included)."""
    total = 0
    for start in range(0, len(texts), 2048):
        total += sum(len(e.ids) for e in tok.encode_batch([t if t.strip() else " " for t in texts[start:start + 2048]]))
    return total


def embedded_texts(path: Path) -> dict[str, list[str]]:
    """What re-embedding the workspace at ``path`` embeds, by kind (the code's current vector texts)."""
    from core.embeddings import chunk_pieces
    from core.indexing.profiles import embedded_aliases, entity_vector_text, relation_vector_text, tree_vector_text
    from core.workspace import Workspace

    ws = Workspace(path, check_embedder=False)
    try:
        records = ws.records
        chunks = records.chunks_by_id(records.all_chunk_ids())
        windows = any(c.windows > 1 for c in chunks.values()) or ws.settings.chunk_vector_windows
        chunk_texts = [w for ws_ in chunk_pieces([c.text for c in chunks.values()], windows) for w in ws_]
        rows = records.entity_vector_rows()
        fragments = records.entity_fragments(sorted(key for key, *_ in rows))
        entities = [entity_vector_text(name, desc, embedded_aliases(key, name, fragments.get(key, [])))
                    for key, name, desc, _vid in rows]
        names = records.entity_names()
        relations = [relation_vector_text(kws, names.get(src, src), names.get(tgt, tgt), desc)
                     for src, tgt, kws, desc, _vid in records.relation_vector_rows()]
        tree = [tree_vector_text(node.text) for node in records.tree_nodes()]
        return {"chunk windows": chunk_texts, "entities": entities, "relations": relations, "tree": tree}
    finally:
        ws.close()


def corpus_tokens(path: Path) -> int:
    import sqlite3

    with sqlite3.connect(path / "ragscope.sqlite3") as db:
        return int(db.execute("SELECT COALESCE(SUM(tokens), 0) FROM documents").fetchone()[0])


def count(path: Path) -> dict[str, Any]:
    """{corpus_tokens, per_corpus_token, by_kind: {kind: {texts, wordpieces, per_corpus_token}}}."""
    tok = _tokenizer()
    tokens = corpus_tokens(path)
    kinds = {kind: (len(texts), wordpieces(tok, texts)) for kind, texts in embedded_texts(path).items()}
    total = sum(n for _, n in kinds.values())
    return {"corpus_tokens": tokens, "wordpieces": total, "per_corpus_token": round(total / max(tokens, 1), 3),
            "by_kind": {k: {"texts": t, "wordpieces": n, "per_corpus_token": round(n / max(tokens, 1), 3)}
                        for k, (t, n) in kinds.items()}}


CAPS = {"entity_tokens": "ENTITY_PROFILE_TOKENS", "tree_tokens": "TREE_VECTOR_TOKENS",
        "relation_keywords": "RELATION_KEYWORDS"}


def with_caps(**caps: Optional[int]) -> dict[str, int]:
    """Set ``core.indexing.profiles``' caps named in ``caps`` (None: leave it); returns the caps in force."""
    from core.indexing import profiles

    for option, constant in CAPS.items():
        if caps.get(option) is not None:
            setattr(profiles, constant, caps[option])
    return {option: getattr(profiles, constant) for option, constant in CAPS.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", required=True, type=Path)
    parser.add_argument("--json", action="store_true")
    for option in CAPS:
        parser.add_argument("--" + option.replace("_", "-"), type=int, default=None,
                            help=f"price this cap instead of the code's ({CAPS[option]})")
    args = parser.parse_args()
    caps = with_caps(**{option: getattr(args, option) for option in CAPS})
    report = count(args.workspace)
    report["caps"] = caps
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"{args.workspace.name}: {report['wordpieces']:,} wordpieces / {report['corpus_tokens']:,} corpus tokens "
          f"= {report['per_corpus_token']:.2f} per token  ({', '.join(f'{k} {v}' for k, v in caps.items())})")
    for kind, row in report["by_kind"].items():
        print(f"  {kind:14s} {row['texts']:>7,} texts {row['wordpieces']:>9,} wp  {row['per_corpus_token']:.2f}/token")


if __name__ == "__main__":
    main()
