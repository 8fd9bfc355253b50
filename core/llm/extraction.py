"""LightRAG-style knowledge-graph extraction with an LLM (prompt wording of our own).

Per chunk: one extraction call asking for entity records (name, type from the configured list,
description) and relation records (source, target, keywords, description, strength), then
``settings.gleaning_passes`` follow-up turns in the same conversation asking for what was missed
(default 1). Replies are read by the forgiving ``core.llm.records.parse_records``; whatever it
drops is kept in ``ChunkExtraction.dropped``. The E2GraphRAG mention graph always comes from
spaCy, so every chunk is also parsed by ``core.extraction.spacy_extract.extract_chunks`` and its
``mentions`` are kept. Chunks run concurrently on a bounded thread pool
(``settings.llm_concurrency``); the first failure cancels the rest and is raised, so the pipeline
fails the document with that reason.
"""
from __future__ import annotations

import logging
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Any, Optional

from core.extraction.names import normalize_name
from core.llm.client import ChatModel, LLMCancelled, Message
from core.llm.records import parse_records
from core.settings import Settings
from core.types import ChunkExtraction, EntityRecord, RelationRecord

log = logging.getLogger("core.llm")

SYSTEM_PROMPT = (
    "You turn text into knowledge-graph records. You reply with records only, one per line, "
    "in exactly the format you are given."
)

INSTRUCTIONS = """Find the named things in a text and the links between them.

Allowed entity types: {types}

Write each record on its own line, with fields separated by " | ":
entity | name as it appears in the text | one allowed type | what the text says about it, in one sentence
relation | name of one entity | name of another entity | a few keywords for the link, comma separated | \
one sentence on how they are linked | strength from 1 (weak) to 10 (strong)

Only write records about the text you are given; keep each name identical every time you use it; both ends of \
a relation must also have an entity record. No numbering, headings or comments. Finish with a line containing \
only END."""

# A worked example, given as a previous turn of the conversation (small models follow it far better
# than a description of the format alone). Records naming these things are dropped when the chunk
# itself does not mention them (copied from the example).
EXAMPLE_TEXT = ("In 1843 Ada Lovelace published notes on the Analytical Engine, a mechanical computer that "
                "Charles Babbage had designed in London. Her notes contained the first program written for it.")
EXAMPLE_NAMES = ("Ada Lovelace", "Charles Babbage", "Analytical Engine", "London")
EXAMPLE = (
    "entity | Ada Lovelace | PERSON | Mathematician who published notes with the first program for the Analytical Engine.\n"
    "entity | Analytical Engine | PRODUCT | A mechanical computer designed by Charles Babbage.\n"
    "entity | Charles Babbage | PERSON | Inventor who designed the Analytical Engine.\n"
    "entity | London | GPE | City where the Analytical Engine was designed.\n"
    "relation | Ada Lovelace | Analytical Engine | programming, publication | Ada Lovelace wrote the first program "
    "for the Analytical Engine. | 9\n"
    "relation | Charles Babbage | Analytical Engine | invention, design | Charles Babbage designed the Analytical "
    "Engine. | 10\n"
    "relation | Charles Babbage | London | location | Babbage designed the engine in London. | 4\n"
    "END"
)

# Repeated after the chunk: with a long chunk, small models otherwise forget the format and paraphrase.
REMINDER = "Now write the entity and relation records for this text, one per line, in the format shown, then END."

GLEAN_PROMPT = ("Some entities and relations in the text were not listed yet. Add only the missing ones, "
                "in the same format, one per line, and finish with END.")


def extraction_messages(text: str, entity_types: list[str]) -> list[Message]:
    """The first turns of the extraction conversation for one chunk (instructions, worked example, text)."""
    instructions = INSTRUCTIONS.format(types=", ".join(entity_types))
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"{instructions}\n\nText:\n{EXAMPLE_TEXT}"},
            {"role": "assistant", "content": EXAMPLE},
            {"role": "user", "content": f"Text:\n{text.strip()}\n\n{REMINDER}"}]


