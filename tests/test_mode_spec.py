"""One ``ModeSpec`` per mode: a dummy mode written to a temporary module plus one spec entry appears
in the CLI's ``--modes`` (help, ``compare``, ``eval``), on the Compare and Inspect pages (picker,
blurb, parameter controls, result), in the offline answers and in the LLM messages — and nothing
else has to change. Bad specs fail with a clear error."""
from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT
from core.retrieval import registry
from core.retrieval.spec import ModeSpec, ModeSpecError

QUESTION = "Who founded the Tidewater Shipping Cooperative in Port Sallow?"
DUMMY_MODULE = '''
"""A dummy retrieval mode (test only): the chunks sharing the most words with the question."""
from core.retrieval.query import QueryContext, Stopwatch
from core.retrieval.results import fill_chunk_texts, finish, new_result
from core.retrieval.context_blocks import prefix_within, sources_text
from core.tokens import count_tokens
from core.trace import note
from core.types import ChunkHit, RetrievalResult


class DummyRetriever:
    name = "dummy"
    params = ("naive_top_k", "max_total_tokens")

    def retrieve(self, ctx: QueryContext) -> RetrievalResult:
        result = new_result(ctx, self.name, self.params)
        with Stopwatch(result).stage("shared_words"):
            words = set(ctx.question.lower().split())
            chunks = ctx.ws.store.chunks_by_id(ctx.ws.store.all_chunk_ids())
            scored = sorted(((len(words & set(c.text.lower().split())), cid) for cid, c in chunks.items()),
                            key=lambda pair: (-pair[0], pair[1]))[:ctx.settings.naive_top_k]
            records = fill_chunk_texts(ctx.ws, [ChunkHit.make(cid, float(n), f"{n} words shared with the question")
                                                for n, cid in scored])
            records, _ = prefix_within(records, lambda c: count_tokens(c.text), ctx.settings.max_total_tokens)
            result.chunks = records
            result.trace.append(note(f"dummy: {len(records)} chunks by words shared with the question"))
            return finish(result, sources_text(records), [r.chunk_id for r in records])
'''
DUMMY = ModeSpec("dummy", "test", "the chunks sharing the most words with the question.",
                 "ragscope_dummy_mode:DummyRetriever")


@pytest.fixture()
def dummy_mode(tmp_path, monkeypatch):
    """The dummy mode's module on sys.path and its one spec entry appended to the registry."""
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "ragscope_dummy_mode.py").write_text(textwrap.dedent(DUMMY_MODULE))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setattr(registry, "SPECS", (*registry.SPECS, DUMMY))
    yield DUMMY


@pytest.fixture()
def data_dir(sample_workspace_dir, tmp_path, monkeypatch):
    root = tmp_path / "data"
    shutil.copytree(sample_workspace_dir, root / "sample")
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(root))
    return root


def test_dummy_mode_in_the_registry_answers_and_llm_messages(dummy_mode, sample_ws):
    from core.api import run_modes
    from core.auth import LOCAL_ADMIN
    from core.llm.generated_answers import answer_messages

    assert registry.modes()[-1] == "dummy" and registry.parse_modes("dummy,naive") == ["dummy", "naive"]
    assert registry.mode_params("dummy") == ["naive_top_k", "max_total_tokens"]
    assert registry.mode_help("dummy") == "test: the chunks sharing the most words with the question."
    result = run_modes(LOCAL_ADMIN, sample_ws, QUESTION, "dummy")["dummy"]
    assert result.mode == "dummy" and result.chunks and result.params["naive_top_k"] == 10
    assert result.answer.kind == "extractive" and "[" in result.answer.text  # naive's chunk answer, cited
    user = answer_messages(result)[1]["content"]
    assert user.startswith("Context:\n") and user.endswith(f"Question: {QUESTION}\n\nAnswer:")


