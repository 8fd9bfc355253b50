"""Merge suggestions (core.editing.suggest, core.api merge_suggestions / dismiss_merge_suggestion; issue
33): the name evidence (containment, abbreviation, spelling, never across a number or a direction), the
ranking and its evidence, compatible types only, blocking instead of all pairs, dismissals remembered in
the workspace, a viewer refused, accept = a merge after which the pair is gone."""
from __future__ import annotations

import numpy as np
import pytest

from core.auth import Principal, Role
from core.editing.suggest import Profile, _candidates, compatible, name_evidence, rank
from core.errors import PermissionDeniedError, WorkspaceBusyError

EDITOR = Principal("ed", "editor@example.org", Role.editor)
VIEWER = Principal("vi", "viewer@example.org", Role.viewer)


@pytest.mark.parametrize("a,b,reason", [
    ("West of Africa", "West Africa", "same words"),
    ("Kim Jong - un", "Kim Jong-un", "same words"),
    ("CPC", "Communist Party of China", "abbreviation"),
    ("Port Sallow", "Port Sallow Quay", "containment"),
    ("Kim Jong Chol", "Kim Jong-chul", "spelling"),
    ("Abraham Pietersen van Deusen", "Abraham Pietersen van Deursen", "spelling"),
])
def test_name_evidence_finds_the_same_thing_named_twice(a, b, reason):
    found, score = name_evidence(a, b)
    assert found == reason and 0.5 <= score <= 1.0
    assert name_evidence(b, a) == (found, score)  # symmetric


@pytest.mark.parametrize("a,b", [
    ("35th Chess Olympiad", "36th Chess Olympiad"),  # a number
    ("Henry VI", "Henry VIII"),  # a Roman numeral
    ("West Columbia", "Columbia"),  # a direction
    ("Eastern Newfoundland", "Western Newfoundland"),
    ("National League A", "National League B"),  # a single letter
    ("Kip Miller", "Kevin Miller"),  # one word far from its counterpart
    ("KILM", "ILM"),  # too short for a spelling variant
    ("Harbour Board", "Grain Exchange"),
])
def test_name_evidence_refuses_names_that_differ_by_what_tells_them_apart(a, b):
    assert name_evidence(a, b) == ("", 0.0)


def test_a_generic_head_word_weakens_containment():
    assert name_evidence("Panama", "Panama Airport")[1] < name_evidence("Sea-Tac", "Sea-Tac Kestrel")[1]


def test_types_must_be_compatible():
    assert compatible("GPE", "LOC") and compatible("ORG", "ORG") and compatible("", "PERSON")
    assert not compatible("PERSON", "GPE") and not compatible("GPE", "FAC")


def _profiles() -> list[Profile]:
    return [
        Profile("velmora council", "Velmora Council", "ORG", frozenset({"d1", "d2"}), 4, frozenset({"x", "y"})),
        Profile("velmora county council", "Velmora County Council", "ORG", frozenset({"d1"}), 2, frozenset({"x"})),
        Profile("velmora", "Velmora", "PERSON", frozenset({"d3"}), 1, frozenset()),  # incompatible type
        Profile("harbour board", "Harbour Board", "ORG", frozenset({"d4"}), 1, frozenset()),
        Profile("hb", "HB", "ORG", frozenset({"d4"}), 1, frozenset()),
        Profile("2019 regatta", "2019 Regatta", "EVENT", frozenset({"d5"}), 1, frozenset()),
        Profile("2020 regatta", "2020 Regatta", "EVENT", frozenset({"d5"}), 1, frozenset()),
    ]


def test_rank_orders_by_evidence_and_says_why():
    found = rank(_profiles())
    pairs = [(s.merge, s.into) for s in found]
    assert pairs[0] == ("velmora county council", "velmora council")  # more sources: the survivor
    assert ("hb", "harbour board") in pairs
    assert all("velmora" not in (s.merge, s.into) for s in found)  # PERSON vs ORG: never paired
    assert all("regatta" not in s.merge for s in found)  # differ by a year
    top = found[0]
    assert top.name_reason == "containment" and top.shared_documents == 1 and top.shared_neighbours == 1
    assert top.cosine is None and any("shared source document" in e for e in top.evidence)
    assert found == sorted(found, key=lambda s: -s.score)


