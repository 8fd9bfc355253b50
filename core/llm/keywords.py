"""LightRAG's dual-level query keywords from an LLM, with the offline extractor as fallback.

The model is asked (JSON mode) for ``{"high_level_keywords": [...], "low_level_keywords": [...]}``.
The reply is read tolerantly (code fences, prose around the object, alternative key names, a
comma-separated string instead of a list). When it is not valid JSON, holds no keyword, or the
call fails, the offline spaCy keywords are used and ``last_source``/``last_note`` say so, for the
trace. ``last_usage`` reports the calls and tokens of the last question.
"""
from __future__ import annotations

import logging
import re
from typing import Any, Optional, Sequence

from core.llm.client import ChatModel, LLMCancelled, LLMError, Message
from core.llm.recognition import Recognition, json_object, recognize_facts

log = logging.getLogger("core.llm")

SYSTEM_PROMPT = "You pick search keywords for questions. You reply with one JSON object and nothing else."
USER_TEMPLATE = """Give the search keywords of the question below as a JSON object with two lists:
"high_level_keywords": broad themes, concepts or topics the question is about;
"low_level_keywords": specific names, entities, objects, places or terms it mentions.
Use short phrases taken from or implied by the question.

Example: for "How did the merger of Acme and Globex affect jobs in Ohio?" reply
{{"high_level_keywords": ["corporate merger", "employment impact"], "low_level_keywords": ["Acme", "Globex", "Ohio", "jobs"]}}

Question: {question}"""

# Keywords of the prompt's example: a weak model copies them; they are dropped unless the question uses them.
EXAMPLE_KEYWORDS = frozenset({"corporate merger", "employment impact", "acme", "globex", "ohio", "jobs"})

_HIGH = ("high_level_keywords", "high_level", "high", "highlevelkeywords", "high-level keywords", "themes")
_LOW = ("low_level_keywords", "low_level", "low", "lowlevelkeywords", "low-level keywords", "entities")


def _as_list(value: Any) -> list[str]:
    if isinstance(value, str):
        value = re.split(r"[,;\n]", value)
    if not isinstance(value, list):
        return []
    out = [str(v).strip().strip("\"'").strip() for v in value if isinstance(v, (str, int, float))]
    return list(dict.fromkeys(v for v in out if v and len(v) <= 100))[:20]


def parse_keywords(text: str) -> Optional[tuple[list[str], list[str]]]:
    """(low, high) from a reply, or None when it holds no JSON object with keyword lists."""
    data = json_object(text)
    if data is None:
        return None
    keys = {re.sub(r"\s+", " ", str(k)).strip().lower(): v for k, v in data.items()}
    high = next((_as_list(keys[k]) for k in _HIGH if k in keys), None)
    low = next((_as_list(keys[k]) for k in _LOW if k in keys), None)
    if high is None and low is None:
        return None
    return low or [], high or []


class LLMKeywords:
    """``KeywordExtractor`` (see ``core.retrieval.query``) asking the chat model for JSON keywords."""

    def __init__(self, chat: ChatModel, max_tokens: int = 200) -> None:
        self.chat = chat
        self.name = f"llm:{chat.model}"
        self.max_tokens = max_tokens
        self.last_usage: dict[str, int] = {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self.last_source = ""  # "llm" or "offline fallback"
        self.last_note = ""  # why the fallback was used
        self.last_reply = ""

    def extract(self, question: str) -> tuple[list[str], list[str]]:
        """(low-level, high-level) keywords of ``question``."""
        self.last_usage = {"llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
        self.last_reply = ""
        messages: list[Message] = [{"role": "system", "content": SYSTEM_PROMPT},
                                   {"role": "user", "content": USER_TEMPLATE.format(question=question.strip())}]
        try:
            reply = self.chat.complete(messages, stage="keywords", json_mode=True, max_tokens=self.max_tokens)
        except LLMCancelled:
            raise
        except LLMError as exc:
            return self._fallback(question, f"the keyword call failed ({exc})")
        if not reply.cached:
            self.last_usage = {"llm_calls": 1, "prompt_tokens": reply.prompt_tokens,
                               "completion_tokens": reply.completion_tokens}
        self.last_reply = reply.text
        parsed = parse_keywords(reply.text)
        if parsed is None:
            return self._fallback(question, "the model's reply was not valid JSON with keyword lists")
        asked = question.lower()
        low, high = ([k for k in keys if k.lower() not in EXAMPLE_KEYWORDS or k.lower() in asked] for keys in parsed)
        if not low and not high:
            copied = any(parsed)
            return self._fallback(question, "the model only repeated the prompt's example" if copied
                                  else "the model returned no keywords")
        self.last_source, self.last_note = "llm", ""
        return low, high

    def recognize_facts(self, question: str, facts: Sequence[tuple[str, str, str]], limit: int) -> Recognition:
        """HippoRAG 2's recognition filter for the ppr mode, asked of this extractor's chat model: the
        LLM configured for the question (``core.llm.recognition``)."""
        return recognize_facts(self.chat, question, facts, limit)

    def _fallback(self, question: str, note: str) -> tuple[list[str], list[str]]:
        from core.extraction.query_terms import offline_keywords

        self.last_source = "offline fallback"
        self.last_note = f"LLM keywords unavailable, offline keywords used: {note}"
        log.info(self.last_note)
        return offline_keywords(question)