def test_dummy_mode_in_the_cli(dummy_mode, data_dir, capsys):
    from core.cli.main import main

    for command in ("compare", "eval"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "dummy" in capsys.readouterr().out, command
    ws = str(data_dir / "sample")
    assert main(["compare", "--workspace", ws, "--quiet", "--modes", "naive,dummy", "--json", QUESTION]) == 0
    results = json.loads(capsys.readouterr().out)["results"]
    assert list(results) == ["naive", "dummy"] and results["dummy"]["mode"] == "dummy"
    assert main(["eval", "--workspace", ws, "--quiet", "--questions", str(ROOT / "data" / "sample_questions.jsonl"),
                 "--modes", "all", "--limit", "2", "--k", "2,5", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert list(summary["modes"])[:len(registry.modes())] == registry.modes()
    assert "dummy" in summary["modes"] and summary["modes"]["dummy"]["recall@k"]["5"] is not None


def _page(path: str):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / path), default_timeout=600)
    at.session_state["workspace_name"] = "sample"
    return at


def test_dummy_mode_on_compare(dummy_mode, data_dir):
    at = _page("compare.py").run()
    assert not at.exception, [e.value for e in at.exception]
    picker = at.multiselect(key="compare_modes")
    assert "dummy" in picker.options and "dummy" in picker.value
    assert "dummy: test: the chunks sharing the most words" in picker.help
    picker.set_value(["naive", "dummy"])
    at.text_area(key="compare_question").input(QUESTION)
    at.button(key="compare_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert list(at.session_state["compare_last"]["results"]) == ["naive", "dummy"]
    assert "dummy" in [s.value for s in at.subheader]


def test_dummy_mode_on_inspect(dummy_mode, data_dir):
    at = _page("inspect.py").run()
    assert "dummy" in at.selectbox(key="inspect_mode").options
    at.selectbox(key="inspect_mode").set_value("dummy").run()
    assert "test: the chunks sharing the most words with the question." in [c.value for c in at.caption]
    at.number_input(key="inspect_param_dummy_naive_top_k").set_value(2)  # built from the declared params
    at.text_area(key="inspect_question").input(QUESTION)
    at.button(key="inspect_run").click().run()
    assert not at.exception, [e.value for e in at.exception]
    last = at.session_state["inspect_last"]
    assert last["mode"] == "dummy" and last["overrides"] == {"naive_top_k": 2}
    assert len(last["result"].chunks) == 2
    assert "Result of dummy" in [s.value for s in at.subheader]


def test_the_seven_modes_are_specs_in_display_order():
    names = [s.name for s in registry.SPECS]
    assert names == ["naive", "local", "global", "hybrid", "mix", "tree", "path", "ppr", "auto"] == registry.modes()
    systems = {s.name: s.system for s in registry.SPECS}
    assert systems["hybrid"] == "LightRAG" and systems["tree"] == "E2GraphRAG" and systems["path"] == "PathRAG"
    for s in registry.SPECS:
        assert registry.registry()[s.name].name == s.name and callable(s.offline_builder())
        assert callable(s.llm_builder())


@pytest.mark.parametrize("name", ["", "all", "bm25", "Naive", "1mode", "a b", "x" * 33, "naïve"])
def test_bad_mode_names_are_refused(name):
    with pytest.raises(ModeSpecError, match="mode name"):
        ModeSpec(name, "test", "a blurb.", "ragscope_dummy_mode:DummyRetriever")


def test_bad_specs_are_refused(tmp_path, monkeypatch):
    with pytest.raises(ModeSpecError, match="one non-empty line"):
        ModeSpec("dummy", "test", "two\nlines", "m:R")
    with pytest.raises(ModeSpecError, match="module:attribute"):
        ModeSpec("dummy", "test", "a blurb.", "no_colon_here")
    (tmp_path / "ragscope_bad_modes.py").write_text(textwrap.dedent('''
        class Misnamed:
            name, params = "other", ()
        class Undeclared:
            name, params = "dummy", ("naive_top_k", "not_a_setting")
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModeSpecError, match="calls itself 'other'"):
        ModeSpec("dummy", "test", "a blurb.", "ragscope_bad_modes:Misnamed").build_retriever()
    with pytest.raises(ModeSpecError, match="not settings: not_a_setting"):
        ModeSpec("dummy", "test", "a blurb.", "ragscope_bad_modes:Undeclared").build_retriever()
    with pytest.raises(ModeSpecError, match="no attribute"):
        ModeSpec("dummy", "test", "a blurb.", "ragscope_bad_modes:Missing").build_retriever()
    with pytest.raises(ModeSpecError, match="cannot import"):
        ModeSpec("dummy", "test", "a blurb.", "ragscope_no_such_module:X").build_retriever()
    monkeypatch.setattr(registry, "SPECS", (*registry.SPECS, registry.SPECS[0]))
    with pytest.raises(ModeSpecError, match="more than one spec for mode"):
        registry.modes()


def test_unknown_mode_is_a_clear_error():
    with pytest.raises(ValueError, match=r"unknown mode 'nope' \(available: naive, local"):
        registry.spec("nope")
    assert registry.mode_help("nope") == "" and registry.find_spec("nope") is None