def test_vectors_add_their_cosine_and_find_pairs_names_miss():
    profiles = _profiles() + [Profile("the quay", "Quay of Ash", "ORG"), Profile("ash wharf", "Ash Wharf", "ORG")]
    vectors = np.eye(len(profiles), 8, dtype=np.float32)
    vectors[-1] = vectors[-2]  # the two have the same profile vector
    found = {(s.merge, s.into): s for s in rank(profiles, vectors)}
    pair = found.get(("the quay", "ash wharf")) or found.get(("ash wharf", "the quay"))
    assert pair is not None and pair.cosine == pytest.approx(1.0) and pair.name_reason == ""
    assert found[("velmora county council", "velmora council")].cosine == pytest.approx(0.0)


def test_dismissed_pairs_are_left_out():
    found = rank(_profiles(), dismissed=[("velmora council", "velmora county council")])
    assert all({s.merge, s.into} != {"velmora council", "velmora county council"} for s in found)


def test_blocking_scores_far_fewer_pairs_than_all_of_them():
    rng = np.random.default_rng(7)
    syllables = ["ka", "lo", "mer", "vin", "tas", "dor", "el", "rin", "sa", "bu", "pe", "zan"]
    profiles = [Profile(f"e{i}", " ".join("".join(rng.choice(syllables, 3)).title() for _ in range(2)), "ORG")
                for i in range(3000)]
    vectors = rng.normal(size=(3000, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    assert len(_candidates(profiles, vectors)) < 3000 * 60  # all pairs would be 4.5 million


def test_workspace_suggestions_dismiss_and_accept(sample_ws_copy):
    from core.api import dismiss_merge_suggestion, edit_graph, merge_suggestions
    from core.workspace import Workspace

    ws = sample_ws_copy
    found = merge_suggestions(EDITOR, ws, top=20)
    pairs = [{s.merge, s.into} for s in found]
    # the river written both ways (a town and its quay are no longer offered: typed GPE and FAC)
    assert {"anwen", "river anwen"} in pairs and {"port sallow quay", "port sallow"} not in pairs
    assert all(s.cosine is not None for s in found)  # the profile vectors were read
    with pytest.raises(PermissionDeniedError):
        merge_suggestions(VIEWER, ws)
    with pytest.raises(PermissionDeniedError):
        dismiss_merge_suggestion(VIEWER, ws, "Anwen", "River Anwen")

    first = found[0]
    assert dismiss_merge_suggestion(EDITOR, ws, first.merge_name.upper(), first.into_name) == 1
    path = ws.path
    ws.close()
    reopened = Workspace(path)  # remembered in the workspace
    try:
        again = merge_suggestions(EDITOR, reopened, top=20)
        assert {first.merge, first.into} not in [{s.merge, s.into} for s in again]
        assert dismiss_merge_suggestion(EDITOR, reopened, first.merge, first.into, restore=True) == 0
        assert {first.merge, first.into} in [{s.merge, s.into} for s in merge_suggestions(EDITOR, reopened, 20)]
        other = next(s for s in again if "port sallow" not in (s.merge, s.into)) if first.into != "port sallow" \
            else again[0]
        edit_graph(EDITOR, reopened, "merge", {"names": [other.merge], "into": other.into})  # accept
        after = merge_suggestions(EDITOR, reopened, top=20)
        assert other.merge not in {k for s in after for k in (s.merge, s.into)}
    finally:
        reopened.close()


def test_dismiss_is_refused_while_another_writer_holds_the_workspace(sample_ws_copy):
    from core.api import dismiss_merge_suggestion

    ws = sample_ws_copy
    with ws.writer():
        with pytest.raises(WorkspaceBusyError):
            dismiss_merge_suggestion(EDITOR, type(ws)(ws.path), "Port Sallow Quay", "Port Sallow")
