"""Merging entity/relation fragments (LightRAG dedupe + profiles) and extractive summaries."""
from __future__ import annotations

import numpy as np

from conftest import SAMPLES

from core.indexing.profiles import merge_entity, merge_relation
from core.settings import Settings
from core.storage.records import EntityFragment, RelationFragment
from core.indexing.summarize import extractive_summary, lexrank_scores, merge_fragments, readable_summary, split_known, split_sentences


def frag(chunk, name, etype, desc):
    return EntityFragment(chunk, "d", name, etype, desc)


def test_entity_merge_takes_most_frequent_name_and_type_and_dedupes():
    fragments = [frag("c1", "Port Sallow", "GPE", "Port Sallow is a town."),
                 frag("c2", "Port sallow", "PERSON", "Port Sallow is a town."),
                 frag("c3", "Port Sallow", "GPE", "It has a harbour."),
                 frag("c2", "Port Sallow", "UNKNOWN", "It has a harbour.")]
    merged = merge_entity("port sallow", fragments, Settings())
    assert merged.name == "Port Sallow" and merged.type == "GPE"
    assert merged.description == "Port Sallow is a town. It has a harbour."
    assert merged.source_chunk_ids == ["c1", "c2", "c3"]
    assert merged.vector_id.startswith("ent-") and merged.vector_text.startswith("Port Sallow\n")


def test_entity_profile_is_summarised_past_the_fragment_budget():
    fragments = [frag(f"c{i}", "Velmora", "LOC", f"Velmora fact number {i} about the harbour and the coast.")
                 for i in range(12)]
    settings = Settings(profile_max_fragments=8, profile_summary_tokens=40)
    merged = merge_entity("velmora", fragments, settings)
    assert len(merged.description.split("Velmora fact")) - 1 < 12
    assert len(merged.source_chunk_ids) == 12


def test_llm_summarizer_is_used_only_past_the_budget():
    calls = []

    def summarizer(kind, name, fragments):
        calls.append((kind, name, len(fragments)))
        return "summary"

    few = [frag("c1", "A", "ORG", "one."), frag("c2", "A", "ORG", "two.")]
    assert merge_entity("a", few, Settings(), summarizer).description == "one. two."
    many = [frag(f"c{i}", "A", "ORG", f"fact {i}.") for i in range(8)]
    assert merge_entity("a", many, Settings(), summarizer).description == "summary"
    assert calls == [("entity", "A", 8)]


def test_relation_merge_unions_keywords_and_sums_weights():
    fragments = [RelationFragment("c1", "d", ["found", "cooperative"], "A founded B.", 1.0),
                 RelationFragment("c2", "d", ["cooperative", "lead"], "A led B.", 2.0)]
    merged = merge_relation(("a", "b"), fragments, {"a": "Alice", "b": "Bob"}, Settings())
    assert merged.keywords == ["found", "cooperative", "lead"]
    assert merged.weight == 3.0
    assert merged.description == "A founded B. A led B."
    assert "Alice" in merged.vector_text and "Bob" in merged.vector_text


def test_lexrank_prefers_the_central_sentence():
    # three unit vectors: s1 is close to both s0 and s2, which are orthogonal to each other
    vectors = np.array([[1.0, 0.0], [0.7071, 0.7071], [0.0, 1.0]])
    scores = lexrank_scores(vectors)
    assert scores[1] > scores[0] and scores[1] > scores[2]
    assert abs(scores.sum() - 1.0) < 1e-6


def test_extractive_summary_keeps_original_order_and_budget():
    sentences = ["First sentence about boats.", "Second sentence about trains.", "Third sentence about boats again.",
                 "First sentence about boats."]  # a repeated sentence counts once

    def embed(sentences):
        table = {"boats": [1.0, 0.0], "trains": [0.0, 1.0]}
        return np.array([table["boats"] if "boats" in s else table["trains"] for s in sentences])

    summary = extractive_summary(sentences, embed, max_tokens=12)
    assert "boats" in summary and "trains" not in summary
    assert summary.index("First") < summary.index("Third") and summary.count("First") == 1
    short = extractive_summary(["Only one."], embed, max_tokens=300)
    assert short == "Only one."


