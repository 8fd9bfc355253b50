"""Re-embed a workspace's entity, relation and tree vectors with other length caps (issue 36's wordpiece budget).

What an entity, a relation or a summary-tree node embeds is capped in ``core.indexing.profiles``
(``ENTITY_PROFILE_TOKENS``, ``RELATION_KEYWORDS``, ``TREE_VECTOR_TOKENS``). This sets the caps for one
run, drops the vectors whose text they change and lets ``reconcile`` embed them again from SQLite (the same
code path as ``python -m core repair --reembed``; chunk windows are left as they are), then bumps the
generation. Run it on a copy, then ``python -m core eval`` on the copy and
``benchmarks/embedded_wordpieces.py`` with the same caps for the wordpieces:

    python benchmarks/graph_text_caps.py --workspace COPY --entity-tokens 16 --relation-keywords 3 --tree-tokens 96
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GRAPH_COLLECTIONS = ("entities", "relations", "tree")


def set_caps(entity_tokens: int | None, relation_keywords: int | None, tree_tokens: int | None) -> None:
    """Override the caps of ``core.indexing.profiles`` in this process (None keeps the code's value)."""
    import core.indexing.profiles as profiles

    if entity_tokens is not None:
        profiles.ENTITY_PROFILE_TOKENS = entity_tokens
    if relation_keywords is not None:
        profiles.RELATION_KEYWORDS = relation_keywords
    if tree_tokens is not None:
        profiles.TREE_VECTOR_TOKENS = tree_tokens


def _texts_by_vector_id(ws: object) -> dict[str, dict[str, str]]:
    """``collection -> vector id -> embedded text`` under the caps currently set (what ``reconcile`` embeds)."""
    from core.indexing.profiles import embedded_aliases, entity_vector_text, relation_vector_text, tree_vector_text

    records = ws.records  # type: ignore[attr-defined]
    rows = records.entity_vector_rows()
    fragments = records.entity_fragments(sorted(key for key, *_ in rows))
    names = records.entity_names()
    return {"entities": {vid: entity_vector_text(name, desc, embedded_aliases(key, name, fragments.get(key, [])))
                         for key, name, desc, vid in rows},
            "relations": {vid: relation_vector_text(kws, names.get(src, src), names.get(tgt, tgt), desc)
                          for src, tgt, kws, desc, vid in records.relation_vector_rows()},
            "tree": {node.vector_id: tree_vector_text(node.text) for node in records.tree_nodes()}}


def reembed_graph(path: Path, caps: tuple[int | None, int | None, int | None]) -> dict[str, dict[str, int]]:
    """Re-embed the entity, relation and tree vectors of the workspace at ``path`` whose text ``caps``
    change (the others keep their vectors: same text, same vector)."""
    from core.indexing.reconcile import reconcile
    from core.workspace import Workspace

    ws = Workspace(path)
    try:
        with ws.writer():
            before = _texts_by_vector_id(ws)
            set_caps(*caps)
            after = _texts_by_vector_id(ws)
            for collection in GRAPH_COLLECTIONS:
                changed = sorted(v for v, text in after[collection].items() if before[collection].get(v) != text)
                if changed:
                    ws.vectors.delete(collection, changed)
            report = reconcile(ws)
            ws.bump_generation()
        return report
    finally:
        ws.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", required=True, type=Path)
    parser.add_argument("--entity-tokens", type=int)
    parser.add_argument("--relation-keywords", type=int)
    parser.add_argument("--tree-tokens", type=int)
    parser.add_argument("--count-only", action="store_true", help="print the wordpieces, re-embed nothing")
    args = parser.parse_args()
    caps = (args.entity_tokens, args.relation_keywords, args.tree_tokens)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import embedded_wordpieces

    if args.count_only:
        set_caps(*caps)
    else:
        started = time.perf_counter()
        print(reembed_graph(args.workspace, caps), f"{time.perf_counter() - started:.1f} s", flush=True)
    report = embedded_wordpieces.count(args.workspace)
    print(f"wordpieces per corpus token: {report['per_corpus_token']:.3f} "
          + " ".join(f"{k}={v['per_corpus_token']:.3f}" for k, v in report["by_kind"].items()), flush=True)


if __name__ == "__main__":
    main()
