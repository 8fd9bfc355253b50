"""Sentence vectors from the chunk-window pass: no text is embedded twice.

An embedder that can give its token outputs (``token_states``: the last hidden state of every wordpiece
and the wordpiece's character span in the text; the local MiniLM and its int8 build can, a remote server
cannot) embeds each chunk window once. From that one forward pass come

* the window vector, exactly as the embedder pools it: the mean of all the window's token outputs
  (special tokens included, as sentence-transformers' mean pooling), L2-normalised;
* one vector per stored sentence of the chunk: the mean of the token outputs whose characters fall in
  the sentence's span of the chunk text (over every window the sentence reaches), L2-normalised.

Pooling adds no wordpiece: the sentence vectors cost one mean per sentence over outputs already computed.
A sentence is located in its chunk by ``sentence_spans`` (its words in order, whatever whitespace or
markup lies between them; the parse stores sentences with markup removed), so the answers read the same
span for the same stored sentence (``core.answers.sentences``). Vectors are stored as float16 (768 bytes
for a 384-d model) keyed by chunk id and character span (``RecordStore.write_sentence_vectors``).
"""
from __future__ import annotations

import contextvars
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Optional, Sequence

import numpy as np

from core.embeddings import chunk_windows

Span = tuple[int, int]
SentenceVectors = dict[Span, np.ndarray]  # (start, end) in the chunk text -> unit vector
STORED_DTYPE = np.float16
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_MAX_WORDS = 60  # a sentence is located by its first words (a long table row needs no more)


def _words_at(text: str, start: int, words: Sequence[str]) -> int:
    """End of ``words`` read in order from ``start`` (the first one there, each next one after any run of
    characters that are not letters or digits), or -1: the match of ``w1[\\W_]*w2[\\W_]*…`` at ``start``
    without compiling it (a word begins with a letter or digit, so the run before it is skipped whole)."""
    if not text.startswith(words[0], start):
        return -1
    at, size = start + len(words[0]), len(text)
    for word in words[1:]:
        while at < size and not text[at].isalnum():
            at += 1
        if not text.startswith(word, at):
            return -1
        at += len(word)
    return at


def _first_match(text: str, words: Sequence[str], start: int) -> Optional[Span]:
    """The leftmost span from ``start`` where ``words`` are read in order (see ``_words_at``)."""
    at = text.find(words[0], start)
    while at >= 0:
        end = _words_at(text, at, words)
        if end >= 0:
            return at, end
        at = text.find(words[0], at + 1)
    return None


def _last_occurrence(text: str, word: str, start: int, stop: int) -> int:
    """End of the last of the non-overlapping occurrences of ``word`` in ``text[start:stop]`` read from the left, or -1."""
    end, at = -1, text.find(word, start, stop)
    while at >= 0:
        end = at + len(word)
        at = text.find(word, end, stop)
    return end


def sentence_spans(chunk_text: str, sentences: Sequence[str]) -> list[Optional[Span]]:
    """Character span of each sentence in ``chunk_text`` (None when it cannot be found), searched in
    order from the end of the previous one: its words in sequence, anything but a word between them.
    Plain string searches (a compiled pattern per sentence cost most of a Compare's answer time)."""
    spans: list[Optional[Span]] = []
    cursor = 0
    for sentence in sentences:
        words = _WORD.findall(str(sentence))
        if not words:
            spans.append(None)
            continue
        head = words[:_MAX_WORDS]
        found = _first_match(chunk_text, head, cursor) or _first_match(chunk_text, head, 0)
        if found is None:
            spans.append(None)
            continue
        start, end = found
        if len(words) > _MAX_WORDS:  # extend to the sentence's last word
            tail = _last_occurrence(chunk_text, words[-1], end, min(len(chunk_text), start + 2 * len(sentence) + 16))
            end = tail if tail >= 0 else end
        spans.append((start, end))
        cursor = end
    return spans


def window_offsets(text: str, windows: Sequence[str]) -> list[int]:
    """Where each window starts in its chunk text (windows are consecutive substrings of it)."""
    offsets: list[int] = []
    cursor = 0
    for window in windows:
        at = text.find(window, cursor)
        if at < 0:
            at = text.find(window)
        offsets.append(max(at, 0))
        cursor = max(at, 0) + len(window) if at >= 0 else cursor
    return offsets


def can_pool(embedder: Any) -> bool:
    """Does this embedder give token outputs (so sentence vectors come from the window pass)?"""
    return callable(getattr(embedder, "token_states", None))