class LLMExtractor:
    """The ``Extractor`` of ``core.indexing.pipeline`` backed by a chat model (name ``llm:<model>``)."""

    def __init__(self, chat: ChatModel, settings: Settings, max_tokens: Optional[int] = None) -> None:
        self.chat = chat
        self.settings = settings
        self.name = f"llm:{chat.model}"
        self.max_tokens = max_tokens or settings.llm_max_tokens
        self.dropped_total = 0  # records dropped by the parser over this extractor's life

    # --- one chunk ---------------------------------------------------------------------------
    def extract_one(self, text: str) -> ChunkExtraction:
        """Extraction + gleaning for one chunk's text (no mention graph)."""
        if not text.strip():
            return ChunkExtraction()
        types = list(self.settings.entity_types)
        messages = extraction_messages(text, types)
        reply = self.chat.complete(messages, stage="extraction", max_tokens=self.max_tokens)
        entities, relations, dropped = self._parse(reply.text, text, "extraction", reply.finish_reason)
        for glean in range(self.settings.gleaning_passes):
            cancel = getattr(self.chat, "cancel_event", None)
            if cancel is not None and cancel.is_set():
                raise LLMCancelled("extraction cancelled")
            messages = messages + [{"role": "assistant", "content": reply.text},
                                   {"role": "user", "content": GLEAN_PROMPT}]
            reply = self.chat.complete(messages, stage="gleaning", max_tokens=self.max_tokens)
            more_e, more_r, more_d = self._parse(reply.text, text, f"gleaning {glean + 1}", reply.finish_reason)
            added = _add_new(entities, relations, more_e, more_r)
            dropped += more_d
            if not added:
                break
        return ChunkExtraction(entities=entities, relations=relations, dropped=dropped)

    def _parse(self, reply: str, text: str, label: str, finish_reason: str = ""
               ) -> tuple[list[EntityRecord], list[RelationRecord], list[str]]:
        entities, relations, dropped = parse_records(reply, self.settings.entity_types)
        absent = {normalize_name(n) for n in EXAMPLE_NAMES if n.lower() not in text.lower()}
        if any(normalize_name(e.name) in absent for e in entities) or any(
                normalize_name(r.source) in absent or normalize_name(r.target) in absent for r in relations):
            dropped += [f"entity copied from the prompt's example: {e.name}" for e in entities
                        if normalize_name(e.name) in absent]
            dropped += [f"relation copied from the prompt's example: {r.source} – {r.target}" for r in relations
                        if normalize_name(r.source) in absent or normalize_name(r.target) in absent]
            entities = [e for e in entities if normalize_name(e.name) not in absent]
            relations = [r for r in relations
                         if normalize_name(r.source) not in absent and normalize_name(r.target) not in absent]
        if finish_reason == "length":
            dropped.append("reply cut at the token limit (Settings → max tokens); its last line may be lost")
        self.dropped_total += len(dropped)
        return entities, relations, [f"{label}: {d}" for d in dropped]

    # --- Extractor protocol ----------------------------------------------------------------
    def extract(self, texts: list[str], titles: Optional[list[Optional[str]]] = None) -> list[ChunkExtraction]:
        """One ``ChunkExtraction`` per text: LLM entities/relations + spaCy mentions and sentence
        records, in order."""
        from core.extraction.spacy_extract import extract_chunks

        if not texts:
            return []
        workers = max(1, min(self.settings.llm_concurrency, len(texts)))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm-extract")
        try:
            futures = [pool.submit(self.extract_one, t) for t in texts]
            spacy_results = extract_chunks(texts, list(self.settings.entity_types),  # meanwhile, on this thread
                                           titles=titles)
            done, not_done = wait(futures, return_when=FIRST_EXCEPTION)
            failed = next((f for f in futures if f.done() and f.exception() is not None), None)
            if failed is not None:
                for future in not_done:
                    future.cancel()
                raise failed.exception()  # type: ignore[misc]
            llm_results = [f.result() for f in futures]
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        out = []
        for llm, parsed in zip(llm_results, spacy_results):
            llm.mentions = parsed.mentions
            llm.sentences = parsed.sentences
            llm.dropped = [d for d in parsed.dropped] + llm.dropped
            out.append(llm)
        return out


def _add_new(entities: list[EntityRecord], relations: list[RelationRecord], more_e: list[EntityRecord],
             more_r: list[RelationRecord]) -> int:
    """Append records whose key is new; return how many were added."""
    known_e = {normalize_name(e.name) for e in entities}
    known_r = {tuple(sorted((normalize_name(r.source), normalize_name(r.target)))) for r in relations}
    added = 0
    for e in more_e:
        key = normalize_name(e.name)
        if key not in known_e:
            known_e.add(key)
            entities.append(e)
            added += 1
    for r in more_r:
        pair = tuple(sorted((normalize_name(r.source), normalize_name(r.target))))
        if pair not in known_r:
            known_r.add(pair)
            relations.append(r)
            added += 1
    return added


def describe_dropped(extractions: list[ChunkExtraction]) -> dict[str, Any]:
    """A small summary of what the parser dropped (for logs and reports)."""
    reasons: dict[str, int] = {}
    for ex in extractions:
        for item in ex.dropped:
            reason = item.split(":", 2)[1].strip() if item.count(":") >= 2 else item
            reasons[reason] = reasons.get(reason, 0) + 1
    return {"chunks": len(extractions), "dropped": sum(reasons.values()), "reasons": reasons}
