"""Entity typing by agreement of the mentions' NER labels and the name (issue 32, item 6).

The sample corpus's entities, as indexing stored their mentions (tests/fixtures/sample_entity_mentions.json),
are re-typed and compared with hand labels (tests/fixtures/sample_entity_types.json): the mentions' vote
alone agreed on 62 of 84, the agreement rule on 81."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.extraction.entity_typing import mentions_vote, name_type, vote_with_name
from core.indexing.profiles import vote_type
from core.storage.records import EntityFragment

FIXTURES = Path(__file__).parent / "fixtures"


def _accepted(label: str | list[str]) -> set[str]:
    return set(label) if isinstance(label, list) else {label}


def _sample() -> tuple[dict, dict]:
    mentions = json.loads((FIXTURES / "sample_entity_mentions.json").read_text(encoding="utf-8"))["entities"]
    labels = json.loads((FIXTURES / "sample_entity_types.json").read_text(encoding="utf-8"))["labels"]
    return mentions, labels


def _fragments(rows: list[dict]) -> list[EntityFragment]:
    return [EntityFragment(f"c{i}", "d", "", mentions_vote(r["votes"]), r["sentences"], dict(r["votes"]))
            for i, r in enumerate(rows)]


def test_sample_corpus_types_agree_with_hand_labels() -> None:
    mentions, labels = _sample()
    assert set(mentions) == set(labels) and len(labels) >= 40
    by_vote = sum(vote_type(_fragments(rows))[0] in _accepted(labels[name]) for name, rows in mentions.items())
    agreed = {name: vote_type(_fragments(rows), name)[0] for name, rows in mentions.items()}
    right = sum(agreed[name] in _accepted(labels[name]) for name in mentions)
    assert by_vote == 62
    assert right >= 81, {n: t for n, t in agreed.items() if t not in _accepted(labels[n])}
    # the examples the issue names
    assert (agreed["Port Sallow"], agreed["Ashcombe"], agreed["Agnes Marlowe"], agreed["Kestrel Point Lighthouse"]) \
        == ("GPE", "GPE", "PERSON", "FAC")


@pytest.mark.parametrize("name, expected", [
    ("Kestrel Point Lighthouse", "FAC"), ("River Anwen", "LOC"), ("University of Dunmore", "ORG"),
    ("Great Velmora Flood", "EVENT"), ("Washington Naval Treaty", "LAW"), ("Port Sallow", "GPE"),
    ("Dr. Jane Hale", "PERSON"), ("Port Sallow Quay", "FAC"), ("Ashcombe", None), ("Agnes Marlowe", None),
    ("General Office of the Communist Party", None), ("Soviet Union", None), ("Church of England", None),
])
def test_name_states_a_type_only_by_its_head_prefix_or_title(name: str, expected: str | None) -> None:
    assert name_type(name) == expected


def test_a_title_keeps_its_label_against_the_head_word() -> None:
    assert vote_with_name("Star Wars", {"WORK_OF_ART": 3, "EVENT": 1}, []) == "WORK_OF_ART"
    assert vote_with_name("Great Flood", {"ORG": 3}, []) == "EVENT"


def test_mention_sentences_tell_a_town_from_a_person() -> None:
    town = ["The railway links the towns of Millbrook, Dunmore and Ashcombe.", "Ashcombe flooded."]
    assert vote_with_name("Ashcombe", {"PERSON": 5, "GPE": 2}, town) == "GPE"
    assert vote_with_name("Greywick", {"PERSON": 3}, ["Greywick, a fishing town of 3,800 people."]) == "GPE"
    assert vote_with_name("Anwen", {"PERSON": 4}, ["A settlement at the mouth of the Anwen."]) == "LOC"
    # person evidence wins over place words; with no evidence the mentions' vote stands
    assert vote_with_name("Agnes Marlowe", {"LOC": 1, "PERSON": 1},
                          ["His daughter, Agnes Marlowe (1897–1979), trained in Greywick."]) == "PERSON"
    assert vote_with_name("Rutherford", {"PERSON": 2}, ["Rutherford moved the fleet."]) == "PERSON"
    assert vote_with_name("Smith", {"PERSON": 2}, ["The Smith family lived in Leeds."]) == "PERSON"


def test_without_a_name_the_vote_is_the_old_one() -> None:
    rows = [{"votes": {"UNKNOWN": 2}, "sentences": ""}, {"votes": {"FAC": 1, "GPE": 1}, "sentences": ""}]
    assert vote_type(_fragments(rows)) == ("FAC", {"UNKNOWN": 2, "FAC": 1, "GPE": 1})
