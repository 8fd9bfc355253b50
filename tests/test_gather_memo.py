"""One Compare gathers local's and global's evidence once (issue 36): hybrid and mix replay the gathers
that local and global (or hybrid) already made for the question, and every result — records, context,
trace, keywords, answers — is what the modes give when each gathers on its own."""
from __future__ import annotations

import pytest

QUESTIONS = [
    "Who was the first keeper of Kestrel Point Lighthouse?",
    "Who founded the organisation whose former warehouse on Salt Quay now houses the Velmora Maritime Museum?",
    "Which festival began after the Great Velmora Flood?",
]
MODES = ["naive", "local", "global", "hybrid", "mix", "tree", "path"]


def comparable(results: dict) -> dict:
    """Each mode's JSON without its stage timings (wall clock)."""
    out = {}
    for mode, result in results.items():
        data = result.to_dict()
        data.pop("timings_ms")
        out[mode] = data
    return out


def compare(ws, question: str) -> dict:
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN

    return run_modes(LOCAL_ADMIN, ws, question, MODES)


def counting_expansions(monkeypatch) -> dict[str, int]:
    """Count the graph expansions of local and global (the work a gather does once it has its seeds)."""
    from core.retrieval import global_search, local_search

    calls = {"local": 0, "global": 0}
    for module, name, fn in ((local_search, "local", local_search.local_expand),
                             (global_search, "global", global_search.global_expand)):
        def counted(*args, _fn=fn, _name=name, **kwargs):
            calls[_name] += 1
            return _fn(*args, **kwargs)

        monkeypatch.setattr(module, f"{name}_expand", counted)
    return calls


@pytest.mark.parametrize("question", QUESTIONS)
def test_compare_gathers_once_with_the_results_of_separate_gathers(sample_ws, monkeypatch, question):
    from core.retrieval import lightrag_retrieval

    calls = counting_expansions(monkeypatch)
    replays = []
    real = lightrag_retrieval.gathered_once

    def watched(ctx, result, name, run):
        memo = ctx.state.attached(lightrag_retrieval.GathersByQuestion)
        if (name, ctx.ws.views.generation) in memo.done:
            replays.append(name)
        return real(ctx, result, name, run)

    monkeypatch.setattr(lightrag_retrieval, "gathered_once", watched)
    memoed = comparable(compare(sample_ws, question))
    assert calls == {"local": 1, "global": 1}  # hybrid and mix walked no graph of their own
    assert replays == ["local", "global", "hybrid"]  # hybrid replays local's and global's, mix hybrid's

    monkeypatch.setattr(lightrag_retrieval, "gathered_once", lambda ctx, result, name, run: run())
    calls["local"] = calls["global"] = 0
    separate = comparable(compare(sample_ws, question))
    assert calls == {"local": 3, "global": 3}  # without the memo: local, hybrid, mix each gather again
    assert memoed.keys() == separate.keys()
    for mode in MODES:
        assert memoed[mode] == separate[mode], mode
    assert memoed["hybrid"]["context_text"] and any(e["branch"] == "global" for e in memoed["mix"]["trace_events"])


def test_a_replayed_gather_is_not_changed_by_the_mode_that_replays_it(sample_ws):
    """hybrid's merge marks records found by both branches; local's own result, asked again after
    hybrid in the same question, keeps its records unmarked."""
    from core.retrieval.registry import query_context, retrieve

    ctx = query_context(sample_ws, QUESTIONS[1])
    first = retrieve(ctx, "local").to_dict()
    hybrid = retrieve(ctx, "hybrid").to_dict()
    again = retrieve(ctx, "local").to_dict()
    for data in (first, again):
        data.pop("timings_ms")
    assert first == again
    assert any(e.get("also_found_by") for e in hybrid["entities"] + hybrid["relations"] + hybrid["chunks"])
