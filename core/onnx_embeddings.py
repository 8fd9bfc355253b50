"""The int8 all-MiniLM-L6-v2 on onnxruntime (embedder ``local-minilm-int8``).

The model file is made at install time by ``scripts/install-minilm-int8.sh`` (the package's own weights
exported to ONNX and quantised with onnxruntime's ``quantize_dynamic``); nothing is downloaded here. It is
looked for in ``RAGSCOPE_MINILM_INT8_DIR``, else ``$XDG_CACHE_HOME/ragscope/minilm-int8`` (``~/.cache``).
A missing or altered file (its SHA-256 is checked against the install's manifest) is an error that names
the install command: there is no silent fallback to the torch model.

Same tokenizer (the package's ``tokenizer.json``, 256 wordpieces at most), mean pooling over the real
wordpieces and L2 normalisation as sentence-transformers; the vectors agree with the torch model's to a
cosine of about 0.99 (``benchmarks/int8_embedding.py``; tests/test_int8_embedder.py holds the floor).
"""
from __future__ import annotations

import hashlib
import json
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from core.embeddings import QUERY_BATCH, _normalise
from core.errors import RAGScopeError

INT8_NAME = "all-MiniLM-L6-v2-int8"  # recorded in a workspace it builds: the torch model's workspaces refuse it
MODEL_FILE = "model_int8.onnx"
MAX_WORDPIECES = 256  # sentence-transformers' max_seq_length of the torch embedder
INSTALL_HINT = "bash scripts/install-minilm-int8.sh"
# How the install quantises (scripts/export_minilm_int8.py records it in the manifest): int8 weights per
# channel for the attention MatMuls only; the feed-forward MatMuls and the word-embedding table stay fp32.
# A model made by another recipe is refused with the install hint, and the install makes it again.
RECIPE = "attention-matmuls-int8-v2"
# onnxruntime's intra-op threads spin-wait for the next operator by default. The indexing session has two
# threads, and spinning cost 1.5-1.7x the CPU seconds of the same batches with the threads asleep (same
# vectors, bit for bit). On a shared machine, spinning can also make the wall time twice as long
# (docs/indexing-speed.md, "Embedding threads that sleep"). A one-thread session has no pool to spin.
SPIN_CONFIG = "session.intra_op.allow_spinning"


class Int8ModelMissingError(RAGScopeError, RuntimeError):
    """The int8 model file is not installed (or does not match its manifest)."""


def model_dir() -> Path:
    """Where the install script writes the int8 model and where it is loaded from."""
    explicit = os.environ.get("RAGSCOPE_MINILM_INT8_DIR", "").strip()
    if explicit:
        return Path(explicit)
    cache = os.environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(cache) / "ragscope" / "minilm-int8"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checked_model(directory: Path | None = None) -> Path:
    """The model file, after checking it against the install's manifest; raise ``Int8ModelMissingError``."""
    directory = directory or model_dir()
    path, manifest = directory / MODEL_FILE, directory / "manifest.json"
    if not path.is_file() or not manifest.is_file() or not (directory / "tokenizer.json").is_file():
        raise Int8ModelMissingError(
            f"the int8 MiniLM model is not installed in {directory}: run `{INSTALL_HINT}` (it exports the "
            f"installed all-MiniLM-L6-v2 to ONNX and quantises it), or select the embedder local-minilm")
    recorded = json.loads(manifest.read_text(encoding="utf-8"))
    if recorded.get("recipe") != RECIPE:
        raise Int8ModelMissingError(f"{path} was made by an older quantisation recipe "
                                    f"({recorded.get('recipe', 'before v2')}, wanted {RECIPE}): run `{INSTALL_HINT}` again")
    if recorded.get("sha256") != _sha256(path):
        raise Int8ModelMissingError(f"{path} does not match its manifest's SHA-256: run `{INSTALL_HINT}` again")
    return path


def length_batches(lengths: Sequence[int], size: int) -> list[list[int]]:
    """Indexes in batches of at most ``size`` texts of similar length (sorted; a batch closes when the next
    text is longer than 1.5x its shortest + 8 wordpieces). Less padding is less work, and closer vectors:
    the int8 activations take one scale per batch tensor, which padded rows widen (a lone "a" batched with
    70-wordpiece passages fell to a cosine of 0.988 to torch, 0.996 among short strings)."""
    batches: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lambda j: lengths[j]):
        if not batches or len(batches[-1]) >= size or lengths[i] > 1.5 * lengths[batches[-1][0]] + 8:
            batches.append([])
        batches[-1].append(i)
    return batches


