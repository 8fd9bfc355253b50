"""The offline graph's hygiene: markup stripped before NLP, entity names cleaned, title entities,
alias merging, type votes, and the graph-quality report, checked against hand-labelled junk."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from core.extraction.aliases import acronym, alias_map, may_shorten, resolve_document
from core.extraction.markup import plain_text
from core.extraction.nlp import clean_entity_span, parse_texts
from core.extraction.spacy_extract import extract_chunks
from core.graph_quality import graph_quality, suspicious_rules
from core.settings import DEFAULT_ENTITY_TYPES
from core.types import ChunkExtraction, EntityRecord, MentionRecord, RelationRecord

from conftest import ROOT

# Junk the spaCy graph held before the cleaning, written down by hand from the sample corpus's graph
# (an independent list: the check does not reuse the cleaner's own rules).
HAND_LABELLED_JUNK = ["ting expanded", "Great Velmora Flood of", "university since 1995", "grey seals",
                      "grey seal colonies", "county council", "principal keeper", "The Boat Procession",
                      "The Coastal Lights Board", "Background", "Seabirds"]


def ents(text: str) -> list[tuple[str, str]]:
    return [(e.text, e.label_) for e in parse_texts([text])[0].ents]


# --- markup ------------------------------------------------------------------------------------

def test_markdown_blocks_become_plain_paragraphs():
    md = ("# Kestrel Point Lighthouse\n\n## Description\nThe **tower** is _white_ and [famous](http://x.y).\n"
          "- Port Sallow - the town\n- Tern Island\n\n| Keeper | Years |\n|---|---|\n| Josiah | 1862 |\n"
          "```\ncode stays\n```\n> quoted words\n")
    plain = plain_text(md)
    for marker in ("#", "**", "_white_", "](", "|---", "- Port", "> quoted"):
        assert marker not in plain
    for kept in ("Kestrel Point Lighthouse", "The tower is white and famous.", "Port Sallow - the town",
                 "Keeper; Years", "Josiah; 1862", "code stays", "quoted words"):
        assert kept in plain
    assert "Description\n\nThe tower" in plain  # a heading is a paragraph of its own


def test_plain_prose_is_unchanged_and_snake_case_survives():
    prose = "Port Sallow is a town. Its harbour_master_id field is 3 * 4 = 12 in the old ledger."
    assert plain_text(prose) == prose


def test_stored_chunks_keep_the_markup_but_profiles_do_not(sample_ws):
    texts = [c.text for c in sample_ws.store.chunks_by_id(sample_ws.store.all_chunk_ids()).values()]
    assert any(t.lstrip().startswith("# ") for t in texts)  # the user's text is kept as written
    graph = sample_ws.knowledge_graph()
    for _, data in graph.nodes(data=True):
        assert "##" not in data["description"] and "\n- " not in data["description"]
    for _, _, data in graph.edges(data=True):
        assert "##" not in data["description"]
    for node in sample_ws.store.tree_nodes():
        assert "## " not in node.text


# --- names ---------------------------------------------------------------------------------------

def test_names_are_cut_at_line_breaks_and_lose_function_words():
    found = ents("The Great Velmora Flood\n of 1957 was big. The Coastal Lights Board met in Port Sallow.")
    names = [n for n, _ in found]
    assert "Great Velmora Flood" in names and "Coastal Lights Board" in names
    assert not any(n.startswith("The ") or n.endswith((" of", "\n")) for n in names)


def test_lowercase_fragments_are_not_names():
    found = ents("ting expanded the grey seals of the university since 1995 near the county council.")
    assert not [n for n, label in found if label in DEFAULT_ENTITY_TYPES]


def test_trailing_numbers_only_where_they_are_part_of_a_name():
    from spacy.tokens import Span

    doc = parse_texts(["Tidewater Shipping 1887 archive and Apollo 11 and the Harland family's boat"])[0]

    def cleaned(start: int, end: int, label: str) -> str:
        bounds = clean_entity_span(Span(doc, start, end, label=label))
        return doc[bounds[0]:bounds[1]].text if bounds else ""

    assert cleaned(0, 3, "ORG") == "Tidewater Shipping"  # an organisation's name does not end in a year
    assert cleaned(5, 7, "PRODUCT") == "Apollo 11"  # a product's may
    assert cleaned(8, 12, "NORP") == "Harland family"  # leading "the" and the trailing possessive go


def test_a_title_names_the_main_entity_and_headings_alone_do_not():
    found = ents("Clonbrook\n\nClonbrook is a village in the Demerara-Mahaica region of Guyana.")
    assert ("Clonbrook", "UNKNOWN") in found
    found = ents("Brand (play)\n\nBrand is a play by Henrik Ibsen.")
    assert any(name == "Brand" for name, _ in found)
    found = ents("Background\n\nThe harbour was dredged in 1890 by the town council.")
    assert not any(name == "Background" for name, _ in found)


def test_a_sentence_initial_common_word_is_not_a_name():
    found = ents("Seals and seabirds live on Tern Island. Seabirds diving for fish were seen near Greywick.")
    assert not any(name == "Seabirds" for name, _ in found)


def test_a_recognised_name_is_an_entity_wherever_it_recurs():
    ex = extract_chunks(["WILM (1450 AM) broadcasts in Wilmington. WILM is known as the station of Joe Pyne."],
                        DEFAULT_ENTITY_TYPES)[0]
    assert any({r.source, r.target} == {"WILM", "Wilmington"} for r in ex.relations)


def test_sentences_are_stored_with_typed_mentions():
    ex = extract_chunks(["Stellan Industries bought Brightwater Robotics for 48 million euros in 2019."],
                        DEFAULT_ENTITY_TYPES)[0]
    labels = {label for s in ex.sentences for label, _, _ in s.mentions}
    assert {"DATE", "ORG"} <= labels and labels & {"MONEY", "CARDINAL"}  # the small model reads "48 million" as either
    keys = {key for s in ex.sentences for _, _, key in s.mentions if key}
    assert "brightwater robotics" in keys


# --- aliases -------------------------------------------------------------------------------------

def test_alias_rules():
    names = {"tidewater": ("Tidewater", "ORG"), "tidewater shipping cooperative": ("Tidewater Shipping Cooperative", "ORG"),
             "carrow sound": ("Carrow Sound", "LOC"),
             "carrow sound fisheries committee": ("Carrow Sound Fisheries Committee", "ORG"),
             "harland": ("Harland", "PERSON"), "josiah harland": ("Josiah Harland", "PERSON"),
             "daniel harland": ("Daniel Harland", "PERSON"), "marlowe": ("Marlowe", "PERSON"),
             "edwin marlowe": ("Edwin Marlowe", "PERSON"), "vmi": ("VMI", "ORG"),
             "velmora marine institute": ("Velmora Marine Institute", "ORG"),
             "county council": ("County Council", "ORG"), "velmora county council": ("Velmora County Council", "ORG")}
    assert alias_map(names) == {"tidewater": "tidewater shipping cooperative", "marlowe": "edwin marlowe",
                                "vmi": "velmora marine institute", "county council": "velmora county council"}
    assert acronym("Velmora Marine Institute") == "vmi" and acronym("Bank of the North") == "bn"
    assert not may_shorten("GPE", "ORG") and may_shorten("ORG", "ORG") and may_shorten("PERSON", "UNKNOWN")


def test_alias_chains_resolve_to_the_longest_name():
    names = {"tide": ("Tide", "ORG"), "tide shipping": ("Tide Shipping", "ORG"),
             "tide shipping cooperative": ("Tide Shipping Cooperative", "ORG")}
    assert alias_map(names) == {"tide": "tide shipping cooperative", "tide shipping": "tide shipping cooperative"}


def test_resolve_document_renames_every_record_and_merges_collisions():
    first = ChunkExtraction(
        entities=[EntityRecord("Tidewater Shipping Cooperative", "ORG", "Founded in 1887.", {"ORG": 2}),
                  EntityRecord("Margaret Thorne", "PERSON", "She founded it.", {"PERSON": 1})],
        relations=[RelationRecord("Margaret Thorne", "Tidewater Shipping Cooperative", ["found"], "She founded it.")],
        mentions=MentionRecord({"tidewater shipping cooperative": 2, "margaret thorne": 1}, {},
                               {("margaret thorne", "tidewater shipping cooperative"): 1}))
    second = ChunkExtraction(
        entities=[EntityRecord("Tidewater", "ORG", "Tidewater ran boats.", {"ORG": 1}),
                  EntityRecord("Tidewater Shipping Cooperative", "ORG", "It grew.", {"GPE": 1})],
        relations=[RelationRecord("Tidewater", "Tidewater Shipping Cooperative", ["run"], "Tidewater ran boats."),
                   RelationRecord("Margaret Thorne", "Tidewater", ["chair"], "Thorne chaired Tidewater.")],
        mentions=MentionRecord({"tidewater": 1, "tidewater shipping cooperative": 1, "margaret thorne": 1}, {},
                               {("tidewater", "tidewater shipping cooperative"): 1, ("margaret thorne", "tidewater"): 1}))
    assert resolve_document([first, second]) == {"tidewater": "tidewater shipping cooperative"}
    assert [e.name for e in second.entities] == ["Tidewater Shipping Cooperative"]
    merged = second.entities[0]
    assert merged.aliases == ["Tidewater"] and merged.type == "ORG"
    assert "Tidewater ran boats." in merged.description and "It grew." in merged.description
    assert [(r.source, r.target) for r in second.relations] == [("Margaret Thorne", "Tidewater Shipping Cooperative")]
    assert second.mentions.counts == {"tidewater shipping cooperative": 2, "margaret thorne": 1}
    assert second.mentions.cooccurrence == {("margaret thorne", "tidewater shipping cooperative"): 1}


# --- the sample corpus's graph ---------------------------------------------------------------------

def test_hand_labelled_junk_is_gone_from_the_sample_graph(sample_ws):
    graph = sample_ws.knowledge_graph()
    names = {str(d["name"]).casefold() for _, d in graph.nodes(data=True)}
    for junk in HAND_LABELLED_JUNK:
        assert junk.casefold() not in names, junk
    assert "tidewater" not in graph
    tsc = graph.nodes["tidewater shipping cooperative"]
    assert "Tidewater" in tsc["aliases"] and tsc["type"] == "ORG"
    assert "velmora county council" in graph and "county council" not in graph


def test_graph_quality_report_on_the_sample_corpus(sample_ws):
    report = graph_quality(sample_ws)
    assert report["entities"] == sample_ws.knowledge_graph().number_of_nodes() > 50
    assert report["suspicious_total"] == 0, report["suspicious"]
    assert report["alias_merges"]["count"] >= 5
    assert any("Tidewater" in example for example in report["alias_merges"]["examples"]) or \
        report["alias_merges"]["count"] > len(report["alias_merges"]["examples"])
    assert report["type_conflicts_resolved"]["count"] > 0
    assert report["relations_per_entity"]["mean"] > 1
    assert report["isolated_entities"]["count"] == sum(1 for _, d in sample_ws.knowledge_graph().degree() if d == 0)


@pytest.mark.parametrize("name,etype,rules", [
    ("ting expanded", "ORG", ["lowercase_fragment"]),
    ("Great Velmora Flood of", "EVENT", ["trailing_function_word"]),
    ("The Boat Procession", "ORG", ["leading_function_word"]),
    ("The Terminal", "WORK_OF_ART", []),
    ("university since 1995", "ORG", ["lowercase_fragment", "digits_tail"]),
    ("Apollo 11", "PRODUCT", []),
    ("Harland's", "PERSON", ["possessive"]),
    ("Velmora Fishermen's Association", "ORG", []),
    ("Clonbrook Clonbrook", "GPE", ["repeated_name"]),
    ("National League A", "ORG", []),
])
def test_suspicious_rules(name, etype, rules):
    assert suspicious_rules(name, etype) == rules


@pytest.mark.slow
def test_graph_quality_cli(sample_workspace_dir):
    proc = subprocess.run([sys.executable, "-m", "core", "graph-quality", "--workspace", str(sample_workspace_dir),
                           "--json"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    for key in ("entities", "relations", "suspicious", "alias_merges", "type_conflicts_resolved",
                "relations_per_entity", "isolated_entities"):
        assert key in report
    text = subprocess.run([sys.executable, "-m", "core", "graph-quality", "--workspace", str(sample_workspace_dir)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300).stdout
    assert "suspicious names: none" in text and "alias merges:" in text
