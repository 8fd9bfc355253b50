"""The stand-in LLM: answers LightRAG's own indexing prompts deterministically, in LightRAG's record format
(``entity<|#|>name<|#|>type<|#|>description``, ``relation<|#|>source<|#|>target<|#|>keywords<|#|>description``,
then ``<|COMPLETE|>``), from the chunk it reads out of the prompt. Names: the fixture gazetteer, else
capitalised runs."""
from __future__ import annotations

import json
import re
from typing import Any, Optional

from lightrag_fixtures.corpus import STOP

TUPLE, COMPLETE = "<|#|>", "<|COMPLETE|>"
CAPITALISED = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:of\s+|the\s+)?[A-Z][a-z]+)*\b")
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def find_names(text: str, gazetteer: Optional[dict[str, str]]) -> list[tuple[int, str, str]]:
    """(offset, name, type) of the names in ``text``: gazetteer names (longest first, no overlaps), else
    capitalised runs that are not sentence-initial function words."""
    found: list[tuple[int, str, str]] = []
    taken: list[tuple[int, int]] = []
    if gazetteer:
        for name in sorted(gazetteer, key=len, reverse=True):
            for m in re.finditer(r"\b" + re.escape(name) + r"\b", text):
                if all(m.end() <= a or m.start() >= b for a, b in taken):
                    taken.append((m.start(), m.end()))
                    found.append((m.start(), name, gazetteer[name]))
    else:
        for m in CAPITALISED.finditer(text):
            name = m.group(0)
            if name.lower() in STOP or len(name) < 3:
                continue
            kind = "organization" if re.search(r"(University|Company|Club|Party|Records|Band|Council)$", name) \
                else "concept"
            found.append((m.start(), name, kind))
    return sorted(found)


def extraction_answer(chunk: str, gazetteer: Optional[dict[str, str]], max_entities: int, max_rows: int) -> str:
    """LightRAG's record format for one chunk: entities (first sentence naming each as description), then
    a relation for each pair named in one sentence (keywords: the content words between them)."""
    sentences = [" ".join(s.split()) for s in SENTENCE.split(chunk) if s.strip()]
    entities: dict[str, tuple[str, str]] = {}
    relations: dict[tuple[str, str], tuple[str, str]] = {}
    for sentence in sentences:
        names = find_names(sentence, gazetteer)
        for _, name, kind in names:
            if name not in entities and len(entities) < max_entities:
                entities[name] = (kind, sentence)
        for i, (pos_a, a, _) in enumerate(names):
            for pos_b, b, _ in names[i + 1:]:
                if a == b or a not in entities or b not in entities or (a, b) in relations or (b, a) in relations:
                    continue
                between = re.findall(r"[a-z]+", sentence[pos_a + len(a):pos_b].lower())
                words = [w for w in between if w not in STOP][:3] or ["related"]
                relations[(a, b)] = (", ".join(words), sentence)
    rows = [TUPLE.join(["entity", n, k, d]) for n, (k, d) in entities.items()]
    rows += [TUPLE.join(["relation", a, b, kw, d]) for (a, b), (kw, d) in relations.items()]
    return "\n".join(rows[:max_rows] + [COMPLETE])


class StandInLLM:
    """Answers LightRAG's indexing prompts deterministically; any other prompt is an error."""

    def __init__(self, gazetteer: Optional[dict[str, str]]) -> None:
        self.gazetteer = gazetteer
        self.calls: dict[str, int] = {"extraction": 0, "gleaning": 0, "summary": 0}

    async def __call__(self, prompt: str, system_prompt: Optional[str] = None, history_messages: Any = None,
                       **_: Any) -> str:
        text = str(prompt)
        if "---Task---\nExtract entities and relationships" in text:
            self.calls["extraction"] += 1
            body = text.split("---Input Text---\n```\n", 1)[1].rsplit("\n```", 1)[0]
            limits = re.search(r"at most (\d+) total rows and at most (\d+) entity rows", text)
            rows, ents = (int(limits.group(1)), int(limits.group(2))) if limits else (100, 40)
            return extraction_answer(body, self.gazetteer, ents, rows)
        if "Based on the last extraction task" in text:
            self.calls["gleaning"] += 1
            return COMPLETE
        if "synthesize a list of descriptions" in text:
            self.calls["summary"] += 1
            name = re.search(r"Name: (.*)", text)
            listed = text.split("Description List:", 1)[1]
            parts = [json.loads(line).get("description", "") for line in listed.splitlines()
                     if line.strip().startswith("{")]
            head = (name.group(1).strip() + ": ") if name else ""
            return head + " ".join(parts[:2])
        raise RuntimeError(f"the stand-in LLM got a prompt it does not answer: {text[:120]!r}")

