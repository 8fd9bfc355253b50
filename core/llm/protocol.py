"""The chat-model protocol of RAGScope: ``Message``, ``Completion``, ``ChatModel`` and ``ChatStream``
(re-exported by ``core.llm.client``, where the OpenAI-compatible implementation lives)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Protocol, Sequence

Message = dict[str, str]


@dataclass
class Completion:
    """One chat completion: text, token usage, whether it came from the cache, why it stopped."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False
    finish_reason: str = ""


class ChatModel(Protocol):
    """What RAGScope asks of a chat model."""

    model: str

    def complete(self, messages: Sequence[Message], *, stage: str, json_mode: bool = False,
                 max_tokens: Optional[int] = None) -> Completion:
        ...


class ChatStream:
    """An iterator of text pieces; ``completion`` is set once the stream is exhausted."""

    def __init__(self, pieces: Iterator[str], finish: Callable[[str], Completion]) -> None:
        self._pieces = pieces
        self._finish = finish
        self._parts: list[str] = []
        self.completion: Optional[Completion] = None

    def __iter__(self) -> "ChatStream":
        return self

    def __next__(self) -> str:
        try:
            piece = next(self._pieces)
        except StopIteration:
            if self.completion is None:
                self.completion = self._finish("".join(self._parts))
            raise
        self._parts.append(piece)
        return piece
