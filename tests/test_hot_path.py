"""Per-question work that issue 36's profile found wasted: the page offsets every retrieval result reads
for its citations come in one query for all the documents, not one query a document (it was 40 % of the
graph modes' CPU time on dev_musique_full, where no document has pages)."""
from __future__ import annotations

import pytest


@pytest.fixture()
def store(tmp_path):
    from conftest import HashEmbedder

    from core.workspace import Workspace

    ws = Workspace(tmp_path / "ws", embedder=HashEmbedder())
    yield ws.records
    ws.close()


def test_page_starts_of_many_documents_in_one_query(store, monkeypatch):
    from core.storage import store as store_module

    pages = {f"doc{i:04d}": [0, 100 + i, 250 + 2 * i] for i in range(0, 1000, 3)}
    with store.unit_of_work():
        for doc_id, starts in reversed(list(pages.items())):  # written out of order
            store.set_page_starts(doc_id, starts)
    asked = [f"doc{i:04d}" for i in range(1000)]  # two in three have no pages
    queries = []
    real_rows = store.db.rows

    def counting(statement, params=None):
        queries.append(statement)
        return real_rows(statement, params)

    monkeypatch.setattr(store.db, "rows", counting)
    found = store.page_starts(asked)
    assert found == pages  # each document's offsets, in page order; documents without pages absent
    assert len(queries) == -(-len(asked) // store_module.BATCH)  # one query per BATCH documents
    assert store.page_starts([]) == {}


def test_text_once_finds_the_first_source_holding_a_piece():
    """The joined-text search gives the label the source-by-source scan gives (randomised sources)."""
    import random

    from core.retrieval.context_dedup import MIN_PIECE_CHARS, TextOnce, normalise
    from core.types import ChunkHit

    rng = random.Random(36)
    words = "harbour keeper lamp tide flood railway station bridge mayor festival north quay".split()
    for _ in range(200):
        texts = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 40))) for _ in range(rng.randint(0, 8))]
        chunks = [ChunkHit.make(f"c{i}", 0.5, "") for i in range(len(texts))]
        for chunk, text in zip(chunks, texts):
            chunk.text = text.replace(" ", "\n", 3)  # line breaks inside a chunk are normalised away
        once = TextOnce(chunks)
        sources = [normalise(t) for t in texts]
        for _ in range(20):
            if sources and rng.random() < 0.7:  # a span of a source, possibly across two of them
                joined = " ".join(sources)
                start = rng.randrange(max(1, len(joined)))
                piece = normalise(joined[start:start + rng.randint(MIN_PIECE_CHARS, 90)])
            else:
                piece = " ".join(rng.choice(words) for _ in range(5))
            expected = next((f"[{n}]" for n, text in enumerate(sources, 1) if piece in text), None) \
                if len(piece) >= MIN_PIECE_CHARS else None
            assert once.where(piece) == expected, (piece, sources)


LIGHTRAG_MODES = ("local", "global", "hybrid", "mix")


def _contexts(ws, settings):
    import json

    from core.retrieval.registry import query_context, retrieve
    from pathlib import Path

    questions = [json.loads(line)["question"] for line in
                 (Path(__file__).resolve().parents[1] / "data" / "sample_questions.jsonl").read_text().splitlines()
                 if line.strip()][:6]
    out = {}
    for question in questions:
        ctx = query_context(ws, question, settings=settings)
        for mode in LIGHTRAG_MODES:
            result = retrieve(ctx, mode)
            out[(question, mode)] = (result.context_text, result.context_tokens, result.evidence_chunk_ids)
    return out


@pytest.mark.parametrize("totals", [(30000,), (900, 1050, 1200, 1350)], ids=["far", "tight"])
def test_context_rendered_once_is_the_context_checked_in_full(sample_ws, monkeypatch, totals):
    """Skipping the full rendering when the budgets are far under the total changes no context, no
    token count and no evidence; with tight totals (records dropped) the full check still runs for the
    contexts that come near them (which ones do depends on the index, hence several totals)."""
    import core.retrieval.lightrag_retrieval as lr

    checks = {"skipped": 0, "full": 0}
    real_within = lr.surely_within

    def counting_within(fit, total):
        sure = real_within(fit, total)
        checks["skipped" if sure else "full"] += 1
        return sure

    compared = 0
    for max_total in totals:
        settings = sample_ws.settings.model_copy(update={"max_total_tokens": max_total})
        monkeypatch.setattr(lr, "surely_within", counting_within)
        once = _contexts(sample_ws, settings)
        monkeypatch.setattr(lr, "surely_within", lambda fit, total: False)
        full = _contexts(sample_ws, settings)
        assert once == full
        compared += len(once)
    if totals == (30000,):
        assert checks["skipped"] == compared and checks["full"] == 0
    else:
        assert checks["full"] > 0  # near the total the exact check runs


