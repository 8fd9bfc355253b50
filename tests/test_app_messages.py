"""AppTest: messages that told a user something untrue (found walking the app in a browser, session 49).

* The Source viewer opened from ``?doc=NAME&quote=…`` with no such document said "That chunk is not in
  this workspace" although the address named a document, not a chunk; it now names the document
  (escaped).
* Evaluate's empty Annotations section told a viewer to mark chunks and to "import a file of marks
  below", neither of which a viewer may do nor sees; it now says an editor adds them.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from streamlit.testing.v1 import AppTest

from core.auth import Principal, Role
from ui.errors import escape_markdown
from test_app_auth import address, data_dir, signed_in  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 300
ODD_DOC = "no-such-doc <b>x</b> **y**.md"


def page_with(page: str, query: dict[str, str]) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=TIMEOUT)
    at.run()
    for key, value in query.items():
        at.query_params[key] = value
    at.switch_page(page)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_source_viewer_names_the_missing_document_of_the_address(data_dir, sample_workspace_dir):  # noqa: F811
    shutil.copytree(sample_workspace_dir, data_dir / "default")
    at = page_with("pages/source.py", {"doc": ODD_DOC, "quote": "Port Sallow"})
    warnings = [w.value for w in at.warning]
    assert len(warnings) == 1, warnings
    assert "That chunk" not in warnings[0]
    assert escape_markdown(ODD_DOC) in warnings[0]  # named, its markup escaped


def test_source_viewer_still_says_chunk_for_an_unknown_chunk(data_dir, sample_workspace_dir):  # noqa: F811
    shutil.copytree(sample_workspace_dir, data_dir / "default")
    at = page_with("pages/source.py", {"chunk": "chunk-that-is-not-there"})
    assert [w.value for w in at.warning] == ["That chunk is not in this workspace (it was deleted or re-indexed)."]


def empty_annotations_caption(at: AppTest) -> str:
    return next(c.value for c in at.caption if str(c.value).startswith("No annotations yet"))


def as_(signed_in, monkeypatch, who: Principal) -> None:  # noqa: F811
    """Sign ``who`` in, also where ``ui.annotations_view`` bound ``principal`` when an earlier test imported it."""
    import ui.annotations_view

    signed_in(who)
    monkeypatch.setattr(ui.annotations_view, "principal", lambda: who)


def test_a_viewer_is_not_told_to_annotate_or_import(data_dir, signed_in, monkeypatch,  # noqa: F811
                                                    sample_workspace_dir):
    shutil.copytree(sample_workspace_dir, data_dir / "default")
    as_(signed_in, monkeypatch, Principal("v", "viewer@example.com", Role.viewer))
    at = page_with("pages/evaluate.py", {})
    caption = empty_annotations_caption(at)
    assert "below" not in caption and "an editor" in caption
    assert "annotations_upload" not in {u.key for u in at.get("file_uploader")}


def test_an_editor_is_told_where_to_annotate_and_import(data_dir, signed_in, monkeypatch,  # noqa: F811
                                                       sample_workspace_dir):
    shutil.copytree(sample_workspace_dir, data_dir / "default")
    as_(signed_in, monkeypatch, Principal("e", "editor@example.com", Role.editor))
    at = page_with("pages/evaluate.py", {})
    assert "import a file of marks below" in empty_annotations_caption(at)


def test_a_chunk_opened_from_a_link_offers_the_pickers_again(data_dir, sample_workspace_dir):  # noqa: F811
    """The Source viewer opened by a citation link showed only that chunk, and clicking "Source viewer" in
    the navigation kept the link's address: no way back to the pickers. "Pick another chunk" drops the
    link's chunk and sentence (the workspace stays) and the pickers come back."""
    shutil.copytree(sample_workspace_dir, data_dir / "default")
    at = page_with("pages/source.py", {"chunk": "chunk-that-is-not-there", "quote": "Port Sallow"})
    assert not at.radio
    at.button(key="source_pick_other").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert "chunk" not in at.query_params and "quote" not in at.query_params
    assert at.radio(key="source_from").value == "A document's chunk"
    assert at.text_input(key="source_quote").value == ""
