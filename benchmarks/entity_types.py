"""Entity types of an indexed workspace against hand labels: as stored, and as re-typed now.

    python benchmarks/entity_types.py --workspace W [--labels tests/fixtures/sample_entity_types.json]
                                      [--apply]

The "now" column re-derives each entity's type from its stored fragments with the current rule
(``core.indexing.profiles.vote_type``: the mentions' labels and the name must agree), so a workspace
indexed before the rule changed can be compared without re-indexing. Prints the agreement of both
with the labels (an entity counts when it is labelled; a list of labels accepts any of them) and every
entity whose type changes. ``--apply`` writes the new types (re-merges every entity from its fragments:
no vector changes, since types are not embedded) — use it on a copy.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.indexing.profiles import vote_type  # noqa: E402
from core.workspace import Workspace  # noqa: E402

DEFAULT_LABELS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "sample_entity_types.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--labels", default=str(DEFAULT_LABELS))
    parser.add_argument("--apply", action="store_true")
    args = parser.parse_args()
    labels = json.loads(Path(args.labels).read_text(encoding="utf-8"))["labels"]
    ws = Workspace(args.workspace)
    graph = ws.knowledge_graph()
    keys = sorted(graph.nodes)
    fragments = ws.records.entity_fragments(keys)
    before_right = after_right = labelled = changed = 0
    for key in keys:
        data = graph.nodes[key]
        name = str(data.get("name") or key)
        before = str(data.get("type") or "UNKNOWN")
        after = vote_type(fragments.get(key) or [], name)[0] if fragments.get(key) else before
        wanted = labels.get(name)
        accepted = set(wanted if isinstance(wanted, list) else [wanted]) if wanted else set()
        if accepted:
            labelled += 1
            before_right += before in accepted
            after_right += after in accepted
        if after != before:
            changed += 1
            mark = "" if not accepted else (" (right)" if after in accepted else " (wrong)")
            print(f"  {name}: {before} -> {after}{mark}")
    print(f"{len(keys)} entities, {labelled} labelled; agreement with the labels: "
          f"stored {before_right}/{labelled} -> re-typed {after_right}/{labelled}; {changed} change type")
    if args.apply:
        from core.indexing.remerge import merge_touched
        with ws.writer(wait=True), ws.records.unit_of_work():
            merge_touched(ws, set(keys), set())
        ws.bump_generation()
        print("written")


if __name__ == "__main__":
    main()
