"""LightRAG's Dedupe ∘ Prof step: merge the fragments of one entity or relation into one profile.

Entities are keyed by normalised name: display name and type are the most frequent ones,
descriptions are deduplicated and, past the budget (≥ ``profile_max_fragments`` fragments or
≥ ``profile_max_tokens`` tokens), summarised — extractively offline, by the LLM otherwise
(``summarizer`` argument). Relations are keyed by the unordered endpoint pair: keywords are the
union, weights the sum. Merges are recomputed from all remaining fragments, in corpus order, so
the result never depends on batch boundaries, crashes or deletions.
"""
from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

from core.extraction.entity_typing import mentions_vote, summed_votes, vote_with_name
from core.extraction.names import normalize_name
from core.settings import Settings
from core.storage.records import EntityFragment, RelationFragment
from core.indexing.summarize import merge_fragments, split_sentences
from core.tokens import count_tokens, truncate

# (kind, name, fragments) -> summary text; used when an LLM summarises over-budget profiles
ProfileSummarizer = Callable[[str, str, list[str]], str]

# How much of a profile is embedded with the name/keys. Embedding dominates offline indexing and
# entity + relation vectors outnumber chunks ~20:1 (MiniLM runs at ~4k wordpieces/s on 2 cores), so
# profiles are cut. Entities keep the start of their profile: with names alone the path mode's node
# retrieval lost 11 points of recall@5 on dev_musique_full. Relations embed keywords + endpoints only
# (LightRAG also embeds the description): that is 3x fewer wordpieces, and on dev_musique_full global
# R@5 moved 29.7 -> 28.1, hybrid 63.9 -> 64.2, mix 65.8 -> 66.2 (51 questions, within noise).
# The entity's profile start leaves out what the head already says (the name repeated at the start,
# "A Fistful of Death ( ) is a 1971 ..." -> "is a 1971 ..."), so the 14 tokens carry the profile's claim
# (issue 36: 32 -> 14 and whole tree nodes -> 128 tokens took dev_musique_full from 4.45 to 3.49
# wordpieces per corpus token; recall in docs/speed.md).
ENTITY_PROFILE_TOKENS = 14
RELATION_PROFILE_TOKENS = 0
RELATION_KEYWORDS = 10  # keywords of a relation named in its embedded text
# A summary-tree node is embedded from its start (0: all of it, which MiniLM cuts at 256 wordpieces).
TREE_VECTOR_TOKENS = 128
# The entity text embedded before that cut: the name, then the first 32 tokens of the profile as written.
# Vector ids are hashes of the embedded text, so a vector stored under such an id (a workspace indexed
# before the cut, or a LightRAG import that reused LightRAG's `name\ndescription` vectors) is known to
# come from this text: it is restored from it (``entity_text_of_id``) until a merge changes the entity.
EARLIER_ENTITY_PROFILE_TOKENS = 32
_EMPTY_BRACKETS = re.compile(r"\s*[(\[][\s;,]*[)\]]")
_WORD_REST = re.compile(r"\w*")


@dataclass
class MergedEntity:
    key: str
    name: str
    type: str
    description: str
    source_chunk_ids: list[str]
    vector_text: str
    vector_id: str
    aliases: list[str] = field(default_factory=list)
    type_votes: dict[str, int] = field(default_factory=dict)


@dataclass
class MergedRelation:
    source: str
    target: str
    keywords: list[str]
    description: str
    weight: float
    source_chunk_ids: list[str]
    vector_text: str
    vector_id: str


def entity_vector_text(name: str, description: str, aliases: Sequence[str] = ()) -> str:
    """What is embedded for an entity: its name (and up to three merged aliases), then the start of
    its profile."""
    head = name + (f" ({', '.join(list(aliases)[:3])})" if aliases else "")
    return f"{head}\n{whole_words(profile_start(name, description), ENTITY_PROFILE_TOKENS)}"


def entity_vector_texts(name: str, description: str, aliases: Sequence[str] = ()) -> list[str]:
    """Every text an entity's stored vector may come from: today's ``entity_vector_text`` first, then the
    text of the earlier rule (``EARLIER_ENTITY_PROFILE_TOKENS``) when it differs."""
    head = name + (f" ({', '.join(list(aliases)[:3])})" if aliases else "")
    today = entity_vector_text(name, description, aliases)
    earlier = f"{head}\n{truncate(description, EARLIER_ENTITY_PROFILE_TOKENS)}"
    return [today] if earlier == today else [today, earlier]


def entity_text_of_id(key: str, vector_id: str, name: str, description: str, aliases: Sequence[str] = ()) -> str:
    """The text whose vector is stored under ``vector_id`` (the one of ``entity_vector_texts`` the id
    hashes); today's text when the id names none of them."""
    texts = entity_vector_texts(name, description, aliases)
    return next((t for t in texts if entity_vector_id(key, t) == vector_id), texts[0])


def profile_start(name: str, description: str) -> str:
    """The description without empty brackets (a stripped pronunciation "( )") and without the entity's
    name when the description opens with it: the embedded head names the entity already."""
    text = _EMPTY_BRACKETS.sub("", description).strip()
    if name and text.lower().startswith(name.lower()):
        rest = text[len(name):].lstrip(" ,:;-\u2013\u2014")
        if rest:
            return rest
    return text


def whole_words(text: str, max_tokens: int) -> str:
    """``text`` cut to ``max_tokens`` tokens, then to the end of the word the cut fell in ("bad" of "badlands"
    is not embedded alone)."""
    cut = truncate(text, max_tokens)
    if cut == text or not text.startswith(cut):
        return cut
    rest = _WORD_REST.match(text, len(cut))
    return cut + (rest.group(0) if rest else "")


