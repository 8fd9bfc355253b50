"""A scored candidate sentence for the answer tests: text, typed mentions and short answers, in one call."""
from __future__ import annotations

from core.answers.question import sentence_stems
from core.answers.scoring import Pick
from core.answers.sentences import Sentence


def doc_pick(text: str, mentions: list[tuple[str, str, str]], typed: list[str], score: float, doc: str,
             refers_to: str = "") -> Pick:
    """A chunk sentence of document ``doc`` (chunk id ``c-<doc>``) naming ``mentions`` ((label, surface, key)),
    with ``typed`` as its short-answer spans; ``refers_to`` is the entity its opening pronoun stands for."""
    keys = frozenset(key for _, _, key in mentions if key) | ({refers_to} if refers_to else frozenset())
    sentence = Sentence(text, "c-" + doc, 0, f"{doc}, chunk 1", mentions, keys, sentence_stems(text),
                        refers_to=refers_to, doc=doc)
    return Pick(sentence, score, "chunk", "chunk #1", typed)
