"""LLM summaries for the index: merged entity/relation profiles and summary-tree nodes.

* ``llm_profile_summarizer(chat, settings)`` → ``(kind, name, fragments) -> str`` for
  ``core.indexing.profiles``: called when a profile is over budget (≥ ``profile_max_fragments`` fragments or
  ≥ ``profile_max_tokens`` tokens). Map-reduce: fragments are packed into groups that fit
  ``profile_max_tokens``, each group is summarised, and the partial summaries are reduced the same
  way until one summary of about ``profile_summary_tokens`` remains.
* ``llm_tree_summarizer(chat, settings)`` → ``texts -> str`` for ``core.indexing.tree``: one summary of
  the g children of a summary-tree node, about ``summary_tokens`` long.

An empty reply falls back to the extractive result, so a weak model never leaves a blank profile.
"""
from __future__ import annotations

import re
from typing import Callable

from core.llm.client import ChatModel, Message
from core.settings import Settings
from core.tokens import count_tokens, truncate

MAX_REDUCE_ROUNDS = 4

PROFILE_SYSTEM = "You merge notes about one subject into a single factual description. You reply with the description only."
PROFILE_TEMPLATE = """Subject ({kind}): {name}

Notes collected from different passages:
{notes}

Write one description of the subject in the third person that keeps every distinct fact from the notes, \
drops repetitions and mentions the subject by name. At most about {words} words. Reply with the description only."""

TREE_SYSTEM = "You write faithful, compact summaries of documents. You reply with the summary only."
TREE_TEMPLATE = """Summarise the {count} consecutive passage(s) below in about {words} words. Keep the names of \
people, organisations, places and events, the key facts and their order. Do not add anything that is not in the \
passages. Reply with the summary only.

{passages}"""

_PREFIX = re.compile(r"^\s*(?:#+\s*)?(?:summary|description)\s*:\s*", re.I)


def clean_reply(text: str) -> str:
    """Strip fences, a leading 'Summary:' label and surrounding whitespace."""
    lines = [line for line in (text or "").splitlines() if not line.strip().startswith("```")]
    return _PREFIX.sub("", "\n".join(lines)).strip()


def _words(tokens: int) -> int:
    return max(20, int(tokens * 0.75))


def _reply_budget(settings: Settings, target_tokens: int) -> int:
    return max(32, min(settings.llm_max_tokens, int(target_tokens * 1.5) + 32))


def pack_groups(fragments: list[str], max_tokens: int) -> list[list[str]]:
    """Consecutive groups whose joined size stays within ``max_tokens`` (a lone long fragment is cut)."""
    groups: list[list[str]] = []
    current: list[str] = []
    used = 0
    for fragment in fragments:
        cost = count_tokens(fragment)
        if cost > max_tokens:
            fragment, cost = truncate(fragment, max_tokens), max_tokens
        if current and used + cost > max_tokens:
            groups.append(current)
            current, used = [], 0
        current.append(fragment)
        used += cost
    if current:
        groups.append(current)
    return groups


def llm_profile_summarizer(chat: ChatModel, settings: Settings) -> Callable[[str, str, list[str]], str]:
    """The ``ProfileSummarizer`` of ``core.indexing.profiles`` backed by ``chat`` (stage 'summaries')."""
    target = settings.profile_summary_tokens
    max_tokens = _reply_budget(settings, target)

    def one(kind: str, name: str, fragments: list[str]) -> str:
        notes = "\n".join(f"- {f}" for f in fragments)
        messages: list[Message] = [
            {"role": "system", "content": PROFILE_SYSTEM},
            {"role": "user", "content": PROFILE_TEMPLATE.format(kind=kind, name=name, notes=notes,
                                                                 words=_words(target))}]
        return clean_reply(chat.complete(messages, stage="summaries", max_tokens=max_tokens).text)

    def summarize(kind: str, name: str, fragments: list[str]) -> str:
        from core.indexing.summarize import merge_fragments

        current = [f.strip() for f in fragments if f and f.strip()]
        if not current:
            return ""
        for _ in range(MAX_REDUCE_ROUNDS):
            groups = pack_groups(current, settings.profile_max_tokens)
            partials = [one(kind, name, group) or merge_fragments(
                group, settings.profile_max_fragments, settings.profile_max_tokens, target) for group in groups]
            if len(partials) == 1:
                return partials[0]
            current = partials
        return merge_fragments(current, settings.profile_max_fragments, settings.profile_max_tokens, target)

    return summarize


def llm_tree_summarizer(chat: ChatModel, settings: Settings) -> Callable[[list[str]], str]:
    """The summary-tree ``Summarizer`` of ``core.indexing.tree`` backed by ``chat`` (stage 'summaries')."""
    target = settings.summary_tokens
    max_tokens = _reply_budget(settings, target)

    def summarize(texts: list[str]) -> str:
        parts = [t.strip() for t in texts if t and t.strip()]
        if not parts:
            return ""
        passages = "\n\n".join(f"[Passage {i + 1}]\n{t}" for i, t in enumerate(parts))
        messages: list[Message] = [
            {"role": "system", "content": TREE_SYSTEM},
            {"role": "user", "content": TREE_TEMPLATE.format(count=len(parts), words=_words(target),
                                                              passages=passages)}]
        text = clean_reply(chat.complete(messages, stage="summaries", max_tokens=max_tokens).text)
        return text or truncate(" ".join(parts), target)

    return summarize
