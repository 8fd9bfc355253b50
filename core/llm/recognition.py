"""HippoRAG 2's recognition-memory filter for the ``ppr`` mode, done by the configured chat model.

HippoRAG 2 retrieves the facts (relations) closest to the question and asks an LLM which of them
matter to it; only the facts it keeps seed the personalised PageRank. ``recognize_facts`` sends the
question and the candidate facts, numbered, as (subject, relation, object) triples and asks (JSON mode)
for ``{"facts": [numbers]}``. A reply that lists the facts as triples instead of numbers is read too
(matched on subject and object, case folded). The kept facts keep their cosine order.

``None`` means "no usable answer" (the call failed, or the reply holds no JSON list of facts): the
``ppr`` mode then applies its offline rule and its trace says why. An empty list is an answer: no fact
is relevant, and the walk restarts from the dense passages alone, as in the paper.

Without a chat model (offline) none of this runs: ``core.retrieval.ppr_seeds`` documents the offline
rule that stands in for it and what it was measured to do."""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from core.llm.client import ChatModel, LLMCancelled, LLMError, Message

log = logging.getLogger("core.llm")

SYSTEM_PROMPT = ("You judge which facts from a knowledge graph help answer a question. "
                 "You reply with one JSON object and nothing else.")
USER_TEMPLATE = """Question: {question}

Candidate facts, numbered, as (subject, relation, object):
{facts}

Which of these facts are needed, or useful as a step, to answer the question? Keep at most {limit}.
Reply as {{"facts": [numbers of the kept facts]}}; reply {{"facts": []}} if none helps."""
MAX_RELATION_CHARS = 80  # a fact's relation text (keywords, else the start of its description)


@dataclass
class Recognition:
    """The filter's verdict: the kept indices (``None`` when the reply was unusable), why, and usage."""

    kept: Optional[list[int]]
    note: str
    usage: dict[str, int] = field(default_factory=lambda: {"llm_calls": 0, "prompt_tokens": 0,
                                                           "completion_tokens": 0})


def fact_lines(facts: Sequence[tuple[str, str, str]]) -> str:
    """The numbered triples of the prompt (one per line, 1-based)."""
    return "\n".join(f"{i}. ({s}, {r[:MAX_RELATION_CHARS]}, {o})" for i, (s, r, o) in enumerate(facts, 1))


def json_object(text: str) -> Optional[dict[str, Any]]:
    """The JSON object of a model's reply (code fences dropped, from its first "{" to its last "}"), or None."""
    body = "\n".join(line for line in (text or "").splitlines() if not line.strip().startswith("```"))
    start, end = body.find("{"), body.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        data = json.loads(body[start:end + 1])
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def parse_kept(text: str, facts: Sequence[tuple[str, str, str]]) -> Optional[list[int]]:
    """The 0-based indices of ``facts`` the reply keeps, in the facts' order; None when the reply holds
    no JSON list under "facts" (or "fact"). Numbers out of range and unknown triples are ignored."""
    data = json_object(text)
    if data is None:
        return None
    listed = next((data[k] for k in ("facts", "fact", "kept") if k in data), None)
    if not isinstance(listed, list):
        return None
    by_pair = {(s.casefold().strip(), o.casefold().strip()): i for i, (s, _, o) in enumerate(facts)}
    kept: set[int] = set()
    for item in listed:
        if isinstance(item, bool):
            continue
        if isinstance(item, (int, float)) or (isinstance(item, str) and item.strip().isdigit()):
            number = int(float(item))
            if 1 <= number <= len(facts):
                kept.add(number - 1)
        elif isinstance(item, (list, tuple)) and len(item) >= 2:
            subject, obj = str(item[0]).casefold().strip(), str(item[-1]).casefold().strip()
            found = by_pair.get((subject, obj), by_pair.get((obj, subject)))
            if found is not None:
                kept.add(found)
    return sorted(kept)


def recognize_facts(chat: ChatModel, question: str, facts: Sequence[tuple[str, str, str]], limit: int,
                    max_tokens: int = 120) -> Recognition:
    """Ask ``chat`` which of ``facts`` (subject, relation, object) matter to ``question`` (at most
    ``limit`` kept; extra ones are dropped from the end)."""
    if not facts:
        return Recognition([], "no candidate fact")
    messages: list[Message] = [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": USER_TEMPLATE.format(question=question.strip(), facts=fact_lines(facts),
                                                         limit=limit)}]
    try:
        reply = chat.complete(messages, stage="recognition", json_mode=True, max_tokens=max_tokens)
    except LLMCancelled:
        raise
    except LLMError as exc:
        log.info("recognition filter call failed: %s", exc)
        return Recognition(None, f"the recognition call failed ({exc})")
    usage = {"llm_calls": 0 if reply.cached else 1, "prompt_tokens": 0 if reply.cached else reply.prompt_tokens,
             "completion_tokens": 0 if reply.cached else reply.completion_tokens}
    kept = parse_kept(reply.text, facts)
    if kept is None:
        return Recognition(None, "the model's reply held no JSON list of facts", usage)
    return Recognition(kept[:limit], f"the LLM kept {min(len(kept), limit)} of {len(facts)} facts", usage)
