"""Evidence metrics: recall@k and all@k of gold documents over a ranked document list,
answer-in-context, answer-in-answer, the bolded short answer judged against the gold answer
(``wrong_bold`` / ``right_bold``), and bootstrap confidence intervals.

Gold answers that are sentences or long phrases (every form longer than ``SHORT_ANSWER_WORDS`` words, as in
long-document QA sets) are never found verbatim in a context: for them answer-in-context and
answer-in-answer count a match when at least ``KEY_TERM_RECALL`` of the gold answer's content words occur
(key-term recall), and the bold columns leave them out (a bold is a short answer of at most six words).
``sentence_gold`` says which questions are judged so; the evaluation report says how many."""
from __future__ import annotations

import re
import string
from typing import Iterable, Optional, Sequence

import numpy as np
from scipy import stats

_ARTICLES = re.compile(r"\b(a|an|the)\b")
SHORT_ANSWER_WORDS = 6  # a longer gold answer (in every form) is sentence-form
KEY_TERM_RECALL = 0.8  # share of a sentence-form gold answer's content words that must occur


def normalize_answer(text: str) -> str:
    """Lowercase, drop punctuation and articles, collapse whitespace (SQuAD-style)."""
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def ranked_documents(evidence_chunk_ids: Iterable[str], chunk_doc: dict[str, str]) -> list[str]:
    """Chunks in rank order → their documents, deduplicated in rank order."""
    docs = (chunk_doc.get(c) for c in evidence_chunk_ids)
    return list(dict.fromkeys(d for d in docs if d))


def recall_at_k(ranked_docs: Sequence[str], gold: Sequence[str], k: int) -> Optional[float]:
    """|gold ∩ top-k| / |gold| (None when there is no gold)."""
    gold_set = set(gold)
    if not gold_set:
        return None
    return len(gold_set & set(ranked_docs[:k])) / len(gold_set)


def all_at_k(ranked_docs: Sequence[str], gold: Sequence[str], k: int) -> Optional[float]:
    gold_set = set(gold)
    if not gold_set:
        return None
    return 1.0 if gold_set <= set(ranked_docs[:k]) else 0.0


def sentence_gold(answer: Optional[str], aliases: Sequence[str] = ()) -> bool:
    """Is the gold answer a sentence or a long phrase: every form of it longer than ``SHORT_ANSWER_WORDS``?"""
    forms = [normalize_answer(a) for a in [answer, *aliases] if a and normalize_answer(a)]
    return bool(forms) and all(len(f.split()) > SHORT_ANSWER_WORDS for f in forms)


def _content_words(text: str) -> set[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return {w for w in normalize_answer(text).split() if w not in STOP_WORDS}


def key_term_recall(text: str, gold: str) -> float:
    """Share of the gold answer's content words (normalised, stop words left out) that occur in ``text``."""
    wanted = _content_words(gold)
    return len(wanted & set(normalize_answer(text).split())) / len(wanted) if wanted else 0.0


def answer_in_context(context: str, answer: Optional[str], aliases: Sequence[str] = ()) -> Optional[float]:
    """1.0 when the normalised answer or an alias occurs in the normalised context (None without answer);
    for a sentence-form gold answer, when its key-term recall reaches ``KEY_TERM_RECALL``."""
    candidates = [a for a in [answer, *aliases] if a and normalize_answer(a)]
    if not candidates:
        return None
    if sentence_gold(answer, aliases):
        return 1.0 if max(key_term_recall(context, a) for a in candidates) >= KEY_TERM_RECALL else 0.0
    haystack = f" {normalize_answer(context)} "
    return 1.0 if any(f" {normalize_answer(a)} " in haystack for a in candidates) else 0.0


def answer_in_answer(answer_text: Optional[str], answer: Optional[str], aliases: Sequence[str] = ()
                     ) -> Optional[float]:
    """``answer_in_context`` over an answer's text (None without a gold answer or without an answer)."""
    if answer_text is None:
        return None
    return answer_in_context(answer_text, answer, aliases)


def first_line(text: Optional[str]) -> Optional[str]:
    """The first line of an answer (its single best sentence), None stays None."""
    return None if text is None else text.split("\n", 1)[0]


_BOLD = re.compile(r"\*\*(.+?)\*\*")


def bold_spans(text: Optional[str]) -> list[str]:
    """The spans an answer's first line bolds (its short answer), in order."""
    return [m.group(1) for m in _BOLD.finditer(first_line(text) or "")]


def _is_gold(span: str, answer: Optional[str], aliases: Sequence[str]) -> bool:
    """A bolded span names the gold answer: either contains the other, whole words (normalised)."""
    said = f" {normalize_answer(span)} "
    for gold in [answer, *aliases]:
        wanted = normalize_answer(gold or "")
        if wanted and said.strip() and (f" {wanted} " in said or said in f" {wanted} "):
            return True
    return False


def wrong_bold(answer_text: Optional[str], answer: Optional[str], aliases: Sequence[str] = ()
               ) -> Optional[float]:
    """1.0 when the first line bolds a short answer and no bolded span is the gold answer, else 0.0
    (no bold at all is 0.0: no claim made). None without a gold answer or without an answer, and for a
    sentence-form gold answer (a bold is a short answer: not measurable)."""
    if answer_text is None or not normalize_answer(answer or "") or sentence_gold(answer, aliases):
        return None
    spans = bold_spans(answer_text)
    return 1.0 if spans and not any(_is_gold(s, answer, aliases) for s in spans) else 0.0


def right_bold(answer_text: Optional[str], answer: Optional[str], aliases: Sequence[str] = ()
               ) -> Optional[float]:
    """1.0 when a span the first line bolds is the gold answer (None as for ``wrong_bold``)."""
    if answer_text is None or not normalize_answer(answer or "") or sentence_gold(answer, aliases):
        return None
    return 1.0 if any(_is_gold(s, answer, aliases) for s in bold_spans(answer_text)) else 0.0


def mean(values: Iterable[Optional[float]]) -> Optional[float]:
    kept = [v for v in values if v is not None]
    return float(np.mean(kept)) if kept else None


def bootstrap_ci(values: Sequence[Optional[float]], resamples: int = 1000, seed: int = 0,
                 level: float = 0.95) -> tuple[Optional[float], Optional[float]]:
    """Percentile bootstrap interval of the mean (``scipy.stats.bootstrap``, deterministic for a seed).
    A constant sample (every question scored the same, or a single one) has the point interval
    (value, value): there is nothing to resample."""
    kept = np.array([v for v in values if v is not None], dtype=float)
    if len(kept) == 0:
        return None, None
    if np.all(kept == kept[0]):
        return float(kept[0]), float(kept[0])
    result = stats.bootstrap((kept,), np.mean, n_resamples=resamples, confidence_level=level,
                             method="percentile", vectorized=True, rng=np.random.default_rng(seed))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def span_recall_at_k(ranked_chunk_texts: Sequence[str], spans: Sequence[str], k: int) -> Optional[float]:
    """Share of the quoted gold spans found (whitespace-normalised) in the top-k evidence chunks; a
    chunk-level measure that survives re-chunking (None without spans)."""
    if not spans:
        return None
    top = [" ".join(text.split()) for text in ranked_chunk_texts[:k]]
    return sum(1 for span in spans if any(span in text for text in top)) / len(spans)
