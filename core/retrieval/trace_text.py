"""The wording of the retrieval modes' trace events (``core.trace.TraceEvent``), in one table.

Each entry turns an event's data into the line users read on Compare and Inspect and in the CLI;
logic and tests read the data. Registered when ``core.retrieval.query`` (the question object) is imported."""
from __future__ import annotations

from typing import Any, Mapping

from core.trace import Template, register_texts


def _seeds(d: Mapping[str, Any]) -> str:
    shown = ", ".join(d["shown"])
    return (f"seed entities ({d['how']}): {d['count']}" + (f" — {shown}" if shown else "")
            + (" …" if d["count"] > len(d["shown"]) else ""))


def _vector_search(d: Mapping[str, Any]) -> str:
    return (f"{d['noun']} search: top-{d['top_k']} of {d['total']} {d['noun']}s, {d['above']} above cosine "
            f"{d['threshold']}" + (f", {d['stale']} not in the graph (stale vectors)" if d["stale"] else ""))


def _nodes(d: Mapping[str, Any]) -> str:
    line = f"entities: top-{d['top_n']} of {d['total']} searched, {d['returned']} returned"
    if d["below"]:
        line += f", {d['below']} below cosine {d['threshold']}"
    line += f" -> {len(d['names'])} nodes"
    if d["names"]:
        line += f" (cosine {d['cosines'][0]:.3f} … {d['cosines'][-1]:.3f}): " + ", ".join(d["names"])
    return line


_NO_PATH = {
    "no_node": lambda d: "no node retrieved",
    "single_node": lambda d: "a single node retrieved: no pair to connect",
    "unlinked": lambda d: (f"no path of ≤{d['hops']} hops through expanded nodes links any two of the {d['nodes']} "
                           f"retrieved nodes ({d['isolated']} isolated)"),
}


def _query_entities(d: Mapping[str, Any]) -> str:
    return (f"query entities (mention-graph extractor): {', '.join(d['terms']) or 'none'}"
            + (f"; not in the mention graph: {', '.join(d['absent'])}" if d["absent"] else "")
            + (f"; nouns left out (RAGScope: names only): {', '.join(d['dropped'])}" if d["dropped"] else ""))


def _question_pair_search(d: Mapping[str, Any]) -> str:
    return (f"question entity {d['entity']}: {d['targets']} question entities or seeds not joined by a kept path; "
            f"best path to {d['added']} added without early stopping"
            + (f", {d['missing']} not connected within {d['hops']} hops" if d["missing"] else "")
            + (" (search capped)" if d["capped"] else ""))


