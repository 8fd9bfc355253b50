"""May the first line bold its short answer? A bold is a claim ("this is the answer"): it is shown
only when the chosen sentence says what the question asks, and otherwise the sentence is quoted
without a bold and the answer carries a short note saying why.

``support.checked`` has already kept only a mention of the asked-for type in the asked-for argument of
the question's verb. This module adds the three conditions that its parse cannot see, each a reason
a bold was wrong on the dev sets (``docs/offline-answers.md`` has the measured effect):

1. **The sentence states the question's relation.** It holds at least half of the question's own
   words for its answer — the common words of the main clause, outside the clauses that describe the
   bridge ("How many *turbines make up* the *power station* developed by …") — and, when the question
   has a main verb ("Who *founded* …"), that verb. A sentence that only shares a name with the question
   ("Kim Jong-il's mother … was **Kim Il-sung**'s first wife" for "Who is the wife of Kim Jong-chul?")
   states something else about it.
2. **The sentence picks one candidate.** A sentence naming three or more mentions of the asked-for
   type (the wanted group's first label: PERSON for "who") besides the question's own (a table row, a
   list of members or counts) does not say which of them answers; nearness to a question word is a guess.
3. **The choice is clear.** The chosen sentence scores at least ``CLEAR_MARGIN`` above the best
   candidate with other words (``scoring``'s scale; its own copies under other labels do not count, nor a
   sentence giving the same short answer): when two different sentences are nearly equal, which one holds the
   answer is not known.

Strong evidence overrides checks 3 and the first line's choice: a sentence whose parse shows the claim —
the question's verb with the question's named subject on the other side and the span in the asked-for
side (``support.parse_verified``), or the question's role stated by a copula or apposition about its named
subject (``copular.copular_verified``: "The first principal keeper was **Josiah Harland**") — is bolded
without the margin, and such a lower sentence (within ``PROMOTE_WINDOW`` of the best) is quoted first
when the best cannot carry a bold (``promoted``), also when the last gates (``grounding``) strip the best's
bold (``lifted_past_gates``); a lower sentence those gates would refuse whatever its span costs no parse. A sentence giving the question's role noun other rank
modifiers ("Ruth Harland, the *principal* keeper" for "the *first* keeper") states another role: no bold.
Through the last hop's bridge (``bridge``): a multi-hop question's span keyed to the entity the first hop resolved
to ("North Carolina (**35**)") is quoted first and bolded when nothing above holds; a best sentence that only
states the first hop gives way to the best sentence about its bridge; with no bold, a sentence saying the asked
verb of the question's subject or of the resolved bridge beats one sharing only the verb (``arguments``).
A side of the question's verb described by a person's role noun ("the founding *director* of the Centre") is the
bridge: a bold on that verb stands only when the sentence names whom the evidence says holds the role
(``role_bridge``); a bolded person is named in full, as the mention was keyed at indexing (``full_names``).
Tried and not kept earlier: promoting a lower sentence on checks 1-3 alone (no parse of the claim): it doubled
wrong bolds on the dev sets (docs/offline-answers.md).

The papers answer with an LLM, so their strict setting does not change this: it is RAGScope's answer layer.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Optional, Sequence

from core.answers import arguments, full_names, role_bridge
from core.answers.cache import parsed_once
from core.answers.claim_words import claim_terms, hop_owners, named_role
from core.answers.question import QuestionFrame
from core.answers.scoring import Pick

MAIN_CLAUSE_SHARE = 0.5  # at least half of the question's own words for its answer
MAX_CANDIDATES = 2  # more mentions of the asked-for type than this: a list, no single answer
CLEAR_MARGIN = 0.2  # the best sentence's lead over the next sentence with other words (scoring's scale)
PROMOTE_WINDOW = 2.0  # a lower sentence this close to the best may be quoted first when its parse proves the claim
SAME_ANSWER_AGREES = True  # a close sentence giving the same short answer is no rival for the margin (False: it is)
PROMOTE_TRIES = 4  # at most this many lower sentences are parsed per answer

NOTE_RELATION = "No short answer is bolded: the quoted sentence does not state what the question asks."
NOTE_LIST = "No short answer is bolded: the quoted sentence names several candidates of the asked-for type."
NOTE_CLOSE = "No short answer is bolded: another sentence of the evidence fits the question almost as well."


@dataclass(frozen=True)
class QuestionClaim:
    """What a sentence must state to answer the question: the main clause's own words (stems) and
    the question's main verb (stem; empty when the question has none the parse can read)."""

    main_terms: frozenset[str]
    verb: str
    owners: tuple[frozenset[str], ...] = ()  # names the bridge is reached from (``hop_owners``)
    verb_lemma: str = ""  # the main verb's lemma: a noun of it states it too (``grounding.verb_nouns``)
    role: str = ""  # "the name of Scrooge's little *sister*": the answer's own relation noun (``named_role``)