def test_budget_sum_is_the_exact_count_of_the_full_context(sample_ws, monkeypatch):
    """The slack ``surely_within`` allows covers what the section edges may cost (measured: nothing)."""
    import core.retrieval.lightrag_retrieval as lr

    gaps = []
    real_render = lr.render_within

    def spy(fit, total, counter):
        text, tokens, dropped = real_render(fit, total, counter=counter)
        if not dropped:
            gaps.append(tokens - sum(fit.tokens.values()))
        return text, tokens, dropped

    monkeypatch.setattr(lr, "surely_within", lambda fit, total: False)
    monkeypatch.setattr(lr, "render_within", spy)
    _contexts(sample_ws, sample_ws.settings)
    assert gaps and max(abs(g) for g in gaps) <= lr.EDGE_TOKENS // 4


def _regex_spans(chunk_text, sentences):
    """The compiled-pattern search ``sentence_spans`` replaced (issue 36's profile: a pattern compiled per
    sentence was most of a Compare's answer time), kept here as the reference."""
    import re

    from core.sentence_vectors import _MAX_WORDS, _WORD

    spans, cursor = [], 0
    for sentence in sentences:
        words = _WORD.findall(str(sentence))
        if not words:
            spans.append(None)
            continue
        pattern = re.compile(r"[\W_]*".join(re.escape(w) for w in words[:_MAX_WORDS]), re.UNICODE)
        found = pattern.search(chunk_text, cursor) or pattern.search(chunk_text)
        if found is None:
            spans.append(None)
            continue
        end = found.end()
        if len(words) > _MAX_WORDS:
            tail = None
            for tail in re.compile(re.escape(words[-1]), re.UNICODE).finditer(
                    chunk_text, end, min(len(chunk_text), found.start() + 2 * len(sentence) + 16)):
                pass
            end = tail.end() if tail is not None else end
        spans.append((found.start(), end))
        cursor = end
    return spans


def test_sentence_spans_are_those_of_the_compiled_pattern_search():
    """Randomised chunks (repeated and overlapping words, words glued together, underscores, accented
    letters, superscript digits, markup) and sentences drawn from them, edited or not: same spans."""
    import random

    from core.sentence_vectors import _MAX_WORDS, sentence_spans

    rng = random.Random(3636)
    vocabulary = ["aa", "a", "aaa", "the", "there", "re", "Café", "é", "x²", "²", "Ⅳ", "ab_c", "12", "1", "n°"]
    glue = [" ", "  ", "\n", ", ", "_", "", "**", " — ", "-", "'", "([", "\t"]
    checked = 0
    for _ in range(400):
        tokens = [rng.choice(vocabulary) for _ in range(rng.randint(0, 90))]
        text = "".join(t + rng.choice(glue) for t in tokens)
        sentences = []
        for _ in range(rng.randint(0, 6)):
            if tokens and rng.random() < 0.8:
                a = rng.randrange(len(tokens))
                b = min(len(tokens), a + rng.randint(1, _MAX_WORDS + 20))
                picked = tokens[a:b]
                if rng.random() < 0.3:
                    picked = picked + [rng.choice(vocabulary)]  # an edited sentence: may not be found
                sentences.append(" ".join(picked))
            else:
                sentences.append(rng.choice(["", "...", "zz top", "the"]))
        assert sentence_spans(text, sentences) == _regex_spans(text, sentences), (text, sentences)
        checked += len(sentences)
    assert checked > 800
    long = " ".join(f"w{i}" for i in range(_MAX_WORDS + 5))
    for text in (long + " aaa", long + " aa aaaaa", long + "\n\naa, aa"):  # the last word found overlapping itself
        for sentence in (long + " aa", long + " a"):
            assert sentence_spans(text, [sentence]) == _regex_spans(text, [sentence]), (text, sentence)