class Int8MiniLMEmbedder:
    """all-MiniLM-L6-v2, int8 weights, on onnxruntime's CPU provider (384-d unit vectors)."""

    name = INT8_NAME
    dim = 384
    query_vectors_alone = True  # embed_queries: a string's vector never depends on what it is embedded with

    def __init__(self, batch_size: int = 16, directory: Path | None = None) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        path = checked_model(directory)
        self._batch_size = max(1, int(batch_size))
        self._tokenizer = Tokenizer.from_file(str(path.parent / "tokenizer.json"))
        self._tokenizer.enable_truncation(MAX_WORDPIECES)
        self._tokenizer.no_padding()
        self._sessions = {threads: self._session(onnxruntime, path, threads)
                          for threads in sorted({1, max(1, min(2, os.cpu_count() or 1))})}
        self._lock = threading.Lock()

    @staticmethod
    def _session(onnxruntime: Any, path: Path, threads: int) -> Any:
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        if threads > 1:  # the pool's threads sleep between operators instead of spinning (see SPIN_CONFIG)
            options.add_session_config_entry(SPIN_CONFIG, "0")
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [t if t.strip() else " " for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        ids = [e.ids for e in self._tokenizer.encode_batch(texts)]
        if len(texts) <= QUERY_BATCH:  # query strings: one text per call, on one thread (``embed_queries``)
            return self._one_by_one(ids)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        session = self._sessions[max(self._sessions)]
        with self._lock:
            for group in length_batches([len(piece) for piece in ids], self._batch_size):
                out[group] = self._run([ids[i] for i in group], session)
        return _normalise(out)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Several query strings (the graph modes' question, names and keywords), each in its own session
        call on one thread. Not one padded call: the int8 graph quantises its activations with one scale per
        batch tensor, so a string's vector would depend on what it was batched with (the same name searched
        alone or beside the question would rank near-ties differently), and the padded call was no faster
        (4.6 short strings: 0.99 of torch's packed call; one string alone 0.41 of torch's CPU). Two or more
        strings are shared between the calling thread and the helper thread (``query_helper``): the same
        per-string calls, so the same vectors, on both cores."""
        texts = [t if t.strip() else " " for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._one_by_one([e.ids for e in self._tokenizer.encode_batch(texts)])

    def embed_queries_soon(self, texts: Sequence[str]) -> "Future[np.ndarray]":
        """``embed_queries(texts)`` started on the helper thread, while the caller does other work (the
        question's parse): a future of the same vectors. Without a helper (one core) it is computed here.
        The helper tokenises the strings too: the caller only hands them over (~0.15 ms less of its time)."""
        cleaned = [t if t.strip() else " " for t in texts]
        helper = query_helper()
        if helper is None or not cleaned:
            ids = [e.ids for e in self._tokenizer.encode_batch(cleaned)] if cleaned else []
            done: Future[np.ndarray] = Future()
            done.set_result(self._one_by_one(ids) if ids else np.zeros((0, self.dim), dtype=np.float32))
            return done
        return helper.submit(self._tokenised_each, cleaned)

    def _tokenised_each(self, texts: Sequence[str]) -> np.ndarray:
        """``_each`` of the strings' wordpieces, tokenised here (on the helper thread)."""
        return self._each([e.ids for e in self._tokenizer.encode_batch(texts)], self._sessions[1])

    def _one_by_one(self, ids: Sequence[Sequence[int]]) -> np.ndarray:
        session = self._sessions[1]
        helper = query_helper() if len(ids) > 1 else None
        if helper is None:
            with self._lock:
                return self._each(ids, session)
        shared = SharedStrings(ids, session, self.dim)
        # The helper's work never takes the lock: it holds no lock the caller waits on (no deadlock), and
        # concurrent runs of one session are safe in onnxruntime.
        helper.submit(shared.work, False)
        with self._lock:
            shared.work(True)
        return shared.result()

    @staticmethod
    def _each(ids: Sequence[Sequence[int]], session: Any) -> np.ndarray:
        """One single-thread session call per string (the vectors do not depend on what else is embedded)."""
        return _normalise(np.vstack([Int8MiniLMEmbedder._run([piece], session) for piece in ids]))

    def token_states(self, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per text, the last hidden state of each wordpiece ((n, dim), special tokens included) and its
        character span in the text ((n, 2); (0, 0) for special tokens), from the batches ``embed`` runs:
        the token outputs sentence vectors are pooled from (``core.sentence_vectors``)."""
        texts = [t if t.strip() else " " for t in texts]
        encodings = self._tokenizer.encode_batch(texts)
        ids = [e.ids for e in encodings]
        out: list[tuple[np.ndarray, np.ndarray]] = [(np.zeros((0, self.dim), np.float32), np.zeros((0, 2), int))
                                                    ] * len(texts)
        session = self._sessions[1 if len(texts) <= QUERY_BATCH else max(self._sessions)]
        groups = ([list(range(len(texts)))] if len(texts) <= QUERY_BATCH
                  else length_batches([len(piece) for piece in ids], self._batch_size))
        with self._lock:
            for group in groups:
                hidden, mask = self._hidden([ids[i] for i in group], session)
                for row, i in enumerate(group):
                    n = int(mask[row].sum())
                    offsets = np.asarray(encodings[i].offsets[:n], dtype=np.int64).reshape(-1, 2)
                    special = np.asarray(encodings[i].special_tokens_mask[:n], dtype=bool)
                    offsets[special] = 0
                    out[i] = (np.asarray(hidden[row, :n], dtype=np.float32), offsets)
        return out

    @staticmethod
    def _hidden(ids: Sequence[Sequence[int]], session: Any) -> tuple[np.ndarray, np.ndarray]:
        """The last hidden states of a padded batch and its attention mask."""
        width = max(len(piece) for piece in ids)
        input_ids = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, piece in enumerate(ids):
            input_ids[row, : len(piece)] = piece
            mask[row, : len(piece)] = 1
        hidden = session.run(["last_hidden_state"], {"input_ids": input_ids, "attention_mask": mask,
                                                     "token_type_ids": np.zeros_like(input_ids)})[0]
        return hidden, mask

    @staticmethod
    def _run(ids: Sequence[Sequence[int]], session: Any) -> np.ndarray:
        """Mean of the last hidden states over each text's own wordpieces (sentence-transformers' pooling)."""
        hidden, mask = Int8MiniLMEmbedder._hidden(ids, session)
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


class SharedStrings:
    """Query strings embedded by whichever thread takes each first: the caller from the front (the question
    first), the helper from the back, each string its own call (the same vectors whoever computes it). A
    helper still busy with strings started earlier (``embed_queries_soon``) takes none, and the caller never
    waits for it: it waits only for the strings the helper did take."""

    def __init__(self, ids: Sequence[Sequence[int]], session: Any, dim: int) -> None:
        self.ids, self.session = ids, session
        self.out = np.zeros((len(ids), dim), dtype=np.float32)
        self.left = list(range(len(ids)))
        self.unfinished = len(ids)
        self.failed: Optional[BaseException] = None
        self.changed = threading.Condition()

    def work(self, front: bool) -> None:
        while True:
            with self.changed:
                if not self.left or self.failed is not None:
                    return
                i = self.left.pop(0 if front else -1)
            try:
                vector = Int8MiniLMEmbedder._each([self.ids[i]], self.session)[0]
            except BaseException as error:  # handed to the caller, which would otherwise wait for this string
                with self.changed:
                    self.failed = error
                    self.changed.notify_all()
                raise
            with self.changed:
                self.out[i] = vector
                self.unfinished -= 1
                self.changed.notify_all()

    def result(self) -> np.ndarray:
        """The vectors, once every string is done (the caller's own work done first)."""
        with self.changed:
            self.changed.wait_for(lambda: self.unfinished == 0 or self.failed is not None)
            if self.failed is not None:
                raise self.failed
        return self.out


_HELPER_LOCK = threading.Lock()
_HELPERS: list[ThreadPoolExecutor] = []
# A forked child has no helper thread (only the forking thread survives a fork): it starts its own.
os.register_at_fork(after_in_child=_HELPERS.clear)


def query_helper() -> ThreadPoolExecutor | None:
    """The process's one helper thread for query embeddings, or None (embed on the calling thread): a
    question's strings are then embedded on two cores, and its own vector while its parse runs. Query
    strings are short, so one helper is enough and never piles up work. ``RAGSCOPE_QUERY_HELPER``:
    ``auto`` (default) uses it while the machine has a core to spare (1-minute load average below the
    core count; on a loaded machine the hand-off only adds a wait: 2-7 ms per graph mode at load 16 on
    2 cores, ``benchmarks/query_helper_latency.py``), ``1`` always, ``0`` never; never on one core."""
    cores = os.cpu_count() or 1
    wanted = os.environ.get("RAGSCOPE_QUERY_HELPER", "auto").strip().lower()
    if cores < 2 or wanted == "0" or (wanted != "1" and _load_average() >= cores):
        return None
    with _HELPER_LOCK:
        if not _HELPERS:
            _HELPERS.append(ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragscope-query-embed"))
        return _HELPERS[0]


def _load_average() -> float:
    """The 1-minute load average (0 where the system has none)."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


_LOAD_LOCK = threading.Lock()


def int8_embedder(batch_size: int = 16) -> Int8MiniLMEmbedder:
    """Process-wide int8 embedder per batch size (and model folder); thread-safe load."""
    with _LOAD_LOCK:
        return _cached(int(batch_size), str(model_dir()))


def int8_embedder_loaded() -> bool:
    """Has this process loaded the int8 model yet?"""
    return _cached.cache_info().currsize > 0


@lru_cache(maxsize=2)
def _cached(batch_size: int, directory: str) -> Int8MiniLMEmbedder:
    return Int8MiniLMEmbedder(batch_size=batch_size, directory=Path(directory))