def question_claim(frame: QuestionFrame, cache: Any = None) -> QuestionClaim:
    """The question's claim, parsed once per question (memoised in the answers' cache)."""
    from core.answers.support import question_relation

    def parse(question: str) -> QuestionClaim:
        from core.answers.support import _parse

        relation = question_relation(question)
        root = next((t for t in _parse(question) if t.dep_ == "ROOT"), None)
        lemma = root.lemma_.lower() if root is not None and root.pos_ == "VERB" else ""
        return QuestionClaim(claim_terms(question), relation.verb if relation else "", hop_owners(question), lemma,
                             named_role(question))

    return parsed_once(cache, "claim", frame.text, parse)


def _candidates(pick: Pick, frame: QuestionFrame, bridges: frozenset[str] = frozenset()) -> int:
    """How many rivals (``bridge.rivals``) the sentence names, the most of any label."""
    from core.answers.bridge import rivals

    return max((len(found) for found in rivals(pick, frame, bridges).values()), default=0)


def _lead(pick: Pick, candidates: Sequence[Pick]) -> float:
    """The pick's lead over the best candidate quoting another sentence (its own copies under other
    labels, or the same words in a duplicated document, do not count; nor, with ``SAME_ANSWER_AGREES``, another
    sentence giving the same short answer: "The university received its charter in 1952" agrees with "The
    University of Dunmore received its charter in **1952**"); negative when promoted."""
    same = {t.lower() for t in pick.typed} if SAME_ANSWER_AGREES else set()
    others = [c.score for c in candidates if c.sentence.text != pick.sentence.text
              and not (same and {t.lower() for t in c.typed} == same)]
    return pick.score - max(others) if others else float("inf")


def _title(pick: Pick) -> frozenset[str]:
    """Stems of the sentence's document title: it names the passage's subject ("It is located within the county
    of Cumbria" in *Lake District* states where the district is)."""
    from core.answers.question import sentence_stems
    from core.parsing.titles import work_name

    title = pick.sentence.doc or pick.sentence.cite.rsplit(", ", 1)[0]
    if work_name(title) is not None:
        return frozenset()  # "A Christmas Carol - Stave Two: The First of the Three Spirits" says where, not who
    return sentence_stems(title.replace("_", " "))


def reason(pick: Pick, frame: QuestionFrame, claim: QuestionClaim, cache: Any = None,
           bridges: frozenset[str] = frozenset()) -> str:
    """Why the sentence cannot carry a bold by checks 1 and 2 ("" when it can); a sentence that gives the
    question's role noun only other modifiers ("the *principal* keeper" for "the *first* keeper") states
    another role (``copular.states_another_role``)."""
    from core.answers.copular import states_another_role

    from core.answers.grounding import states_verb_noun
    from core.answers.question import said_stems, stem

    stems = said_stems(pick.sentence.text, pick.sentence.stems)  # "ran" states "run"
    if claim.verb_lemma and states_verb_noun(pick.sentence.text, claim.verb_lemma):
        stems = stems | {stem(claim.verb_lemma)} | ({claim.verb} if claim.verb else set())  # "invasion": "invade"
    if claim.main_terms and len(claim.main_terms & stems) < MAIN_CLAUSE_SHARE * len(claim.main_terms) \
            and len(claim.main_terms & (stems | _title(pick))) < MAIN_CLAUSE_SHARE * len(claim.main_terms):
        return NOTE_RELATION
    if claim.verb and claim.verb not in stems:
        return NOTE_RELATION
    if claim.role and frame.groups and frame.groups[0][0] == "PERSON" and claim.role not in stems | _title(pick):
        return NOTE_RELATION  # "Bob told them of … Scrooge's nephew" does not name Scrooge's sister
    if _candidates(pick, frame, bridges) > MAX_CANDIDATES:
        return NOTE_LIST
    if states_another_role(pick, frame, cache):
        return NOTE_RELATION
    return ""


