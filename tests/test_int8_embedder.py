"""The int8 embedder ``local-minilm-int8`` (core/onnx_embeddings.py): its vectors agree with the torch
MiniLM's, it is onnxruntime behind it (no silent fallback to torch), a missing or altered model file is an
error naming the install command, the install step fails loudly, a workspace built by one local embedder
refuses the other, and ``repair --reembed --embedder`` moves a workspace between them."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT

ENV = {k: v for k, v in os.environ.items() if k != "RAGSCOPE_STORE"} | {
    "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"}
# A fixed text set: questions, names, keyword strings and passages of several lengths.
TEXTS = [
    "Who founded the Tidewater Shipping Cooperative in Port Sallow?",
    "Tobias Wren", "Port Sallow, Velmora Coast", "harbour, shipping, cooperative, founder",
    "What is the native language of the person who broke the salt law in 1930?",
    "Mahatma Gandhi led the Salt March to Dandi in 1930 to protest the British salt tax.",
    "The breakwater at Port Sallow was inspected after the winter storms damaged its northern arm, "
    "and the harbour master recommended that the cooperative fund its repair before the fishing season.",
    "Peter Bonetti (born 27 September 1941 in Putney, London) is a former football goalkeeper for Chelsea, "
    "the St. Louis Stars, Dundee United and England. He was known for his safe handling and reflexes.",
    "Quantum chromodynamics describes the strong interaction between quarks and gluons.",
    "a", "1930", "Gujarati",
]
FLOOR = 0.99  # the agreement floor (cosine to the torch vectors, every text)
# This recipe's own floor on TEXTS: it gives min 0.9979 / mean 0.9985; the build before it (feed-forward
# input MatMuls and the word-embedding table quantised too) gave 0.9924 / 0.9957.
RECIPE_FLOOR, RECIPE_MEAN = 0.997, 0.998


@pytest.fixture(scope="module")
def torch_vectors():
    from core.embeddings import local_embedder

    return local_embedder().embed(TEXTS)


def test_int8_vectors_agree_with_the_torch_model(int8, torch_vectors):
    vectors = int8.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = (vectors * torch_vectors).sum(axis=1)
    assert cosines.min() >= FLOOR, dict(zip(TEXTS, cosines.round(4)))
    assert cosines.min() >= RECIPE_FLOOR and cosines.mean() >= RECIPE_MEAN, dict(zip(TEXTS, cosines.round(4)))
    queries = int8.embed_queries(TEXTS[:5])  # the graph modes' packed query call
    assert ((queries * torch_vectors[:5]).sum(axis=1)).min() >= FLOOR


def test_it_is_onnxruntime_int8_behind_it_not_the_torch_model(int8, torch_vectors):
    import onnxruntime

    assert int8.name == "all-MiniLM-L6-v2-int8" and int8.dim == 384
    assert all(isinstance(s, onnxruntime.InferenceSession) for s in int8._sessions.values())
    vectors = int8.embed(TEXTS)
    # quantised weights move every vector a little: identical vectors would mean torch answered
    assert (1.0 - (vectors * torch_vectors).sum(axis=1)).max() > 1e-4
    assert not np.allclose(vectors, torch_vectors, atol=1e-6)


def test_a_missing_or_altered_model_is_an_error_naming_the_install(tmp_path, int8):
    from core.onnx_embeddings import Int8MiniLMEmbedder, Int8ModelMissingError, model_dir

    with pytest.raises(Int8ModelMissingError, match="install-minilm-int8.sh"):
        Int8MiniLMEmbedder(directory=tmp_path / "nothing-here")
    altered = tmp_path / "altered"
    shutil.copytree(model_dir(), altered)
    with open(altered / "model_int8.onnx", "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(Int8ModelMissingError, match="SHA-256"):
        Int8MiniLMEmbedder(directory=altered)


def test_a_model_of_an_older_quantisation_recipe_is_refused(tmp_path, int8):
    from core.onnx_embeddings import RECIPE, Int8MiniLMEmbedder, Int8ModelMissingError, model_dir

    older = tmp_path / "older"
    shutil.copytree(model_dir(), older)
    manifest = json.loads((older / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["recipe"] == RECIPE
    del manifest["recipe"]  # what the first build wrote
    (older / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(Int8ModelMissingError, match="older quantisation recipe.*install-minilm-int8.sh"):
        Int8MiniLMEmbedder(directory=older)


def test_only_the_attention_matmuls_are_quantised(int8):
    """The recipe: per-channel int8 weights for the attention projections; the feed-forward MatMuls and the
    word-embedding table stay fp32 (their activations' outliers cost the most agreement)."""
    import onnx

    from core.onnx_embeddings import checked_model

    graph = onnx.load(str(checked_model())).graph
    quantised = [n.name for n in graph.node if n.op_type in ("MatMulInteger", "DynamicQuantizeMatMul")]
    plain = [n.name for n in graph.node if n.op_type == "MatMul"]
    assert len(quantised) == 6 * 4, quantised  # query, key, value, attention output of six layers
    assert all("/attention/" in name for name in quantised)
    assert sum("/intermediate/dense/" in n for n in plain) == 6 and sum(
        n.endswith("/output/dense/MatMul") and "/attention/" not in n for n in plain) == 6
    gathers = [n for n in graph.node if n.op_type == "Gather" and "word_embeddings" in "".join(n.input)]
    assert gathers and all(not name.endswith("_quantized") for g in gathers for name in g.input)


def test_the_install_step_fails_loudly_and_test_sh_runs_it(tmp_path):
    env = dict(ENV, RAGSCOPE_MINILM_INT8_DIR=str(tmp_path / "m"), PYTHON="false")
    proc = subprocess.run(["bash", "scripts/install-minilm-int8.sh"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode != 0 and "FAILED" in proc.stderr, proc.stderr
    check = subprocess.run(["bash", "scripts/install-minilm-int8.sh", "--check"], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 1
    test_sh = (ROOT / "scripts" / "test.sh").read_text(encoding="utf-8")
    assert "install bash scripts/install-minilm-int8.sh" in test_sh


def test_a_workspace_keeps_its_recorded_local_embedder_and_refuses_a_chosen_other(tmp_path):
    """int8 is the default of new workspaces; a workspace the torch model built keeps it when no embedder is
    chosen (no refusal, no silent switch), and a chosen other one is refused with the re-embed command."""
    from core.config import Flags, resolve_settings
    from core.errors import EmbedderMismatchError
    from core.onnx_embeddings import INT8_NAME
    from core.settings import Settings
    from core.workspace import Workspace

    class Named:  # records a name without loading any model
        dim = 384

        def __init__(self, name: str) -> None:
            self.name = name

    assert Settings().embedder == "local-minilm-int8"
    fresh = Workspace(tmp_path / "new")
    assert fresh.status()["embedder"]["kind"] == "local-minilm-int8"  # what a new workspace will record
    fresh.close()
    path = tmp_path / "ws"
    ws = Workspace(path, settings=Settings(embedder="local-minilm-int8"), embedder=Named(INT8_NAME))
    ws.record_embedder()
    assert ws.status()["embedder"]["kind"] == "local-minilm-int8"
    ws.close()
    with pytest.raises(EmbedderMismatchError) as info:
        Workspace(path, settings=Settings(embedder="local-minilm"))
    message = str(info.value)
    assert INT8_NAME in message and "--embedder local-minilm-int8" in message and "repair --reembed" in message
    Workspace(path, settings=Settings(embedder="local-minilm-int8")).close()  # its own embedder opens it
    other = tmp_path / "torch_ws"
    ws = Workspace(other, settings=Settings(embedder="local-minilm"), embedder=Named("all-MiniLM-L6-v2"))
    ws.record_embedder()
    ws.close()
    for unchosen in (Settings(), resolve_settings(other, Flags()), Settings().with_overrides({"chunk_tokens": 600})):
        opened = Workspace(other, settings=unchosen)  # the default (int8) is not a choice: the recorded model wins
        assert opened.settings.embedder == "local-minilm" and opened.status()["embedder"]["kind"] == "local-minilm"
        opened.close()
    for chosen in (Settings(embedder="local-minilm-int8"), resolve_settings(other, Flags(embedder="local-minilm-int8"))):
        with pytest.raises(EmbedderMismatchError, match="--embedder local-minilm\\b"):
            Workspace(other, settings=chosen)


def test_settings_remember_which_fields_were_chosen(tmp_path):
    """The distinction the rule above needs survives overrides, validation, the settings file and the JSON
    the app's workspace cache is keyed by (only chosen fields)."""
    from core.settings import Settings, read_settings, save_settings, validate_settings

    assert "embedder" not in Settings().with_overrides({"chunk_tokens": 600}).model_fields_set
    assert "embedder" in Settings().with_overrides({"embedder": "local-minilm"}).model_fields_set
    assert "embedder" not in validate_settings(Settings(chunk_tokens=600)).model_fields_set
    assert "embedder" not in read_settings(tmp_path).model_fields_set  # no file: defaults
    (tmp_path / "settings.json").write_text(json.dumps({"chunk_tokens": 600}), encoding="utf-8")
    assert "embedder" not in read_settings(tmp_path).model_fields_set
    save_settings(tmp_path, Settings(embedder="local-minilm"))
    assert read_settings(tmp_path).embedder == "local-minilm" and "embedder" in read_settings(tmp_path).model_fields_set
    shared = Settings.model_validate_json(Settings(chunk_tokens=600).model_dump_json(exclude_unset=True))
    assert shared.chunk_tokens == 600 and "embedder" not in shared.model_fields_set


def test_a_new_workspace_without_the_int8_model_fails_naming_the_install(tmp_path):
    """No silent fallback to torch: the default embedder's missing model is an error naming the install."""
    (tmp_path / "notes.txt").write_text("Mara Quill founded the cooperative in Port Sallow.", encoding="utf-8")
    env = dict(ENV, RAGSCOPE_MINILM_INT8_DIR=str(tmp_path / "missing"))
    proc = subprocess.run([sys.executable, "-m", "core", "index", "--quiet", "--workspace", str(tmp_path / "ws"),
                           str(tmp_path / "notes.txt")], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "bash scripts/install-minilm-int8.sh" in proc.stderr and "not installed" in proc.stderr


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "core", *args], cwd=ROOT, env=ENV, capture_output=True, text=True,
                          timeout=900)


@pytest.mark.slow
def test_reembed_moves_a_workspace_to_int8_and_queries_use_it(int8, tmp_path):
    path = tmp_path / "ws"
    (tmp_path / "notes.txt").write_text("Tobias Wren inspected the breakwater at Port Sallow. The Tidewater "
                                        "Shipping Cooperative was founded by Mara Quill in Port Sallow.",
                                        encoding="utf-8")
    indexed = cli("index", "--quiet", "--embedder", "local-minilm", "--workspace", str(path),
                  str(tmp_path / "notes.txt"))  # a workspace the torch model built (main's default before int8)
    assert indexed.returncode == 0, indexed.stderr[-2000:]
    kept = cli("query", "--mode", "naive", "--json", "--workspace", str(path), "Who founded the cooperative?")
    assert kept.returncode == 0 and json.loads(kept.stdout)["chunks"], kept.stderr[-2000:]  # no flag: its own model
    moved = cli("repair", "--reembed", "--embedder", "local-minilm-int8", "--workspace", str(path))
    assert moved.returncode == 0, moved.stderr[-2000:]
    done = json.loads(moved.stdout)["reembedded"]
    assert done["from"] == "all-MiniLM-L6-v2" and done["to"] == "all-MiniLM-L6-v2-int8" and done["dimension"] == 384
    assert json.loads((path / "settings.json").read_text(encoding="utf-8"))["embedder"] == "local-minilm-int8"
    query = cli("query", "--mode", "naive", "--json", "--workspace", str(path), "Who founded the cooperative?")
    assert query.returncode == 0 and json.loads(query.stdout)["chunks"], query.stderr[-2000:]
    refused = cli("query", "--mode", "naive", "--embedder", "local-minilm", "--workspace", str(path), "Who?")
    assert refused.returncode == 2 and "indexed with the embedder 'all-MiniLM-L6-v2-int8'" in refused.stderr


def test_length_batches_group_similar_lengths_and_keep_every_text():
    from core.onnx_embeddings import length_batches

    lengths = [3, 70, 4, 65, 5, 200, 6, 3]
    batches = length_batches(lengths, 3)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert all(len(b) <= 3 for b in batches)
    for batch in batches:  # no batch pads a short text out to a long one
        assert max(lengths[i] for i in batch) <= 1.5 * min(lengths[i] for i in batch) + 8
    assert [lengths[i] for i in batches[0]] == [3, 3, 4]


def test_the_indexing_session_threads_sleep_between_operators_and_vectors_match_one_thread(int8):
    """The multi-thread session that embeds indexing batches does not spin-wait (onnxruntime's default
    burns 1.5-1.7x the CPU seconds of the same batches); its vectors equal the one-thread session's."""
    from core.onnx_embeddings import SPIN_CONFIG, Int8MiniLMEmbedder

    pooled = [threads for threads in int8._sessions if threads > 1]
    if not pooled:
        pytest.skip("one core: the indexing session has no thread pool")
    for threads in pooled:
        assert int8._sessions[threads].get_session_options().get_session_config_entry(SPIN_CONFIG) == "0"
    ids = [e.ids for e in int8._tokenizer.encode_batch(TEXTS[:9])]
    assert np.array_equal(Int8MiniLMEmbedder._run(ids, int8._sessions[max(pooled)]),
                          Int8MiniLMEmbedder._run(ids, int8._sessions[1]))
