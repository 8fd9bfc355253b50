"""Generated answers from a retrieval mode's rendered context (``RetrievalResult.context_text``).

Every mode gets the same short system prompt; the mode's ``ModeSpec.llm_answer`` builds the user
message. The path mode's context is already a complete prompt (the question first, then the paths
from least to most reliable), so it is sent as it is (``context_is_prompt``); for the other modes
the context comes first and the question last (``context_then_question``). The answer is
``Answer(kind="llm", model=...)`` and the result's ``llm_calls``/``prompt_tokens``/
``completion_tokens`` grow by what the call cost (a cache hit costs nothing). The answer's ``note`` says when it
cites a source not in the context or bolds a short answer no cited passage states (``answer_check``). ``stream_answer``
yields the text as it arrives (for the app) and sets ``result.answer`` when done.
"""
from __future__ import annotations

from typing import Iterator, Optional

from core.citations import Source, unsupported_citations
from core.llm.client import ChatModel, Completion, Message
from core.types import Answer, RetrievalResult

SYSTEM_PROMPT = (
    "You answer questions about the user's documents using only the context provided with the question. "
    "If the context does not contain the answer, say that it does not. Be concise and name the documents, "
    "entities or passages you relied on. Cite each passage you use exactly as the context labels its "
    "source, in square brackets: [document, p. 12] where the source has pages, [document, \u00a7 Section] or "
    "[document, l. 40] where it has sections or lines, else [document, chunk 3]."
)
UNSUPPORTED = "Cites a source that is not in the retrieved context (not checked, do not take it as fact): "
EMPTY_CONTEXT = "The retrieval returned no context for this question, so there is nothing to answer from."


def context_then_question(result: RetrievalResult) -> str:
    """The user message of most modes: the rendered context, then the question."""
    context = (result.context_text or "").strip()
    return f"Context:\n{context}\n\nQuestion: {result.query.strip()}\n\nAnswer:"


def context_is_prompt(result: RetrievalResult) -> str:
    """The user message of a mode whose context is already a complete prompt (path: question first)."""
    return (result.context_text or "").strip()


def answer_messages(result: RetrievalResult) -> list[Message]:
    """The messages sent for ``result``: the mode's ``ModeSpec.llm_answer`` builds the user message
    (a mode that is not registered gets ``context_then_question``)."""
    from core.retrieval.registry import find_spec

    spec = find_spec(result.mode)
    build = spec.llm_builder() if spec is not None else context_then_question
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": build(result)}]


def citation_note(result: RetrievalResult, text: str) -> str:
    """The note an LLM answer carries when it cites a page, chunk or document that none of the
    result's chunks is (``core.citations.unsupported_citations``), or when its bold short answer is
    not stated by a passage it cites (``core.llm.answer_check``), else ""."""
    from core.llm.answer_check import support_note

    sources = [Source(c.doc_name or c.doc_id, c.page_start, c.page_end, c.order, c.section, c.line_start, c.line_end)
               for c in result.chunks]
    bad = unsupported_citations(text, sources)
    notes = [UNSUPPORTED + ", ".join(bad) if bad else "", support_note(result, text)]
    return " ".join(n for n in notes if n)


def _record(result: RetrievalResult, completion: Completion) -> None:
    if completion.cached:
        return
    result.llm_calls += 1
    result.prompt_tokens += completion.prompt_tokens
    result.completion_tokens += completion.completion_tokens


def generate_answer(chat: ChatModel, result: RetrievalResult, max_tokens: Optional[int] = None) -> Answer:
    """Ask ``chat`` for an answer from the result's context."""
    if not (result.context_text or "").strip():
        return Answer(EMPTY_CONTEXT, "llm", chat.model)
    completion = chat.complete(answer_messages(result), stage="answer", max_tokens=max_tokens)
    _record(result, completion)
    text = completion.text.strip()
    return Answer(text, "llm", chat.model, note=citation_note(result, text))


def stream_answer(chat: ChatModel, result: RetrievalResult, max_tokens: Optional[int] = None) -> Iterator[str]:
    """Yield the answer's text as it is generated; ``result.answer`` is set at the end.

    Falls back to one ``complete`` call when the chat model cannot stream.
    """
    if not (result.context_text or "").strip():
        result.answer = Answer(EMPTY_CONTEXT, "llm", chat.model)
        yield EMPTY_CONTEXT
        return
    streamer = getattr(chat, "stream", None)
    if streamer is None:
        result.answer = generate_answer(chat, result, max_tokens)
        yield result.answer.text
        return
    stream = streamer(answer_messages(result), stage="answer", max_tokens=max_tokens)
    parts: list[str] = []
    for piece in stream:
        parts.append(piece)
        yield piece
    completion = stream.completion or Completion("".join(parts))
    _record(result, completion)
    text = "".join(parts).strip()
    result.answer = Answer(text, "llm", chat.model, note=citation_note(result, text))