def relation_vector_text(keywords: Sequence[str], source_name: str, target_name: str, description: str) -> str:
    """What is embedded for a relation: keywords and endpoints (+ the start of its profile if RELATION_PROFILE_TOKENS)."""
    head = f"{', '.join(list(keywords)[:RELATION_KEYWORDS])}\t{source_name}\n{target_name}"
    profile = truncate(description, RELATION_PROFILE_TOKENS) if RELATION_PROFILE_TOKENS else ""
    return f"{head}\n{profile}" if profile else head


def tree_vector_text(text: str) -> str:
    """What is embedded for a summary-tree node: the start of its summary (``TREE_VECTOR_TOKENS``)."""
    return truncate(text, TREE_VECTOR_TOKENS) if TREE_VECTOR_TOKENS else text


def entity_vector_id(key: str, vector_text: str) -> str:
    return _vector_id("ent-", key + "\x00" + vector_text)


def relation_vector_id(source: str, target: str, vector_text: str) -> str:
    return _vector_id("rel-", f"{source}\x00{target}\x00{vector_text}")


def _most_common(values: Sequence[str], skip: str = "") -> str:
    counts = Counter(v for v in values if v and v != skip)
    if not counts:
        return values[0] if values else ""
    best = max(counts.values())
    return next(v for v in values if counts.get(v) == best)


def _vector_id(prefix: str, text: str) -> str:
    return prefix + hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


def _over_budget(fragments: list[str], settings: Settings) -> bool:
    return len(fragments) >= settings.profile_max_fragments or count_tokens(" ".join(fragments)) >= settings.profile_max_tokens


MIN_REPEAT_WORDS = 4  # a shorter repeated piece may be an abbreviation split off by the regex ("Dr.")


def without_repeated_sentences(fragments: list[str]) -> list[str]:
    """The fragments with every sentence already said (earlier in the fragment or in an earlier one) left
    out: two overlapping chunks extract the same sentence twice, "A. B." and "B. C." become "A. B." and
    "C."; a fragment with nothing new is dropped, an unchanged one is kept as it was."""
    seen: set[str] = set()
    out: list[str] = []
    for fragment in fragments:
        pieces = split_sentences(fragment)
        kept = []
        for piece in pieces:
            if piece not in seen or len(piece.split()) < MIN_REPEAT_WORDS:
                kept.append(piece)
            seen.add(piece)
        if kept:
            out.append(fragment if len(kept) == len(pieces) else " ".join(kept))
    return out


def _merge_descriptions(kind: str, name: str, fragments: list[str], settings: Settings,
                        summarizer: Optional[ProfileSummarizer]) -> str:
    unique = without_repeated_sentences(list(dict.fromkeys(f.strip() for f in fragments if f.strip())))
    if summarizer is not None and _over_budget(unique, settings):
        return summarizer(kind, name, unique)
    return merge_fragments(unique, settings.profile_max_fragments, settings.profile_max_tokens,
                           settings.profile_summary_tokens)


def vote_type(fragments: Sequence[EntityFragment], name: str = "") -> tuple[str, dict[str, int]]:
    """The entity type its mentions' labels and its name agree on (``core.extraction.entity_typing``;
    a fragment without votes counts once for its type), and the summed votes. Without a name, the
    mentions' vote alone: UNKNOWN only when nothing else was voted, ties to the type seen first."""
    votes = summed_votes([f.type_votes or {f.type: 1} for f in fragments])
    if not name:
        return mentions_vote(votes), votes
    return vote_with_name(name, votes, [f.description for f in fragments]), votes


def fragment_type(fragments: Sequence[EntityFragment]) -> str:
    """The type ``merge_entity`` gives an entity of these fragments (its name: the most common fragment name)."""
    return vote_type(fragments, _most_common([f.name for f in fragments]))[0]


def embedded_aliases(key: str, name: str, fragments: list[EntityFragment]) -> list[str]:
    """The aliases named in an entity's embedded text: merged short forms and acronyms (not case variants)."""
    aliases = dict.fromkeys(a for f in fragments for a in f.aliases if a != name)
    return [a for a in aliases if normalize_name(a) != key]


def merge_entity(key: str, fragments: list[EntityFragment], settings: Settings,
                 summarizer: Optional[ProfileSummarizer] = None) -> MergedEntity:
    name = _most_common([f.name for f in fragments])
    etype, votes = vote_type(fragments, name)
    description = _merge_descriptions("entity", name, [f.description for f in fragments], settings, summarizer)
    sources = list(dict.fromkeys(f.chunk_id for f in fragments))
    aliases = list(dict.fromkeys(a for f in fragments for a in f.aliases if a != name))
    merged_keys = embedded_aliases(key, name, fragments)
    aliases += [f.name for f in fragments if f.name != name and f.name not in aliases]
    vector_text = entity_vector_text(name, description, merged_keys)
    return MergedEntity(key, name, etype, description, sources, vector_text, entity_vector_id(key, vector_text),
                        aliases, votes)


def merge_relation(pair: tuple[str, str], fragments: list[RelationFragment], names: dict[str, str],
                   settings: Settings, summarizer: Optional[ProfileSummarizer] = None) -> MergedRelation:
    source, target = pair
    keywords = list(dict.fromkeys(k for f in fragments for k in f.keywords))
    label = f"{names.get(source, source)} – {names.get(target, target)}"
    description = _merge_descriptions("relation", label, [f.description for f in fragments], settings, summarizer)
    weight = float(sum(f.weight for f in fragments))
    sources = list(dict.fromkeys(f.chunk_id for f in fragments))
    vector_text = relation_vector_text(keywords, names.get(source, source), names.get(target, target), description)
    vector_id = relation_vector_id(source, target, vector_text)
    return MergedRelation(source, target, keywords, description, weight, sources, vector_text, vector_id)
