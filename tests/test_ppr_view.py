"""Inspect's ppr panel (``ui.ppr_view``): the seed table is the walk's restart vector (weights and
shares as logged), the top-entity table is the walk's mass ranking, the chunk table gives each chunk's
reason in rank order; on the Inspect page (AppTest) the three tables appear for ppr and not for naive,
and document text in them is shown as data, never as markup."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from core.retrieval.registry import query_context, retrieve
from core.types import ChunkHit, RetrievalResult
from ui.ppr_view import chunk_reasons_frame, fact_filter_text, is_ppr_walk, seeds_frame, top_entities_frame

ROOT = Path(__file__).resolve().parent.parent
INSPECT = str(ROOT / "pages" / "inspect.py")
QUESTION = "Who founded the Tidewater Shipping Cooperative in Port Sallow?"


def _hand_result() -> RetrievalResult:
    result = RetrievalResult(mode="ppr", query="q")
    result.log("graph_walk", "ppr_seeds", paper=False, facts=1, fact_filter="offline rule: x", seeds=[
        {"key": "a", "name": "**A**", "weight": 0.3, "kind": "fact", "why": "fact A — B (cosine 0.600)"},
        {"key": "chunk:c1", "name": "chunk:c1", "weight": 0.1, "kind": "passage", "why": "dense cosine 0.9"}])
    result.log("graph_walk", "ppr", seeds=1, facts=1, dense=1, nodes=3, synonyms=0, damping=0.5,
               top_entities=[["A", 0.4], ["B", 0.2]])
    result.chunks = [ChunkHit.make("c1", 0.3, "personalised PageRank 0.3000 (rank 1)"),
                     ChunkHit.make("c2", 0.1, "personalised PageRank 0.1000 (rank 2)")]
    return result


def test_frames_hold_the_logged_walk():
    result = _hand_result()
    seeds = seeds_frame(result)
    assert list(seeds["seed"]) == ["**A**", "chunk:c1"] and list(seeds["kind"]) == ["fact", "passage"]
    assert list(seeds["share %"]) == pytest.approx([75.0, 25.0])
    assert list(top_entities_frame(result)["entity"]) == ["A", "B"]
    chunks = chunk_reasons_frame(result)
    assert list(chunks["chunk"]) == ["c1", "c2"] and list(chunks["rank"]) == [1, 2]
    assert chunks["why it ranked here"][1].endswith("(rank 2)")
    assert fact_filter_text(result) == "Facts chosen by: offline rule: x"
    assert is_ppr_walk(result) and not is_ppr_walk(RetrievalResult(mode="naive", query="q"))
    routed = RetrievalResult(mode="auto", query="q")
    routed.route = {"chosen": "ppr"}
    assert is_ppr_walk(routed) and fact_filter_text(RetrievalResult(mode="ppr", query="q")) == ""


def test_frames_of_a_real_walk_match_its_trace(sample_ws):
    result = retrieve(query_context(sample_ws, QUESTION), "ppr")
    seeds = seeds_frame(result)
    logged = result.events("ppr_seeds")[0].data["seeds"]
    assert list(seeds["weight"]) == [s["weight"] for s in logged] and seeds["share %"].sum() == pytest.approx(100, abs=0.005 * len(seeds))  # each share rounded to 0.01
    masses = list(top_entities_frame(result)["PageRank mass"])
    assert masses and masses == sorted(masses, reverse=True)
    assert list(chunk_reasons_frame(result)["chunk"]) == [c.chunk_id for c in result.chunks]


def test_other_modes_have_empty_frames(sample_ws):
    result = retrieve(query_context(sample_ws, QUESTION), "naive")
    assert seeds_frame(result).empty and top_entities_frame(result).empty


@pytest.fixture(scope="module")
def data_dir(sample_workspace_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("ragscope_data_ppr")
    shutil.copytree(sample_workspace_dir, root / "sample")
    old = os.environ.get("RAGSCOPE_DATA_DIR")
    os.environ["RAGSCOPE_DATA_DIR"] = str(root)
    yield root
    if old is None:
        os.environ.pop("RAGSCOPE_DATA_DIR", None)
    else:
        os.environ["RAGSCOPE_DATA_DIR"] = old


def _inspect(mode: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(INSPECT, default_timeout=600)
    at.session_state["workspace_name"] = "sample"
    at.run()
    at.selectbox(key="inspect_mode").set_value(mode)
    at.text_area(key="inspect_question").input(QUESTION)
    at.button(key="inspect_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


@pytest.mark.slow
def test_inspect_shows_the_ppr_panel_only_for_ppr(data_dir):
    at = _inspect("ppr")
    result = at.session_state["inspect_last"]["result"]
    tables = {tuple(d.value.columns): d.value for d in at.dataframe}
    assert list(tables[tuple(seeds_frame(result).columns)]["weight"]) == list(seeds_frame(result)["weight"])
    assert list(tables[tuple(top_entities_frame(result).columns)]["entity"]) == list(top_entities_frame(result)["entity"])
    assert list(tables[tuple(chunk_reasons_frame(result).columns)]["chunk"]) == [c.chunk_id for c in result.chunks]
    assert any("Why each chunk ranked" in c.value for c in at.caption)
    at = _inspect("naive")
    columns = {tuple(d.value.columns) for d in at.dataframe}
    assert tuple(seeds_frame(result).columns) not in columns and not any("Why each chunk ranked" in c.value
                                                                         for c in at.caption)


def test_an_auto_result_that_fused_ppr_shows_the_walk_and_each_parts_rank():
    """A fused auto candidate holding ppr carries ppr's trace: the panel shows it, and its chunk table gives
    the rank each part gave the chunk (no PageRank mass: the fused order is by rank, not mass)."""
    result = _hand_result()
    result.mode = "auto"
    result.route = {"chosen": "ppr+mix+global+path"}
    result.chunks = [ChunkHit.make("c1", 0.0, "ppr+mix+global+path: rank 1 in ppr, rank 3 in mix")]
    assert is_ppr_walk(result)
    chunks = chunk_reasons_frame(result)
    assert "PageRank mass" not in chunks.columns and chunks["why it ranked here"][0].endswith("rank 3 in mix")
    other = RetrievalResult(mode="auto", query="q")
    other.route = {"chosen": "mix"}
    assert not is_ppr_walk(other)


def test_the_route_table_shows_the_hop_routers_prediction_and_deciding_features():
    from ui.results_view import route_frame

    result = RetrievalResult(mode="auto", query="q")
    result.route = {"chosen": "ppr+mix+global+path", "default": "ppr+mix", "model": "default",
                    "reason": "predicted 3.10 hops (gold passages), a question of 2.5 hops or more",
                    "gains": {"predicted_hops": 3.1}, "features": {"words": 2.4, "clauses": 3.0, "possessives": 1.0}}
    frame = dict(zip(route_frame(result)["field"], route_frame(result)["value"]))
    assert frame["chosen mode"] == "ppr+mix+global+path" and frame["predicted hops (gold passages)"] == "3.10"
    assert frame["question feature: words"] == "24" and frame["question feature: clauses"] == "3"  # words: the count (stored / 10)
    assert not any(k.startswith("predicted gain") for k in frame)
