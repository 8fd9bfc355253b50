"""Plain text for NLP from hostile or link-heavy markup: a title that opens with a tag stays its own
paragraph, and a link whose target holds parentheses leaves only its words (seen by hand: a JSONL title
"<img …>Harbour Report" ran into the first quoted sentence, and "[Clarion](javascript:alert(1))" left "Clarion)")."""
from __future__ import annotations

from core.extraction.markup import plain_text


def test_a_title_that_opens_with_a_tag_is_its_own_paragraph() -> None:
    text = "<img src=x onerror=alert(1)>Harbour Report\nThe Grey Harbour Company was founded in 1902."
    assert plain_text(text).split("\n\n") == ["Harbour Report", "The Grey Harbour Company was founded in 1902."]


def test_a_plain_title_is_still_its_own_paragraph() -> None:
    assert plain_text("Harbour Report\nThe company was founded.").split("\n\n")[0] == "Harbour Report"


def test_a_link_target_with_parentheses_leaves_only_the_words() -> None:
    text = ("Its first ship was the [Clarion](javascript:alert(1)) and the page "
            "[Foo](https://example.org/wiki/Foo_(bar)) with ![a map](map.png \"Map\").")
    assert plain_text(text) == "Its first ship was the Clarion and the page Foo with a map."


def test_brackets_and_parentheses_that_are_not_links_stay() -> None:
    assert plain_text("He wrote [sic] (twice) in 1901 (see below).") == "He wrote [sic] (twice) in 1901 (see below)."