def test_split_sentences_handles_cjk_and_long_lines():
    assert split_sentences("第一句。第二句！") == ["第一句。", "第二句！"]
    long = "x" * 5000
    parts = split_sentences(long)
    assert len(parts) > 1 and "".join(parts) == long


def test_merge_fragments_dedupes_below_budget():
    assert merge_fragments(["a b.", "a b.", "c d."], 8, 1200, 200) == "a b. c d."


def test_merged_descriptions_do_not_repeat_a_sentence_of_overlapping_chunks():
    from core.indexing.profiles import without_repeated_sentences

    first = "Kestrel Point Lighthouse marks Carrow Sound. The headland is a popular viewpoint for seabirds."
    second = "The headland is a popular viewpoint for seabirds. Its keeper lived in Port Sallow."
    assert without_repeated_sentences([first, second]) == [first, "Its keeper lived in Port Sallow."]
    assert without_repeated_sentences([first, first.split(". ")[1]]) == [first]  # nothing new: dropped
    # a short repeated piece may be an abbreviation the regex split off: kept
    assert without_repeated_sentences(["Dr. Smith came.", "Dr. Jones left."]) == ["Dr. Smith came.", "Dr. Jones left."]
    twice = "The Van Deusen families descend from Abraham. The Van Deusen families descend from Abraham."
    assert without_repeated_sentences([twice]) == ["The Van Deusen families descend from Abraham."]


def test_readable_summary_sets_headings_apart():
    # stored summaries are sentences joined by spaces ("The Velmora Coast The Velmora Coast is …", "… the sound.
    # History Over …"); read, each title line stands between blank lines
    sentences = ["The Velmora Coast", "The Velmora Coast is a coastal region.", "Geography",
                 "The River Anwen rises in the Harrow Hills."]

    def embed(texts):
        return np.eye(len(texts))

    stored = extractive_summary(sentences, embed, max_tokens=300)
    assert stored == " ".join(sentences)  # what is embedded and ranked is unchanged
    assert readable_summary(stored, sentences) == (
        "The Velmora Coast\n\nThe Velmora Coast is a coastal region.\n\nGeography\n\n"
        "The River Anwen rises in the Harrow Hills.")
    assert readable_summary("Dr. Who left. He came back.", []) == "Dr. Who left. He came back."  # no title: as is


def test_sample_corpus_summaries_read_with_headings_apart(sample_ws):
    # the sample articles are Markdown with '#'/'##' headings, which the parse keeps as sentences of their own;
    # read through the API, every heading a summary node holds stands between blank lines (or text edges)
    from core import api
    from core.auth import LOCAL_ADMIN
    from core.extraction.markup import is_title
    from core.indexing.tree import load_rows

    rows = load_rows(sample_ws.records, sample_ws.records.all_chunk_ids())
    known = [s for sentences in rows.values() for s in sentences]
    summaries = [n for n in sample_ws.tree_index().values() if n.level > 0]
    around = []  # what stands before and after each heading in a summary as read
    for node in summaries:
        text = api.readable_summary(LOCAL_ADMIN, sample_ws, node.node_id)
        assert " ".join(text.split()) == " ".join(node.text.split())  # the same words, only whitespace moved
        position = 0
        for sentence in split_known(text, known):
            start = text.index(sentence, position)
            position = start + len(sentence)
            if is_title(sentence):
                around += [text[max(0, start - 2):start], text[position:position + 2]]
    assert len(summaries) > 5 and len(around) > 10  # the sample corpus's summaries do hold headings
    assert set(around) <= {"\n\n", ""}
    assert api.readable_summary(LOCAL_ADMIN, sample_ws, "no-such-node") == ""
