"""Inspect's evidence rows open the Source viewer at their span (issue 34): which chunk and which
sentence a row of each table opens (``ui.evidence_links.evidence_target``); the click itself is
driven in Chromium by ``tests/test_browser_citations.py``."""
from __future__ import annotations

TEXTS = {"c1": "The quay was rebuilt in 1890. Nobody named the keeper here.",
         "c2": "Marta Quill kept the lamp. Later the lamp went to Oskar Brand, who was Marta Quill's nephew.",
         "c3": "Marta Quill and Oskar Brand sailed to Hollow Bay together! Then the storm came."}


def test_an_entity_row_opens_the_first_chunk_naming_it_at_that_sentence() -> None:
    from ui.evidence_links import evidence_target

    assert evidence_target(["c1", "c2", "c3"], TEXTS, ["marta quill"]) == {"chunk": "c2", "quote": "Marta Quill kept the lamp."}


def test_a_relation_row_opens_the_sentence_naming_both_ends() -> None:
    from ui.evidence_links import evidence_target

    found = evidence_target(["c1", "c2", "c3"], TEXTS, ["Oskar Brand", "Marta Quill"])
    assert found == {"chunk": "c2", "quote": "Later the lamp went to Oskar Brand, who was Marta Quill's nephew."}
    only_one = evidence_target(["c1", "c3"], TEXTS, ["Marta Quill", "Greta Holm"])  # no sentence names both
    assert only_one == {"chunk": "c3", "quote": "Marta Quill and Oskar Brand sailed to Hollow Bay together!"}


def test_a_summary_row_opens_the_leaf_holding_its_first_sentence_else_the_first_leaf() -> None:
    from ui.evidence_links import evidence_target

    lead = "Marta Quill and Oskar Brand sailed to Hollow Bay together!"
    assert evidence_target(["c1", "c2", "c3"], TEXTS, (), lead) == {"chunk": "c3", "quote": lead}
    assert evidence_target(["c1", "c2"], TEXTS, (), "A sentence no leaf holds.") == {"chunk": "c1"}
    assert evidence_target([], TEXTS, ["Marta Quill"]) is None


def test_sentences_split_after_stops_and_blank_lines() -> None:
    from ui.evidence_links import sentences

    assert sentences('He said "Go." Then left!\n\n# Heading\nText') == ['He said "Go."', "Then left!", "# Heading\nText"]
