"""What a user checks in a knowledge graph, measured: ``python -m core graph-quality --json``.

The report counts entities and relations, lists suspicious entity names by rule (with examples),
the alias merges made (``core.extraction.aliases``), the type conflicts resolved by the vote over
mentions, relations per entity and isolated entities. The rules look at the merged names only, so
they also grade graphs built by an LLM or by an older RAGScope; the tests check the cleaner against a
hand-labelled list of junk names as well, so the cleaner is not only graded by its own rules.
"""
from __future__ import annotations

import json
import re
import statistics
from typing import Any

from core.extraction.names import normalize_name
from core.types import display_name
from core.workspace import Workspace

EXAMPLES = 5
FUNCTION_WORDS = frozenset(
    "a an the of and or in on at to for from by with as into onto upon about over under since until after before "
    "during between against among through via per than that this these those its his her their our your my".split())
NUMBERED_TYPES = frozenset({"PRODUCT", "EVENT", "WORK_OF_ART", "LAW"})
_POSSESSIVE = re.compile(r"['’]s$")  # "Harland's": a possessive variant ("Fishermen's Association" is a name)
ARTICLES = frozenset({"a", "an", "the"})
TITLED_TYPES = frozenset({"WORK_OF_ART", "LAW", "UNKNOWN"})  # titles may start with an article ("A Brief History")


def _words(name: str) -> list[str]:
    return name.split()


def suspicious_rules(name: str, etype: str) -> list[str]:
    """The rules an entity name breaks (an empty list for a clean name)."""
    words = _words(name)
    broken: list[str] = []
    if not words:
        return ["empty"]
    if "\n" in name or "\r" in name:
        broken.append("line_break")
    if not any(ch.isupper() for ch in name):
        broken.append("lowercase_fragment")
    first = words[0].casefold()
    if first in FUNCTION_WORDS and not (first in ARTICLES and etype in TITLED_TYPES and len(words) > 1):
        broken.append("leading_function_word")
    if len(words) > 1 and words[-1] in FUNCTION_WORDS:  # lowercase only: "National League A" is a name
        broken.append("trailing_function_word")
    if len(words) > 1 and words[-1].isdigit() and etype not in NUMBERED_TYPES:
        broken.append("digits_tail")
    if _POSSESSIVE.search(name):
        broken.append("possessive")
    half = len(words) // 2
    if len(words) >= 2 and len(words) % 2 == 0 and words[:half] == words[half:]:
        broken.append("repeated_name")
    if len(words) > 8:
        broken.append("very_long")
    return broken


def graph_quality(ws: Workspace) -> dict[str, Any]:
    """The graph-quality report of a workspace (see the module docstring)."""
    graph = ws.knowledge_graph()
    rules: dict[str, dict[str, Any]] = {}
    merges: list[str] = []
    conflicts: list[str] = []
    conflict_count = 0
    unknown = 0
    keys = set(graph.nodes)
    for key, data in graph.nodes(data=True):
        name, etype = display_name(key, data), str(data.get("type") or "UNKNOWN")
        for rule in suspicious_rules(name, etype):
            entry = rules.setdefault(rule, {"count": 0, "examples": []})
            entry["count"] += 1
            if len(entry["examples"]) < EXAMPLES:
                entry["examples"].append(name)
        merged = [a for a in data.get("aliases") or [] if normalize_name(a) != key]
        if merged:
            merges.append(f"{', '.join(merged)} → {name}")
        if etype == "UNKNOWN":
            unknown += 1
    possessive_pairs = [k for k in keys if k.endswith("'s") and k[:-2] in keys]
    if possessive_pairs:
        rules["possessive_variant"] = {"count": len(possessive_pairs), "examples": possessive_pairs[:EXAMPLES]}
    for key, votes in _type_votes(ws).items():
        labels = {t: n for t, n in votes.items() if t != "UNKNOWN"}
        if len(labels) > 1:
            conflict_count += 1
            if len(conflicts) < EXAMPLES and key in graph:
                chosen = graph.nodes[key].get("type")
                shown = ", ".join(f"{t} {n}" for t, n in sorted(labels.items(), key=lambda kv: -kv[1]))
                conflicts.append(f"{display_name(key, graph.nodes[key])}: {shown} → {chosen}")
    degrees = [d for _, d in graph.degree()]
    isolated = [display_name(k, graph.nodes[k]) for k, d in graph.degree() if d == 0]
    return {
        "workspace": str(ws.path),
        "entities": graph.number_of_nodes(),
        "relations": graph.number_of_edges(),
        "suspicious": dict(sorted(rules.items())),
        "suspicious_total": sum(r["count"] for r in rules.values()),
        "alias_merges": {"count": len(merges), "examples": merges[:EXAMPLES]},
        "type_conflicts_resolved": {"count": conflict_count, "examples": conflicts},
        "unknown_type": unknown,
        "relations_per_entity": {
            "mean": round(statistics.fmean(degrees), 2) if degrees else 0.0,
            "median": float(statistics.median(degrees)) if degrees else 0.0,
            "max": max(degrees, default=0)},
        "isolated_entities": {"count": len(isolated), "examples": sorted(isolated)[:EXAMPLES]},
    }


def _type_votes(ws: Workspace) -> dict[str, dict[str, int]]:
    """Entity key → summed type votes over all its fragments."""
    votes: dict[str, dict[str, int]] = {}
    for key, etype, raw in ws.records.fragment_type_votes():
        try:
            parsed = json.loads(raw or "{}")
        except ValueError:
            parsed = {}
        entry = votes.setdefault(key, {})
        for label, count in (parsed or {etype: 1}).items():
            entry[label] = entry.get(label, 0) + int(count)
    return votes


def render(report: dict[str, Any]) -> str:
    """A short human-readable version of the report for the terminal."""
    lines = [f"{report['entities']} entities, {report['relations']} relations "
             f"({report['relations_per_entity']['mean']} per entity, median {report['relations_per_entity']['median']:g}, "
             f"max {report['relations_per_entity']['max']}); {report['isolated_entities']['count']} isolated; "
             f"{report['unknown_type']} of type UNKNOWN"]
    if report["suspicious"]:
        lines.append(f"suspicious names: {report['suspicious_total']}")
        for rule, entry in report["suspicious"].items():
            lines.append(f"  {rule}: {entry['count']} — e.g. {'; '.join(map(repr, entry['examples']))}")
    else:
        lines.append("suspicious names: none")
    for label, key in (("alias merges", "alias_merges"), ("type conflicts resolved", "type_conflicts_resolved")):
        entry = report[key]
        lines.append(f"{label}: {entry['count']}" + (f" — e.g. {'; '.join(entry['examples'])}" if entry["examples"] else ""))
    return "\n".join(lines)
