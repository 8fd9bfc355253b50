"""Passage titles of a JSONL corpus: a subject's name, or a label of the passage's place in a book.

A corpus in the shared package format gives each passage a ``title``. In an encyclopedic corpus the title
names the passage's subject ("Peter Bonetti", "Cross-country skiing at the 2006 Winter Olympics – Women's
team sprint"): it is indexed with the text ("title\\ntext"), so that it is searchable and names the
document's main entity. A long book or a podcast split into passages gives titles that only say where
the passage sits: "The Salt Road (Ada Quill, 1871) – Chapter 3: The Ferry (part 2)", "A Christmas Carol -
Stave One: Marley's Ghost", "Behind the Tech, episode 3 (…) - part 1". Such a title is structure, not
text: glued to the passage it opened the quoted answer, filled the summary tree's root and made the
book's author (named in every title) a hub of the graph. ``label_titles`` finds them; the loader keeps
them as the document's name (the label every citation shows) and indexes the passage text alone.

The rule (RAGScope's choice): a title is a label when it holds a structural marker ("chapter 3",
"stave one", "part 2", "episode 3", "book IV", "volume 2", "section 4", "act 1", "scene 2", "canto 3")
AND what precedes the marker (the work's name) is shared by at least two titles of the same file. A
single "Star Wars: Episode IV – A New Hope" in an encyclopedic corpus is therefore still a name.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Optional, Sequence

_NUMBER = (r"(?:\d+|[ivxlcdm]+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
           r"thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|first|second|third|"
           r"fourth|fifth|sixth|seventh|eighth|ninth|tenth|last|final)")
_MARKER = re.compile(r"\b(?:chapter|chap\.|stave|part|episode|book|volume|vol\.|section|act|scene|canto)\s+"
                     + _NUMBER + r"\b", re.IGNORECASE)
_TRIM = " \t-–—:;,.([{"


def work_name(title: str) -> Optional[str]:
    """The part of ``title`` before its first structural marker (the work's name, lower-cased, trailing
    separators removed), or None when the title holds no marker (or nothing precedes it)."""
    match = _MARKER.search(title or "")
    if match is None:
        return None
    name = " ".join(title[:match.start()].split()).rstrip(_TRIM).strip().lower()
    return name or None


def label_titles(titles: Sequence[str]) -> list[bool]:
    """Per title: True when it is a structural label (see the module docstring), False when it names a
    subject and belongs with the text."""
    works = [work_name(t) for t in titles]
    shared = Counter(w for w in works if w)
    return [w is not None and shared[w] >= 2 for w in works]