def _strong(pick: Pick, frame: QuestionFrame, graph: Any, claim: QuestionClaim, cache: Any) -> Optional[Pick]:
    """``pick`` bolded with the span its parse shows in the asked-for side of the question's relation
    about the question's named subject (``support.parse_verified``), or None."""
    from core.answers.copular import copular_verified, kind_verified, nominal_verified
    from core.answers.support import parse_verified

    if reason(pick, frame, claim, cache):
        return None
    verified = (parse_verified(pick, frame, graph, cache) or copular_verified(pick, frame, graph, cache)
                or kind_verified(pick, frame, cache) or nominal_verified(pick, frame, graph, cache))
    return replace(pick, typed=verified) if verified else None


def promoted(best: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, claim: QuestionClaim,
             cache: Any = None) -> Optional[Pick]:
    """A lower sentence (within ``PROMOTE_WINDOW`` of the best, at most ``PROMOTE_TRIES`` parsed) that
    states the question's relation about its named subject with a span of the asked-for type in the
    asked-for place: quoted first and bolded instead of a best sentence that cannot carry a bold."""
    from core.answers.grounding import about_question

    seen = {best.sentence.text}
    tries = 0
    for pick in sorted(candidates, key=lambda c: -c.score):
        if pick.score < best.score - PROMOTE_WINDOW or tries >= PROMOTE_TRIES:
            break
        if pick.sentence.text in seen or reason(pick, frame, claim, cache):
            continue
        seen.add(pick.sentence.text)
        if not about_question(pick, candidates, frame, graph, cache, claim.owners):
            continue  # the last gates would strip its bold whatever its span: no parse spent on it
        tries += 1
        strong = _strong(pick, frame, graph, claim, cache)
        if strong is not None and not _refused(strong, candidates, frame, graph, claim, cache):
            return strong  # a sentence the last gates would strip of its bold is not lifted over the best
    return None


def _refused(pick: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, claim: QuestionClaim,
             cache: Any) -> str:
    from core.answers.grounding import stand_behind

    return stand_behind(pick, candidates, frame, graph, claim.main_terms, cache, claim.owners)


def claimed(best: Optional[Pick], candidates: Sequence[Pick], frame: QuestionFrame, graph: Any,
            cache: Any = None) -> tuple[Optional[Pick], str]:
    """(the first line's pick — the scorer's ``best`` of ``candidates``, or a sentence ``promoted`` over it, or with
    no bold one saying the asked verb of the bridge, ``argued`` — bolded only when it is a clear claim and, for a
    side described by a role noun, about whoever holds it (``role_bridge``); a bolded person named in full
    (``full_names``); the note)."""
    if best is None:
        return best, ""
    first, note = _chosen(best, candidates, frame, graph, cache)
    first, refused = role_bridge.tied(first, candidates, frame, graph, cache)  # about the person the role describes
    return full_names.in_full(first, graph), refused or note


def _chosen(best: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any
            ) -> tuple[Optional[Pick], str]:
    first, note = _first_claim(best, candidates, frame, graph, cache)
    if first is not None and first.typed:
        return first, note
    chosen = arguments.argued(best, candidates, frame, graph, cache)  # the sentence saying the asked verb of the bridge
    if chosen is best or (first is not None and chosen.sentence.text == first.sentence.text):
        return first, note
    return _bolded_if_claimed(chosen, candidates, frame, graph, cache)


def _bolded_if_claimed(pick: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any) -> tuple[Pick, str]:
    """``pick`` bolded when it passes checks 1-2, the argument check and the last gates; else unbolded, with why."""
    from core.answers.bridge import completed
    from core.answers.support import checked

    claim = question_claim(frame, cache)
    refusal = reason(pick, frame, claim, cache) if pick.typed else NOTE_RELATION
    kept = checked(pick, frame, graph, cache) if not refusal else None
    if kept is not None and kept.typed and not _refused(kept, candidates, frame, graph, claim, cache):
        return completed(kept), ""
    return replace(pick, typed=[]), refusal or NOTE_RELATION


