"""The text of an extractive answer: the single best sentence first, then the mode's evidence lines.

Line 1 is the best sentence with its wanted-type entities bolded (Markdown ``**…**``: the short
answer) and its citation ``[document, chunk n]``. Every further line starts with ``- `` and a label
saying what the mode made of it, in the mode's own order::

    In 2019 Brightwater was acquired by **Stellan Industries** for **48 million euros**. [brightwater.md, chunk 2]
    - bridge Ilse Marren → Brightwater Robotics: Brightwater Robotics was founded in 2011 by … [brightwater.md, chunk 1]
    - about Brightwater Robotics: … [brightwater.md, chunk 2]
    - path #1: Ilse Marren —[… [brightwater.md, chunk 1]]→ Brightwater Robotics —[… [… chunk 2]]→ Stellan Industries

When the short answer is an entity the sentence only refers to ("Since 1985 the festival …"), its
name comes first in bold ("**Lantern Tide Festival** — Since 1985 the festival …"). The text is plain
text with those bold markers only; the app escapes everything else before rendering it
(``ui.results_view``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from core.answers.scoring import Pick

EMPTY = "No answer: the retrieved context is empty."


@dataclass
class Entry:
    """One evidence line: its text (without the leading "- ") and the sentences it quotes."""

    text: str
    sentences: set[tuple[str, int]] = field(default_factory=set)  # (chunk id, ord); chains add a marker
    texts: set[str] = field(default_factory=set)  # the quoted sentences' texts (for sentence lines)
    pick: Optional[Pick] = None  # the scored sentence a sentence line quotes (None for a chain of a path)


def quoted(pick: Pick) -> str:
    """A sentence with its citation."""
    return f"{pick.sentence.text} [{pick.sentence.cite}]"


def sentence_entry(pick: Pick) -> Entry:
    """A labelled sentence line."""
    return Entry(f"{pick.label}: {quoted(pick)}", {(pick.sentence.chunk_id, pick.sentence.ord)},
                 {pick.sentence.text}, pick)


def bolded(text: str, surfaces: list[str]) -> str:
    """``text`` with the first occurrence of each surface wrapped in ``**`` (overlaps skipped)."""
    spans: list[tuple[int, int]] = []
    lowered = text.lower()
    for surface in surfaces:
        start = lowered.find(surface.lower())
        if start < 0 or not surface.strip():
            continue
        end = start + len(surface)
        if any(start < e and s < end for s, e in spans):
            continue
        spans.append((start, end))
    out = text
    for start, end in sorted(spans, reverse=True):
        out = out[:start] + "**" + out[start:end].strip() + "**" + out[end:]
    return out


def bold_surfaces(pick: Pick) -> list[str]:
    """The short answers ``first_line`` wraps in ``**`` (as written there), so that a reader of the line can
    tell them from a ``**`` the quoted document wrote itself."""
    lowered = pick.sentence.text.lower()
    shown = []
    for surface in pick.typed:
        if not surface.strip():
            continue
        at = lowered.find(surface.lower())
        shown.append(surface if at < 0 else pick.sentence.text[at:at + len(surface)].strip())
    return shown


def first_line(pick: Pick) -> str:
    """The best sentence, short answer bolded, with its citation. A short answer the sentence only
    refers to ("Since 1985 *the festival* has been …") is named in bold before it."""
    lowered = pick.sentence.text.lower()
    unspelt = [s for s in pick.typed if s.lower() not in lowered]
    head = "".join(f"**{s}** — " for s in unspelt)
    return f"{head}{bolded(pick.sentence.text, pick.typed)} [{pick.sentence.cite}]"


def compose(first: Optional[Pick], entries: list[Entry], lines: int) -> str:
    """The answer text: the first line, then up to ``lines - 1`` evidence lines, skipping a sentence
    line that quotes a sentence already shown (the same sentence under another label, or the same text
    from a duplicated document)."""
    if first is None:
        if not entries:
            return EMPTY
        return "\n".join("- " + e.text for e in entries[:lines])
    shown: set[tuple[str, int]] = {(first.sentence.chunk_id, first.sentence.ord)}
    texts: set[str] = {first.sentence.text}
    rest: list[str] = []
    for entry in entries:
        if len(rest) >= lines - 1:
            break
        quoted_texts = entry.texts or set()
        if entry.sentences and (entry.sentences <= shown or (quoted_texts and quoted_texts <= texts)):
            continue  # a sentence already quoted (possibly under another label or from a copy)
        shown |= entry.sentences
        texts |= quoted_texts
        rest.append("- " + entry.text)
    return "\n".join([first_line(first)] + rest)
