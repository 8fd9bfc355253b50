"""A sentence the parse splits after a title abbreviation ("… the position is Hon." | "Winnie Kiiza of …") is
one sentence again: joined at indexing (the stored sentence record names the person) and, for workspaces
indexed before, joined on read by the answers' sentence bank (its vector the mean of its parts' vectors)."""
from __future__ import annotations

from types import SimpleNamespace

import networkx as nx
import numpy as np

from core.answers.sentences import SentenceBank
from core.extraction.title_splits import continues_title, ends_with_title, join_title_rows
from core.sentence_vectors import encode_vector, sentence_spans
from core.storage.graph_view import as_graph_view

HON = "The current Leader of Opposition and first Ugandan female to hold the position is Hon."
NAME = "Winnie Kiiza of the Forum for Democratic Change."
AFTER = "She was elected to Parliament in 2016."


def test_a_title_before_a_name_does_not_end_the_sentence():
    assert ends_with_title(HON) and ends_with_title("Speaker Hon.") and ends_with_title("married (Dr.")
    assert continues_title(HON, NAME)
    assert not ends_with_title("The hotel stands on Charlotte St.")  # St. often ends a real sentence
    assert not ends_with_title("It stars Michael Anderson, Jr.")
    assert not ends_with_title("It opened in 2001.") and not ends_with_title("Its wife was a Honda.")
    assert not continues_title(HON, "and then it rained.")  # no capital: no name follows


def test_stored_rows_are_joined_with_their_mentions():
    rows = [(HON, [["ORG", "Opposition", "opposition"]]), (NAME, [["PERSON", "Winnie Kiiza", "winnie kiiza"]]),
            (AFTER, [["DATE", "2016", ""]])]
    joined, parts = join_title_rows(rows)
    assert [text for text, _ in joined] == [f"{HON} {NAME}", AFTER]
    assert [m[1] for m in joined[0][1]] == ["Opposition", "Winnie Kiiza"]
    assert parts == [[0, 1], [2]]


def test_indexing_stores_the_whole_sentence():
    from core.extraction.spacy_extract import extract_chunks

    extraction = extract_chunks([f"{HON} {NAME} {AFTER}"], ["PERSON", "ORG", "GPE", "DATE"])[0]
    texts = [s.text for s in extraction.sentences]
    assert texts[0] == f"{HON} {NAME}"
    assert all(not t.endswith("Hon.") for t in texts)


def _bank(chunk_text: str, rows: list[tuple[str, list[list[str]]]]) -> SentenceBank:
    spans = sentence_spans(chunk_text, [text for text, _ in rows])
    units = [np.eye(4, dtype=np.float32)[i] for i in range(len(rows))]
    chunk = SimpleNamespace(doc_id="d1", order=0, text=chunk_text, start_char=-1)
    records = SimpleNamespace(
        chunks_by_id=lambda ids: {"c1": chunk},
        chunk_sentences=lambda ids: {"c1": rows},
        positions=lambda ids: {},
        sentence_vectors=lambda ids: {"c1": [(a, b, encode_vector(v)) for (a, b), v in zip(spans, units)]})
    graph = as_graph_view(nx.Graph())
    ws = SimpleNamespace(records=records, doc_names=lambda: {"d1": "uganda.md"},
                         views=SimpleNamespace(graph=graph))
    return SentenceBank(ws)  # type: ignore[arg-type]


def test_the_answers_read_a_split_sentence_whole_with_a_pooled_vector():
    text = f"{HON} {NAME} {AFTER}"
    bank = _bank(text, [(HON, []), (NAME, [["PERSON", "Winnie Kiiza", "winnie kiiza"]]), (AFTER, [])])
    sentences = bank.sentences(["c1"])
    assert [s.text for s in sentences] == [f"{HON} {NAME}", AFTER]
    first = sentences[0]
    assert first.span == (0, len(HON) + 1 + len(NAME) - 1)  # up to the last word's end
    assert any(surface == "Winnie Kiiza" for _, surface, _ in first.mentions)
    vector = bank.vectors(["c1"])["c1"][first.span]
    assert np.allclose(vector, np.array([1, 1, 0, 0]) / np.sqrt(2), atol=1e-3)  # the mean of its two parts
