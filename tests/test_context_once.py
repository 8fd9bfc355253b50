"""Each piece of text once in a mode's context, and no context larger than the corpus (issue 32, item 4).

The unit tests pin the compaction of description rows; the sample-corpus tests fail when the modes
render the full rows again (every LightRAG mode then built 23-27k tokens from a 12.5k-token corpus)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.retrieval.context_dedup import (MIN_PIECE_CHARS, compact_rows, normalise, pieces, render_compact,
                                          render_compact_within)
from core.retrieval.lightrag_context import Budgeted, render_context
from core.tokens import count_tokens
from core.types import ChunkHit, EntityHit, RelationHit

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_QUESTIONS = ROOT / "data" / "sample_questions.jsonl"

S1 = "The lighthouse was built by the Coastal Lights Board in 1862."
S2 = "Ruth Harland kept the light for twenty-six years."
S3 = "The keepers' cottages are now let as holiday accommodation."


def _chunk(cid: str, text: str) -> ChunkHit:
    hit = ChunkHit.make(cid, 1.0, "test")
    hit.text, hit.doc_name, hit.order = text, "doc.md", 0
    return hit


def _entity(name: str, description: str) -> EntityHit:
    return EntityHit.make(name.lower(), {"description": description, "type": "ORG"}, 1.0, "test", name=name)


def _relation(a: str, b: str, description: str) -> RelationHit:
    return RelationHit.make(a.lower(), b.lower(), (a, b), {"description": description, "keywords": ["k"]}, 1.0,
                            "test", degree=2)


def test_a_sentence_of_a_source_becomes_a_pointer_and_the_records_keep_theirs():
    chunk = _chunk("c1", f"# Lighthouse\n\n{S1}\nIt stands on\na cliff. {S2}")
    entity = _entity("Kestrel Point", f"{S1} {S3}")
    relation = _relation("Kestrel Point", "Ruth Harland", S2)
    out_e, out_r, hits = compact_rows([entity], [relation], [chunk])
    assert out_e[0].description == f"{S3} (see [1])"
    assert out_r[0].description == "(see [1])"
    assert hits == 2
    assert entity.description == f"{S1} {S3}" and relation.description == S2  # what Inspect shows is untouched


def test_a_sentence_already_in_an_earlier_row_points_to_that_row():
    first, second = _entity("A", f"{S3} {S1}"), _entity("B", S3)
    relation = _relation("A", "B", f"{S1} {S2}")
    out_e, out_r, _ = compact_rows([first, second], [relation], [])
    assert out_e[0].description == f"{S3} {S1}"
    assert out_e[1].description == "(see entity 1)"
    assert out_r[0].description == f"{S2} (see entity 1)"


def test_short_pieces_stay_and_the_whitespace_of_chunks_does_not_hide_a_copy():
    assert pieces("Born in St. Ives.  Died   in 1901; buried there.") == ["Born in St.", "Ives.", "Died in 1901;",
                                                                        "buried there."]
    short = "Ltd."
    assert len(short) < MIN_PIECE_CHARS
    out_e, _, hits = compact_rows([_entity("X", short)], [], [_chunk("c", "Acme Ltd. was founded.")])
    assert out_e[0].description == short and hits == 0
    assert normalise("a\n\n b\tc") == "a b c"


def test_the_cap_drops_the_last_chunks_first_like_the_budgets():
    chunks = [_chunk("c1", S1), _chunk("c2", S2), _chunk("c3", S3)]
    entities = [_entity(f"E{i}", f"Entity number {i} is described by a sentence of its own here.") for i in range(6)]
    relations = [_relation(f"E{i}", f"E{i + 1}", f"Relation {i} has a long description sentence too.")
                 for i in range(5)]
    full = render_context(entities, relations, chunks)
    budgeted = Budgeted(list(entities), list(relations), list(chunks), {})
    cap = count_tokens(render_compact(entities, relations, chunks[:1]))
    text, tokens, done = render_compact_within(budgeted, cap, count_tokens)
    assert tokens <= cap < count_tokens(full)
    assert [c.chunk_id for c in budgeted.chunks] == ["c1"] and budgeted.relations == relations
    assert done["dropped"] == 2 and S1 in text and S2 not in text
    # a cap below the rows themselves then takes relations, then entities, but never the last chunk,
    # relation or entity: a corpus smaller than the tables' structure must not leave a mode no evidence
    budgeted = Budgeted(list(entities), list(relations), list(chunks), {})
    cap = count_tokens(render_context(entities, relations[:1], []))
    render_compact_within(budgeted, cap, count_tokens)
    assert [c.chunk_id for c in budgeted.chunks] == ["c1"] and len(budgeted.relations) == 1
    assert 1 <= len(budgeted.entities) <= len(entities)
    budgeted = Budgeted(list(entities), list(relations), list(chunks), {})
    text, tokens, done = render_compact_within(budgeted, 0, count_tokens)
    assert (len(budgeted.chunks), len(budgeted.relations), len(budgeted.entities)) == (1, 1, 1)
    assert S1 in text and tokens > 0 and done["dropped"] == 2 + 4 + 5


# --- the sample corpus, every mode ---------------------------------------------------------------

def _sample_questions() -> list[str]:
    return [json.loads(line)["question"] for line in SAMPLE_QUESTIONS.read_text().splitlines() if line.strip()]


def _sources_part(context: str) -> tuple[str, str]:
    """(everything before the Sources section, the Sources section)."""
    head, _, sources = context.partition("-----Sources-----")
    return head, sources


@pytest.mark.slow
def test_no_mode_builds_a_context_larger_than_the_sample_corpus_or_repeats_a_source_sentence(sample_ws):
    from core.retrieval.registry import modes, query_context, retrieve

    corpus = sample_ws.records.total_tokens()
    assert corpus > 5000
    largest: dict[str, int] = {}
    for question in _sample_questions()[:8]:
        ctx = query_context(sample_ws, question)
        for mode in modes():
            result = retrieve(ctx, mode)
            assert result.context_tokens <= corpus, (mode, question, result.context_tokens, corpus)
            assert result.context_tokens == count_tokens(result.context_text)
            largest[mode] = max(largest.get(mode, 0), result.context_tokens)
            if mode in ("local", "global", "hybrid", "mix", "path") and "-----Sources-----" in result.context_text:
                head, sources = _sources_part(result.context_text)
                flat_sources, flat_head = normalise(sources), normalise(head)
                repeated = [p for c in result.chunks for p in pieces(c.text)
                            if len(p) >= 40 and p in flat_sources and p in flat_head]
                # a sentence glued to a table cell by the extractor is not one piece: at most two slip
                # through (without compacting, 19-71 per LightRAG context on these questions)
                assert len(repeated) <= 2, (mode, question, len(repeated), repeated[:2])
    # the LightRAG modes quote their chunks' sentences in their tables; each is shown once now
    assert all(largest[m] <= corpus for m in ("local", "global", "hybrid", "mix")), largest


@pytest.mark.slow
def test_the_selection_is_the_one_before_compacting(sample_ws):
    """Compacting changes what is rendered, not what is retrieved: the evidence and the records are
    those the full-row budgets chose (nothing is dropped for the cap on these questions' first hits)."""
    from core.retrieval.registry import query_context, retrieve

    ctx = query_context(sample_ws, _sample_questions()[0])
    result = retrieve(ctx, "local")
    full = render_context(result.entities, result.relations, result.chunks)
    assert result.context_tokens < count_tokens(full)
    assert [c.chunk_id for c in result.chunks] == result.evidence_chunk_ids[:len(result.chunks)]
    pointers = result.events("compacted")
    assert pointers and pointers[0].data["pointers"] > 0


# --- the count taken row by row (issue 36) --------------------------------------------------------

def _random_rows(rng, n_entities: int, n_relations: int, chunks):
    words = ["the", "Kestrel", "light,", "was", "built", "in", "1862.", "Ruth", '"Harland"', "kept", "it;", "for",
             "twenty-six", "years.", "\n", "née", "中文", "  ", "St.", "Ives", "(see", "[3])", "12,", "x"]
    sentences = [S1, S2, S3] + [" ".join(rng.choice(words) for _ in range(rng.randint(1, 14))) for _ in range(20)]

    def description() -> str:
        return " ".join(rng.choice(sentences) for _ in range(rng.randint(0, 3)))

    entities = [_entity(f"E{i} {rng.choice(words)}", description()) for i in range(n_entities)]
    relations = [_relation(f"E{i}", f"E{i + 1}", description()) for i in range(n_relations)]
    return entities, relations


def test_the_row_by_row_count_is_the_exact_count_of_the_whole_context():
    """``compact_context`` counts the rows one by one (and reads unchanged rows' costs from a table):
    the total must equal the exact count of the text it returns, compacted rows, row numbers of four
    digits and a stale-free table included. A stub that returns anything but the whole text's count fails."""
    import random

    from core.retrieval.context_dedup import compact_context
    from core.retrieval.lightrag_context import entity_row, relation_row
    from core.retrieval.csv_cells import record_line

    rng = random.Random(36)
    for trial in range(40):
        chunks = [_chunk(f"c{i}", rng.choice([S1, S2, f"# Head\n\n{S3}\n  indented line\nlast"])) for i in range(3)]
        many = 1005 if trial == 0 else rng.randint(0, 30)
        entities, relations = _random_rows(rng, many, rng.randint(0, 30), chunks)
        costs = {}
        for record, row in [(e, entity_row) for e in entities] + [(r, relation_row) for r in relations]:
            if rng.random() < 0.7:  # some rows known to the table, the others counted
                costs[row(record, 1)] = count_tokens(record_line(row(record, 1)) + "\n")
        budgeted = Budgeted(entities, relations, chunks[: rng.randint(0, 3)], {})
        text, tokens, pointers = compact_context(budgeted, count_tokens, costs)
        assert text == render_compact(budgeted.entities, budgeted.relations, budgeted.chunks)
        assert tokens == count_tokens(text), trial
        assert compact_context(budgeted, count_tokens)[1] == tokens  # no table: every row counted


def test_each_piece_is_searched_in_the_sources_once() -> None:
    """``TextOnce.where`` remembers where a piece is in the sources (they never change for one context):
    a sentence repeated by later rows is found once, and the answers stay those of a fresh search."""
    from core.retrieval.context_dedup import TextOnce

    class CountingText(str):
        finds: list[str] = []

        def find(self, sub, *args):  # type: ignore[override]
            CountingText.finds.append(sub)
            return str.find(self, sub, *args)

    once = TextOnce([_chunk("c1", f"# Lighthouse\n\n{S1}"), _chunk("c2", S2)])
    once._joined = CountingText(once._joined)
    assert once.compact(f"{S1} {S3}", "entity 1") == f"{S3} (see [1])"
    assert once.compact(f"{S2} {S1} {S3}", "entity 2") == "(see [2], [1], entity 1)"
    assert once.compact(f"{S3} {S2}", "relationship 1") == "(see entity 1, [2])"
    assert sorted(CountingText.finds) == sorted([S1, S3, S2])  # S1 and S3 looked up once though asked for again
