"""With an LLM, the generated answer's bold short answer must be stated by a passage it cites
(core.llm.answer_check); otherwise the answer carries a note, which the page shows. Checked through the
OpenAI-compatible stand-in server of the tests (tests/fake_openai.py), streamed and not."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_openai import FakeOpenAI, fresh_fake_openai  # noqa: E402

from core.llm.answer_check import NOT_CITED, NOT_STATED, short_answers, support_note  # noqa: E402
from core.types import ChunkHit, RetrievalResult  # noqa: E402

KEEPER = "The first principal keeper was Josiah Harland (1831\u20131904), a former ship's carpenter."
FLOOD = "The warning came from Ruth Harland, the principal keeper, who noticed the rising sea."


def _result() -> RetrievalResult:
    hits = []
    for order, (doc, text) in enumerate([("lighthouse.md", KEEPER), ("flood.md", FLOOD)]):
        hit = ChunkHit.make(f"c{order}", 1.0, "test")
        hit.doc_name, hit.order, hit.text = doc, 0, text
        hits.append(hit)
    return RetrievalResult(mode="naive", query="Who was the first keeper of Kestrel Point Lighthouse?", chunks=hits,
                           context_text=KEEPER + "\n" + FLOOD)


@pytest.fixture()
def fake():
    yield from fresh_fake_openai()


def _chat(fake: FakeOpenAI):
    from core.llm.client import OpenAIChat

    return OpenAIChat(fake.url, "fake-model", max_retries=0, timeout_s=5.0)


def test_short_answers_are_the_short_bolds():
    assert short_answers("It was **Josiah Harland**; see **a very long bold phrase of more than six words**.") == [
        "Josiah Harland"]


@pytest.mark.parametrize("reply, expected", [
    ("The first keeper was **Josiah Harland** [lighthouse.md, chunk 1].", ""),
    ("The first keeper was **Ruth Harland** [lighthouse.md, chunk 1].", NOT_STATED.format(spans='"Ruth Harland"')),
    ("The first keeper was **Ruth Harland** [flood.md, chunk 1].", ""),  # stated there (as another role: not judged)
    ("The first keeper was **Josiah Harland**.", NOT_CITED.format(spans='"Josiah Harland"')),
    ("The context names Josiah Harland [lighthouse.md, chunk 1].", ""),  # no bold: no short answer claimed
])
def test_a_generated_bold_must_be_stated_by_a_cited_passage(fake, reply, expected):
    from core.llm.generated_answers import generate_answer, stream_answer

    fake.reply = reply
    answer = generate_answer(_chat(fake), _result())
    assert answer.kind == "llm" and answer.text == reply and answer.note == expected
    streamed = _result()
    assert "".join(stream_answer(_chat(fake), streamed)) == reply
    assert streamed.answer is not None and streamed.answer.note == expected


def test_the_check_reads_the_cited_passage_not_the_whole_context(monkeypatch):
    """The guard: with the check replaced by one over the whole context, the wrongly cited bold passes."""
    import core.llm.answer_check as check

    text = "The first keeper was **Ruth Harland** [lighthouse.md, chunk 1]."
    assert support_note(_result(), text)
    monkeypatch.setattr(check, "cited_chunks", lambda text, chunks: list(chunks))
    assert support_note(_result(), text) == ""


def test_a_page_citation_names_the_chunks_on_that_page():
    hit = ChunkHit.make("p", 1.0, "test")
    hit.doc_name, hit.order, hit.page_start, hit.page_end, hit.text = "report.pdf", 3, 4, 5, KEEPER
    result = RetrievalResult(mode="naive", query="q", chunks=[hit])
    assert support_note(result, "**Josiah Harland** [report.pdf, p. 5]") == ""
    assert support_note(result, "**Josiah Harland** [report.pdf, p. 9]") == NOT_STATED.format(spans='"Josiah Harland"')