TEXTS: dict[str, Template] = {
    # LightRAG modes (local, global, hybrid, mix)
    "keywords": lambda d: (f"keywords ({d['extractor']}): low-level {', '.join(d['low']) or 'none'}, "
                           f"high-level {', '.join(d['high']) or 'none'}"),
    "keyword_fallback": "no {level} keywords: falling back to the {other} ones",
    "no_keywords": "no keywords at all: nothing to search with",
    "keywords_searched": lambda d: f"{d['level']} keywords searched: {', '.join(d['terms'])}",
    "graph_empty": "the knowledge graph is empty: index some documents first",
    "no_relations": "the knowledge graph has no relations: index some documents first",
    "seeds": _seeds,
    "vector_search": _vector_search,
    "nothing_above": "no {noun} reached cosine {threshold}: nothing retrieved",
    "local_expand": "expanded to {relations} relations (1-hop neighbourhood of {entities} entities, ranked by edge "
                    "degree, then weight)",
    "endpoints": "{entities} endpoint entities of {relations} relations (in order of appearance)",
    "anchored_relations": lambda d: (f"relation search anchored to {d['seeds']} seed entities: {d['relations']} "
                                     f"relations (cosine >= {d['threshold']}), {d['anchored']} touching a question "
                                     f"entity or a neighbour of one (+{d['bonus']:g})"),
    "source_chunks": "{chunks} source chunks (at most {per_owner} per {via}, {order})",
    "merge": lambda d: (f"merge {d['what']}: {d['local']} local + {d['global_']} global -> {d['merged']} (round-robin, "
                        f"{d['local'] + d['global_'] - d['merged']} duplicates dropped)"),
    "mix_chunks": lambda d: (f"mix chunks: {d['graph']} graph + {d['naive']} naive (dense top-{d['k']}) -> "
                             f"{d['merged']} (round-robin, {d['graph'] + d['naive'] - d['merged']} duplicates dropped)"),
    "budgets": ("budgets: {entities}/{entities_before} entities in {entity_tokens} tokens (max {max_entity_tokens}); "
                "{relations}/{relations_before} relations in {relation_tokens} tokens (max {max_relation_tokens}); "
                "{chunks}/{chunks_before} chunks in {chunk_tokens} tokens (what is left of {max_total_tokens})"),
    "trailing_dropped": "dropped {dropped} trailing record(s) so that the context fits in {max_total_tokens} tokens "
                        "exactly",
    "compacted": ("each piece of text once: {pointers} description sentence(s) already in a source chunk or an "
                  "earlier row replaced by a pointer (\"see [n]\"); context {tokens} tokens"),
    "corpus_cap": "dropped {dropped} trailing record(s) so that the context is no larger than the corpus "
                  "({corpus_tokens} tokens)",
    # naive
    "dense_chunks": "dense top-{k} over {total} embedded chunk windows (a long chunk is embedded as several): "
                    "{kept} chunks kept",
    # ppr
    "ppr": lambda d: (f"personalised PageRank (damping {d['damping']}) from {d['seeds']} question entities, "
                      f"{d.get('facts', 0)} facts and {d['dense']} dense chunks over {d['nodes']} entity and chunk "
                      f"nodes ({d.get('synonyms', 0)} synonym edges)" + (
                          "; most mass: " + ", ".join(f"{n} {m:.4f}" for n, m in d["top_entities"][:5])
                          if d.get("top_entities") else "")),
    "ppr_seeds": lambda d: (f"restart vector ({'HippoRAG 2' if d.get('paper') else 'RAGScope'}): {len(d['seeds'])} "
                            "seeds — " + ", ".join(f"{s['name']} {s['weight']:.4f} ({s['kind']})"
                                                  for s in d["seeds"][:8]) + (" …" if len(d["seeds"]) > 8 else "")),
    # path
    "node_query": lambda d: f"node query: {d['query']!r}" + (" (no low-level keyword: the question)"
                                                             if d["from_question"] else ""),
    "nodes": _nodes,
    "path_seeds": ("path seeds: {question} question entities, {similar} similar entities, {endpoints} endpoints of "
                   "the best {relations} relations for the high-level keywords"),
    "question_pair_search": _question_pair_search,
    "flow": ("flow pruning (α={alpha}, θ={theta} on S(v)/deg(v), ≤{hops} hops) from {starts} start nodes: {reached} "
             "resources set, {pruned} nodes pruned, {expansions} expansions, {pairs} ordered node pairs connected"),
    "cap_hit": lambda d: (f"expansion cap HIT ({d['cap']} per start node) for {len(d['starts'])} start(s): "
                          f"{', '.join(d['starts'])} — their path lists are incomplete"),
    "cap_not_hit": "expansion cap ({cap} per start node) not hit: every path the pruning allows was enumerated",
    "kept_paths": ("kept {kept} paths (K={k}, {order}), reliability {best:.4f} … {worst:.4f}; placed in the context "
                   "from last to first"),
    "no_path": lambda d: (f"no path: {_NO_PATH[d['why']](d)}; context falls back to the retrieved entities' "
                          f"descriptions and source chunks (PathRAG's reference code also keeps node context)"),
    "paths_dropped": "token budget {budget}: the {dropped} least reliable paths dropped from the context",
    "sources_dropped": "token budget {budget}: {dropped} of {total} source chunks dropped",
    "node_context_cut": "token budget {budget}: {entities} entities and {sources} source chunks left out",
    # tree
    "query_entities": _query_entities,
    "no_query_entity": "no query entity in the mention graph: global branch (dense top-k over the collapsed tree)",
    "local_empty": "local branch empty: global branch with occurrence ranking",
    "pairs": "{entities} query entities in the mention graph -> {pairs} pair(s); {within} within h={h} nodes",
    "pair": "  pair {a} – {b}: {hops} ({nodes} nodes)",
    "more_pairs": "  … {more} more pairs",
    "h_step": "h-loop h={h}: {pairs} pairs kept, {chunks} chunks — {note}",
    "collapsed_tree": ("dense top-{k} over the collapsed tree ({chunks_total} chunks + {summaries_total} summaries): "
                       "{chunks} chunks, {summaries} summaries"),
    "occurrence_ranking": lambda d: (f"occurrence ranking by {', '.join(d['terms'])}: {d['kept']} candidates with "
                                     f"non-zero weight kept (top {d['k']} of {d['candidates']})"),
    "occurrence_empty": "occurrence ranking: every candidate has weight 0 -> fall back to the plain dense top-{k}",
    "items_dropped": "token budget {budget}: {dropped} of {total} items dropped",
    "tree_context": "{note}; context {tokens} tokens",
    # auto (core.routing)
    "route": "auto chose {chosen} ({reason}); router {route_ms:.1f} ms, then only {chosen} ran",
    "fusion": lambda d: (f"{' and '.join(d['parts'])} interleaved rank by rank: {d['chunks']} chunks, "
                         f"{d['both']} found by every part"
                         + (f"; {d['entities']} entity and {d['relations']} relation rows kept"
                            if d.get('entities') or d.get('relations') else "")),
}

register_texts(TEXTS)
