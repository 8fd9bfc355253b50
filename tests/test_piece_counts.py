"""The one mechanism that counts compacted context from pieces (``core.retrieval.token_counts.PieceCounts``):
cl100k never joins a non-space character and the space after it into one piece, so a text cut only at such
points counts as the sum of its parts. Its two users: the LightRAG tables' compacted rows, cut around the
pieces they kept (``context_dedup.compacted_row_parts``, ``description_pieces``), and the tree mode's
compacted summaries, each unknown segment cut before the spaces after sentence ends (``sentence_parts``,
``summary_sentences``). Both counts equal cl100k's on any text, whatever the table holds, and the table is
read (a wrong entry shows through)."""
from __future__ import annotations

import random

from core.retrieval import token_counts
from core.retrieval.context_dedup import compact_context
from core.retrieval.csv_cells import record_line
from core.retrieval.lightrag_context import Budgeted, entity_row, relation_row
from core.retrieval.token_counts import (PieceCounts, SegmentCounts, compacted_row_parts, description_pieces, pieces,
                                         sentence_forms, sentence_parts)
from core.tokens import count_tokens, encoding

from tests.test_context_once import S1, S2, S3, _chunk, _entity, _random_rows, _relation

SUMMARY = ("Kestrel Point Lighthouse stood on the northern cape from 1871. Its last resident keeper was Ada "
           "Whitcombe; she left in 1962! Was the lamp automated then? The railway opened in 1898.  Two spaces "
           "here.\tA tab. Ünïcödé 日本語 text: “quoted.” Numbers 12345.678 end; 's contraction. Ends without stop")
WORDS = ["alpha", "Ωmega", "日本", "1234", "x", ".", "!", "?", ";", ",", "(", ")", "'s", "—", "“", "\t", " ", "  ",
         "\n", "\n\n", "café", "a.b", "U.S.", "e.g."]


def _free_cuts(parts: list[str]) -> bool:
    """Every cut between two parts is before a space that follows a non-space character."""
    return all(a and b and not a[-1].isspace() and b[0] == " " for a, b in zip(parts, parts[1:]))


# --- the mechanism itself -------------------------------------------------------------------------------

def test_the_parts_add_up_to_the_count_of_the_text() -> None:
    rng = random.Random(5)
    for _ in range(300):
        text = "".join(rng.choice(WORDS) for _ in range(rng.randint(1, 30)))
        parts = sentence_parts(text)
        assert _free_cuts(parts) and "".join(parts) == text
        table = PieceCounts.of((p for p in parts if rng.random() < 0.5), lambda p: (p,))
        known, left = table.add_up(parts)
        assert known + count_tokens(left) == count_tokens(text), repr(text)


# --- the LightRAG tables' compacted rows ----------------------------------------------------------------

def _descriptions(budgeted: Budgeted) -> list[str]:
    return [r.description for r in [*budgeted.entities, *budgeted.relations]]


def test_the_count_with_the_piece_table_is_the_exact_count_of_the_text() -> None:
    rng = random.Random(91)
    for trial in range(60):
        chunks = [_chunk(f"c{i}", rng.choice([S1, S2, S3, f"{S1} {S2}"])) for i in range(3)]
        entities, relations = _random_rows(rng, rng.randint(0, 30), rng.randint(0, 30), chunks)
        if trial % 3 == 0:  # quotes, possessives, digits and dashes at the edges of pieces and words
            entities.append(_entity('"Salt" Quay', "'s 12 quays were built; \"the\" 1862 works — done. 9 x."))
            relations.append(_relation("A", "B", "— a dash first. 1862. 'quoted' words; x"))
        costs = {}
        for record, row in [(e, entity_row) for e in entities] + [(r, relation_row) for r in relations]:
            if rng.random() < 0.5:
                costs[row(record, 1)] = count_tokens(record_line(row(record, 1)) + "\n")
        budgeted = Budgeted(entities, relations, chunks[: rng.randint(0, 3)], {})
        table = description_pieces(_descriptions(budgeted))
        if trial % 2:  # a table that misses some pieces: those are encoded with the rest of the row
            table = PieceCounts({unit: count for unit, count in table.table.items() if rng.random() < 0.6})
        text, tokens, _ = compact_context(budgeted, count_tokens, costs, table)
        assert (text, tokens) == compact_context(budgeted, count_tokens, costs)[:2]
        assert tokens == count_tokens(text), trial


def test_a_compacted_row_is_cut_only_where_cl100k_cannot_join() -> None:
    line = record_line(("1", "Harland Light", "place", f"{S2} {S3} (see [1])"))
    parts = compacted_row_parts(line, pieces(f"{S2} {S3}"))
    assert parts is not None and "".join(parts) == line and _free_cuts(parts) and len(parts) == 4
    assert compacted_row_parts(line, ["not in the line at all."]) is None


