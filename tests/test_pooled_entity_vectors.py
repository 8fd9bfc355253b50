"""benchmarks/pooled_entity_vectors.py (issue 36's experiment): which stored sentences an entity's pooled
vector is made of, how the parts are weighed, and what the variant would embed."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS.parent))

from benchmarks import pooled_entity_vectors as pooled  # noqa: E402


def _v(*xs: float) -> np.ndarray:
    return pooled.unit(np.asarray(xs, dtype=np.float32))


SENTENCES = {
    "c1": [("Ada Lovelace wrote the first program.", {"ada lovelace"}, _v(1, 0, 0)),
           ("Parisian cafes were busy.", set(), _v(0, 1, 0)),
           ("She met Babbage in PARIS.", set(), _v(0, 0, 1)),
           ("Not located in the chunk.", {"paris"}, None)],
    "c2": [("Paris is a city.", {"paris"}, _v(1, 1, 0))],
}


def test_mentioning_keeps_the_sentences_naming_the_entity_by_key_or_by_word():
    by_key = pooled.mentioning({"ada lovelace"}, ["Ada Lovelace"], ["c1"], SENTENCES)
    assert [t for t, _ in by_key] == ["Ada Lovelace wrote the first program."]
    # a surface on word boundaries, any case; "Parisian" is not "Paris"; an unlocated sentence has no vector
    paris = pooled.mentioning({"paris"}, ["Paris"], ["c2", "c1"], SENTENCES)
    assert [t for t, _ in paris] == ["Paris is a city.", "She met Babbage in PARIS."]  # the chunks' order
    assert pooled.mention_spans("Parisian Paris", ["paris"]) == [(9, 14)]


def test_profile_sentences_follow_the_start_of_the_description():
    covered = pooled.profile_sentences("Paris is a city. Ada Lovelace wrote the first program. Unknown words.",
                                       ["c1", "c2"], SENTENCES)
    assert [t for t, _ in covered] == ["Paris is a city.", "Ada Lovelace wrote the first program."]
    assert pooled.profile_sentences("", ["c1"], SENTENCES) == []


def test_parts_are_weighed_by_their_wordpieces_against_the_head():
    tok = pooled._tokenizer()
    head, sentence = "Ada Lovelace", "She wrote the first published program for the Analytical Engine."
    n_head = len(tok.encode(head).ids)  # with [CLS] and [SEP]
    n_sentence = len(tok.encode(sentence).ids) - 2
    assert n_sentence > n_head
    out = pooled.by_wordpieces([head], np.asarray([_v(1, 0)]), [[(sentence, _v(0, 1))]])[0]
    assert out[1] / out[0] == pytest.approx(n_sentence / n_head, rel=1e-5)
    alone = pooled.by_wordpieces([head], np.asarray([_v(1, 0)]), [[]])[0]
    assert np.allclose(alone, _v(1, 0))


def test_blend_keeps_the_head_where_there_is_no_context():
    out = pooled.blend(np.asarray([_v(1, 0), _v(1, 0)]), [_v(0, 1), None], 0.5)
    assert np.allclose(out[0], _v(1, 1)) and np.allclose(out[1], _v(1, 0))


def test_the_variant_is_priced_with_the_heads_instead_of_the_profiles(sample_ws_copy):
    from benchmarks import embedded_wordpieces

    path = Path(sample_ws_copy.path)
    today = embedded_wordpieces.count(path)["by_kind"]
    report = pooled.pooled_entities(path, 0.5, write=False)
    assert report["entities"] == today["entities"]["texts"] == len(report["heads"])
    priced = pooled.wordpieces_per_token(path, "entities", report["heads"])["by_kind"]
    assert priced["entities"] < today["entities"]["per_corpus_token"]
    assert priced["relations"] == today["relations"]["per_corpus_token"]