def _first_claim(best: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any
                 ) -> tuple[Optional[Pick], str]:
    from core.answers.bridge import second_hop

    pick, note = _claimed(best, candidates, frame, graph, cache)
    if pick is None or not pick.typed:
        hop = second_hop(best, candidates, frame, graph, cache)
        if hop is None:
            return pick, note
        pick, note = _next_hop_claim(hop, candidates, frame, graph, cache)
    first, note = _stood_behind(pick, candidates, frame, graph, cache, note)
    if pick is not None and pick.typed and first is not None and not first.typed:  # the last gates refused it
        lifted = lifted_past_gates(best, candidates, frame, graph, cache)
        return (lifted, "") if lifted is not None else (first, note)
    return first, note


def lifted_past_gates(best: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any,
                      cache: Any = None) -> Optional[Pick]:
    """When the last gates strip the bold of the sentence the claim checks chose (about another diocese, not
    the question's), a lower sentence whose parse proves the claim and that the gates let keep its bold
    (``promoted``) is quoted first instead, bolded; None when there is none."""
    from core.answers.bridge import completed

    lifted = promoted(best, candidates, frame, graph, question_claim(frame, cache), cache)
    return completed(lifted) if lifted is not None else None


def _stood_behind(pick: Optional[Pick], candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any,
                  note: str) -> tuple[Optional[Pick], str]:
    """The last gates (``grounding.stand_behind``): a bold whose sentence is not about the question,
    does not state the asked verb, or counts something else is dropped, with the note saying why."""
    if pick is None or not pick.typed:
        return pick, note
    from core.answers.bridge import completed

    refused = _refused(pick, candidates, frame, graph, question_claim(frame, cache), cache)
    return (replace(pick, typed=[]), refused) if refused else (completed(pick), note)


def _next_hop_claim(hop: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any
                    ) -> tuple[Pick, str]:
    """The next hop's sentence quoted first: bolded only when it states the relation (checks 1-2 and the
    argument check) and leads the other sentences that do not state the first hop by the clear margin."""
    from core.answers.bridge import _start, _states_start
    from core.answers.support import checked

    names, _ = _start(frame, cache)
    note = reason(hop, frame, question_claim(frame, cache), cache) if hop.typed else ""
    if hop.typed and not note:
        kept = checked(hop, frame, graph, cache) or hop
        rivals = [c for c in candidates if not _states_start(c, names)]
        if kept.typed and _lead(hop, rivals) >= CLEAR_MARGIN:
            return kept, ""
        note = NOTE_RELATION if not kept.typed else NOTE_CLOSE
    return (replace(hop, typed=[]), note) if hop.typed else (hop, "")


def _claimed(best: Pick, candidates: Sequence[Pick], frame: QuestionFrame, graph: Any, cache: Any = None
             ) -> tuple[Optional[Pick], str]:
    from core.answers.bridge import keyed
    from core.answers.support import checked

    claim = question_claim(frame, cache)
    if best.typed:
        note = reason(best, frame, claim, cache)
        if note == NOTE_LIST:
            from core.answers.bridge import beside_bridges

            one, bridges = beside_bridges(best, candidates, frame, graph, cache)
            if one is not None and not reason(one, frame, claim, cache, bridges):
                best, note = one, ""
        if not note:
            kept = checked(best, frame, graph, cache) or best
            if kept.typed and _lead(best, candidates) >= CLEAR_MARGIN:
                return kept, ""
            strong = _strong(best, frame, graph, claim, cache)
            if strong is not None:
                return strong, ""  # the parse shows the relation about the subject: no margin needed
            note = NOTE_RELATION if not kept.typed else NOTE_CLOSE
    else:
        note = ""  # nothing of the asked-for type to bold: nothing to explain unless a lower sentence has it
    lifted = promoted(best, candidates, frame, graph, claim, cache)
    if lifted is not None:
        return lifted, ""
    through = keyed(best, candidates, frame, graph, cache, claim.main_terms)  # a span keyed to the last hop's bridge
    if through is not None:
        return through, ""
    return (replace(best, typed=[]), note) if best.typed else (best, "")