def test_the_piece_table_is_read() -> None:
    """A compacted row keeps two pieces and points to the third: the kept pieces' counts come from the table
    (a wrong entry shows through), the rest of the row is encoded."""
    budgeted = Budgeted([_entity("Harland Light", f"{S2} {S1} {S3}")], [], [_chunk("c1", S1)], {})
    table = description_pieces(_descriptions(budgeted))
    assert table.table[" " + S3] == count_tokens(" " + S3)
    text, tokens, pointers = compact_context(budgeted, count_tokens, None, table)
    assert pointers == 1 and "(see [1])" in text and tokens == count_tokens(text)
    wrong = PieceCounts({unit: count + 1000 for unit, count in table.table.items()})
    assert compact_context(budgeted, count_tokens, None, wrong)[1] == tokens + 2000  # the rest of S2, then S3


# --- the tree mode's compacted summaries ----------------------------------------------------------------

def counter(sentences_from: str = SUMMARY) -> SegmentCounts:
    return SegmentCounts({}, PieceCounts.of(pieces(sentences_from), sentence_forms), sentence_parts)


def compacted(text: str, keep: list[bool], pointer: str) -> str:
    kept = [p for p, k in zip(pieces(text), keep) if k]
    return f"{' '.join(kept)} (see {pointer})" if kept else f"(see {pointer})"


def test_compacted_summaries_count_as_cl100k_does() -> None:
    rng = random.Random(3)
    count = counter().count
    n = len(pieces(SUMMARY))
    for _ in range(300):
        body = compacted(SUMMARY, [rng.random() < 0.6 for _ in range(n)], rng.choice(["[Doc, chunk 2]", "[3]", "x"]))
        text = "[summary of the corpus, level 2, 7 chunks]\n" + body + rng.choice(["", "\n", "\n\n[Doc, chunk 1]\nA b."])
        assert count(text) == count_tokens(text), text


def test_any_text_counts_as_cl100k_does() -> None:
    rng = random.Random(11)
    sentences = " ".join("".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) + rng.choice(".!?;")
                         for _ in range(40))
    count = counter(sentences).count
    parts = pieces(sentences)
    for _ in range(500):
        text = "".join(rng.choice([rng.choice(WORDS), " " + rng.choice(parts), rng.choice(parts)])
                       for _ in range(rng.randint(0, 25)))
        assert count(text) == count_tokens(text), repr(text)


def test_known_sentences_are_not_encoded_again(monkeypatch) -> None:
    count = counter().count
    body = compacted(SUMMARY, [True] * len(pieces(SUMMARY)), "[Doc, chunk 2]")
    encoded: list[str] = []
    real = encoding()

    class Spy:
        def encode_ordinary(self, text: str) -> list[int]:
            encoded.append(text)
            return real.encode_ordinary(text)
    monkeypatch.setattr(token_counts, "encoding", lambda: Spy())
    assert count(body + "\n\n") == count_tokens(body + "\n\n")
    last = pieces(SUMMARY)[-1]  # no sentence end before the pointer: encoded with it
    assert encoded == [f" {last} (see [Doc, chunk 2])\n\n"]  # every other sentence came from the table


def test_the_tree_mode_counts_its_context_exactly(sample_ws, monkeypatch) -> None:
    from core.retrieval.registry import query_context, retrieve

    questions = ["Who was the last resident keeper of Kestrel Point Lighthouse?",
                 "In what year did the Velmora Coastal Railway open to passenger traffic?",
                 "What connects the lighthouse and the railway?"]
    cut: list[object] = []
    real = SegmentCounts.count

    def spy(self: SegmentCounts, text: str) -> int:
        cut.append(self.cut)
        return real(self, text)
    monkeypatch.setattr(SegmentCounts, "count", spy)
    results = [retrieve(query_context(sample_ws, q), "tree") for q in questions]
    assert sentence_parts in cut  # the tree mode counts with the summary sentences' table
    for result in results:
        assert result.context_tokens == count_tokens(result.context_text)


# --- the fused auto candidates' rows --------------------------------------------------------------------

def test_a_fused_context_counts_its_rows_from_the_same_tables(sample_ws, monkeypatch) -> None:
    """A fused candidate's compacted rows are counted as the LightRAG modes count theirs: from the generation's
    row costs and piece table, and exactly."""
    from core.retrieval.registry import query_context
    from core.routing import fusion

    seen: list[tuple] = []
    real = fusion.render_compact_within

    def spy(*args):
        seen.append(args[3:])
        return real(*args)
    monkeypatch.setattr(fusion, "render_compact_within", spy)
    counts = token_counts.context_counter(sample_ws)
    for question in ["Who founded the Tidewater Shipping Cooperative in Port Sallow?",
                     "What connects the lighthouse and the railway?"]:
        result = fusion.fused_result(query_context(sample_ws, question))
        assert result.context_tokens == count_tokens(result.context_text)
    assert seen and all(rest == (sample_ws.views.derived(token_counts.graph_row_costs), counts.pieces) for rest in seen)