def _normalised(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return (vector / norm if norm > 0 else vector).astype(np.float32)


def pool_window(states: np.ndarray) -> np.ndarray:
    """A window's vector from its token outputs: the mean over every wordpiece, normalised."""
    return _normalised(np.asarray(states, dtype=np.float64).mean(axis=0))


def pool_sentences(parts: Sequence[tuple[np.ndarray, np.ndarray, int]], spans: Sequence[Optional[Span]]
                   ) -> SentenceVectors:
    """Per located sentence span, the normalised mean of the token outputs inside it. ``parts``: per
    window, (token outputs (n, dim), wordpiece character spans (n, 2) in the window, window offset in
    the chunk). Special tokens (empty spans) belong to no sentence; a span no token reaches (cut off by
    the model's wordpiece limit) gets no vector."""
    out: SentenceVectors = {}
    for span in spans:
        if span is None or span in out:
            continue
        start, end = span
        total: Optional[np.ndarray] = None
        count = 0
        for states, offsets, shift in parts:
            begins, ends = offsets[:, 0] + shift, offsets[:, 1] + shift
            inside = (offsets[:, 1] > offsets[:, 0]) & (begins >= start) & (ends <= end)
            n = int(inside.sum())
            if n:
                piece = np.asarray(states[inside], dtype=np.float64).sum(axis=0)
                total = piece if total is None else total + piece
                count += n
        if total is not None and count:
            out[span] = _normalised(total / count)
    return out


WindowStates = tuple[list[list[str]], list[tuple[np.ndarray, np.ndarray]]]  # (windows per text, token outputs per window)


def window_states(embedder: Any, texts: Sequence[str], windows: bool = True,
                  stop: Optional[threading.Event] = None) -> WindowStates:
    """Per chunk text its windows (``windows`` False: the whole text, cut at the model's limit), and per
    window its token outputs from one ``token_states`` pass (slices of 512 windows; ``stop`` or the run's
    Cancel is checked before each)."""
    from core.types import Cancelled, checkpoint

    pieces = [chunk_windows(t) if windows else [t] for t in texts]
    flat = [w for ws in pieces for w in ws]
    states: list[tuple[np.ndarray, np.ndarray]] = []
    for start in range(0, len(flat), 512):
        checkpoint("embedding")
        if stop is not None and stop.is_set():
            raise Cancelled("the chunk windows' pass was stopped")
        states.extend(embedder.token_states(flat[start:start + 512]))
    return pieces, states


def pool_windows_and_sentences(embedder: Any, texts: Sequence[str], computed: WindowStates,
                               sentences: Sequence[Sequence[str]]) -> tuple[list[np.ndarray], list[SentenceVectors]]:
    """Per chunk text, its window vectors ((n, dim), as ``core.embeddings.embed_chunk_windows``) and its
    sentence vectors by span, pooled from ``window_states``' token outputs."""
    pieces, states = computed
    per_chunk: list[np.ndarray] = []
    per_sentence: list[SentenceVectors] = []
    position = 0
    for text, ws, chunk_sentences in zip(texts, pieces, sentences):
        mine = states[position:position + len(ws)]
        position += len(ws)
        dim = int(getattr(embedder, "dim", 0)) or (mine[0][0].shape[1] if mine else 0)
        per_chunk.append(np.stack([pool_window(s) for s, _ in mine]) if mine else np.zeros((0, dim), np.float32))
        offsets = window_offsets(text, ws)
        parts = [(s, o, shift) for (s, o), shift in zip(mine, offsets)]
        per_sentence.append(pool_sentences(parts, sentence_spans(text, chunk_sentences)))
    return per_chunk, per_sentence


def embed_windows_and_sentences(embedder: Any, texts: Sequence[str], sentences: Sequence[Sequence[str]],
                                windows: bool = True) -> tuple[list[np.ndarray], list[SentenceVectors]]:
    """Per chunk text, its window vectors and its sentence vectors by span, from one ``token_states`` pass
    over the windows (``window_states``, then ``pool_windows_and_sentences``)."""
    return pool_windows_and_sentences(embedder, texts, window_states(embedder, texts, windows), sentences)


class WindowStatesAhead:
    """``window_states`` started on a worker thread, so the chunk windows' pass needs no parse: while
    spaCy parses a batch on one core, its windows embed on the other (the same calls, so the same
    outputs). ``result()`` waits for them; ``cancel()`` stops the pass before its next slice. The worker
    runs in a copy of the caller's context, so the run's ``cancel_scope`` reaches it."""

    def __init__(self, embedder: Any, texts: Sequence[str], windows: bool = True) -> None:
        self._stop = threading.Event()
        context = contextvars.copy_context()
        pool = ThreadPoolExecutor(1, thread_name_prefix="ragscope-window-states")  # one thread per batch
        self._future = pool.submit(context.run, window_states, embedder, list(texts), windows, self._stop)
        pool.shutdown(wait=False)  # the thread ends when its pass does

    def result(self) -> WindowStates:
        return self._future.result()

    def cancel(self) -> None:
        self._stop.set()
        self._future.cancel()


def encode_vector(vector: np.ndarray) -> bytes:
    """A unit vector as stored (float16 bytes)."""
    return np.asarray(vector, dtype=STORED_DTYPE).tobytes()


def decode_vector(data: bytes) -> np.ndarray:
    """A stored vector back as float32."""
    return np.frombuffer(data, dtype=STORED_DTYPE).astype(np.float32)


def stored_rows(chunk_ids: Sequence[str], vectors: Sequence[SentenceVectors]) -> list[tuple[str, int, int, bytes]]:
    """(chunk id, start, end, stored bytes) rows for ``RecordStore.write_sentence_vectors``."""
    return [(chunk_id, span[0], span[1], encode_vector(vector))
            for chunk_id, by_span in zip(chunk_ids, vectors) for span, vector in sorted(by_span.items())]
