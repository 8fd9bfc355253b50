"""CPU and wall seconds of the int8 indexing pass by session setup, on a workspace's own graph texts.

Embeds the entity, relation and tree texts a re-embedding of the workspace would embed (as
``benchmarks/embedded_wordpieces.py`` rebuilds them), in the slices of 256 texts that indexing uses
(``core.indexing.batch.progress_slices``) and the embedder's length batches, with several setups of the
onnxruntime session, round after round (A B C … A B C …, so a change of load hits every setup):

* ``2t-spin``: two intra-op threads spinning between operators (onnxruntime's default; main before w76);
* ``2t-sleep``: two threads that sleep between operators (``session.intra_op.allow_spinning`` 0);
* ``1t``: one thread; ``1t-b32`` / ``1t-b64``: one thread, batches of 32 / 64 texts instead of 16.

Per setup: wall and process CPU seconds (``time.process_time``: every thread of the process) and how far
its vectors are from the first setup's (max absolute difference, least cosine). The int8 activations take
one scale per batch tensor, so a different batch size gives (slightly) different vectors.

    python benchmarks/int8_indexing_threads.py --workspace COPY_OF_WORKSPACE [--rounds 2] [--setups 2t-spin,2t-sleep]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

import common  # noqa: F401 - offline environment, the project on sys.path
from embedded_wordpieces import embedded_texts

SETUPS = {"2t-spin": (2, True, 16), "2t-sleep": (2, False, 16), "1t": (1, True, 16),
          "1t-b32": (1, True, 32), "1t-b64": (1, True, 64)}


def session(threads: int, spinning: bool) -> Any:
    """An onnxruntime session on the installed int8 model, set up as the embedder sets up its own."""
    import onnxruntime

    from core.onnx_embeddings import SPIN_CONFIG, checked_model

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    if not spinning:
        options.add_session_config_entry(SPIN_CONFIG, "0")
    return onnxruntime.InferenceSession(str(checked_model()), options, providers=["CPUExecutionProvider"])


def embed(ids: Sequence[Sequence[int]], runner: Any, batch_size: int) -> np.ndarray:
    """Unit vectors of ``ids`` in slices of 256 texts, each cut into the embedder's length batches."""
    from core.embeddings import _normalise
    from core.indexing.batch import progress_slices
    from core.onnx_embeddings import Int8MiniLMEmbedder, length_batches

    out = np.zeros((len(ids), 384), dtype=np.float32)
    for start, end in progress_slices(len(ids)):
        part = ids[start:end]
        for group in length_batches([len(piece) for piece in part], batch_size):
            out[[start + i for i in group]] = Int8MiniLMEmbedder._run([part[i] for i in group], runner)
    return _normalise(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True, type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--setups", default=",".join(SETUPS))
    args = parser.parse_args()
    from tokenizers import Tokenizer

    from core.onnx_embeddings import MAX_WORDPIECES, checked_model

    kinds = embedded_texts(args.workspace)
    texts = kinds["entities"] + kinds["relations"] + kinds["tree"]
    tokenizer = Tokenizer.from_file(str(checked_model().parent / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_WORDPIECES)
    tokenizer.no_padding()
    ids = [e.ids for e in tokenizer.encode_batch([t if t.strip() else " " for t in texts])]
    print(f"{len(ids):,} graph texts, {sum(map(len, ids)):,} wordpieces; load average {os.getloadavg()}")
    names = [n.strip() for n in args.setups.split(",") if n.strip()]
    sessions: dict[tuple[int, bool], Any] = {}
    first: np.ndarray | None = None
    for round_ in range(args.rounds):
        for name in names:
            threads, spinning, batch_size = SETUPS[name]
            runner = sessions.setdefault((threads, spinning), session(threads, spinning))
            cpu, wall = time.process_time(), time.perf_counter()
            vectors = embed(ids, runner, batch_size)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
            first = vectors if first is None else first
            gap = float(np.abs(vectors - first).max())
            cosine = float((vectors * first).sum(axis=1).min())
            print(f"round {round_ + 1} {name:9s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  max |diff| {gap:.1e}  "
                  f"least cosine {cosine:.5f}  load {os.getloadavg()[0]:.1f}", flush=True)


if __name__ == "__main__":
    main()
