"""A compacted row's kept pieces counted from the generation's piece table (``context_dedup.piece_counts``,
``_known_units``): cl100k never joins a non-space character and the space after it into one piece, so the
row's count is the count of what is left plus the pieces' own counts, exact whatever the text."""
from __future__ import annotations

import random

from core.retrieval.context_dedup import compact_context, piece_counts
from core.retrieval.csv_cells import record_line
from core.retrieval.lightrag_context import Budgeted, entity_row, relation_row
from core.tokens import count_tokens

from tests.test_context_once import S1, S2, S3, _chunk, _entity, _random_rows, _relation


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
        table = piece_counts(_descriptions(budgeted))
        if trial % 2:  # a table that misses some pieces: those are encoded with the rest of the row
            table = {unit: count for unit, count in table.items() if rng.random() < 0.6}
        text, tokens, _ = compact_context(budgeted, count_tokens, costs, table)
        assert (text, tokens) == compact_context(budgeted, count_tokens, costs)[:2]
        assert tokens == count_tokens(text), trial


def test_the_piece_table_is_read() -> None:
    """A compacted row keeps two pieces and points to the third: the kept pieces' counts come from the table
    (a wrong entry shows through), the rest of the row is encoded."""
    budgeted = Budgeted([_entity("Harland Light", f"{S2} {S1} {S3}")], [], [_chunk("c1", S1)], {})
    table = piece_counts(_descriptions(budgeted))
    assert table[" " + S3] == count_tokens(" " + S3)
    text, tokens, pointers = compact_context(budgeted, count_tokens, None, table)
    assert pointers == 1 and "(see [1])" in text and tokens == count_tokens(text)
    wrong = {unit: count + 1000 for unit, count in table.items()}
    assert compact_context(budgeted, count_tokens, None, wrong)[1] == tokens + 2000  # the rest of S2, then S3
