"""Sentence boundaries that fall after a title abbreviation ("… the position is Hon. | Winnie Kiiza of …").

spaCy's parser ends a sentence at the full stop of "Hon.", "Dr." or "Gen." when a capitalised name follows,
so the sentence that states a fact loses the name it is about ("The current Leader of Opposition … is
Hon.") and the name becomes a fragment of its own. A boundary is removed when the sentence before it ends
with one of ``TITLES`` followed by its full stop and the next sentence starts with a capital letter:

* at indexing (``join_title_spans``): the parse's sentence spans are joined, so the stored sentence
  records, their mentions and their vectors cover the whole sentence (the chunk text is never changed);
* on read (``join_title_rows``): the stored sentences of a workspace indexed before this rule are joined
  the same way, so a re-index is not needed to quote the whole sentence.

"St." (Street, Saint), "Jr." and "Sr." are left out: each often ends a real sentence ("… on Charlotte St.").
"""
from __future__ import annotations

import re
from typing import Any, Sequence

TITLES = frozenset("Hon Mr Mrs Ms Dr Prof Rev Gen Sen Rep Gov Lt Col Capt Maj Sgt Cmdr Adm Fr Rt Pres Supt Insp".split())
_ENDING = re.compile(r"(?:^|[\s(\"'])([A-Z][a-z]{0,4})\.$")
_OPENING = re.compile(r"^\W*[A-Z]")


def ends_with_title(text: str) -> bool:
    """Does the sentence end with a title abbreviation and its full stop ("… is Hon.")?"""
    match = _ENDING.search(text.rstrip())
    return match is not None and match.group(1) in TITLES


def continues_title(before: str, after: str) -> bool:
    """Is the boundary between these two sentences a split after a title ("… is Hon." | "Winnie Kiiza …")?"""
    return ends_with_title(before) and bool(_OPENING.match(after))


def join_title_spans(doc: Any, sents: Sequence[Any]) -> list[Any]:
    """The parse's sentence spans with every split after a title joined into one span of ``doc``."""
    out: list[Any] = []
    for sent in sents:
        if out and continues_title(out[-1].text, sent.text):
            out[-1] = doc[out[-1].start:sent.end]
        else:
            out.append(sent)
    return out


def join_title_rows(rows: Sequence[tuple[str, list[Any]]]) -> tuple[list[tuple[str, list[Any]]], list[list[int]]]:
    """Stored sentence rows (text, mentions) with every split after a title joined (texts joined by a space,
    mentions concatenated), and for each row returned the indices of the stored rows it is made of."""
    joined: list[tuple[str, list[Any]]] = []
    parts: list[list[int]] = []
    for i, (text, mentions) in enumerate(rows):
        if joined and continues_title(joined[-1][0], str(text)):
            previous, found = joined[-1]
            joined[-1] = (f"{previous} {text}", list(found) + list(mentions))
            parts[-1].append(i)
        else:
            joined.append((str(text), list(mentions)))
            parts.append([i])
    return joined, parts
