"""Evaluate's "k values": typed cut-offs are read, and what is left out is said (``ui.eval_tables.parse_ks``).

Before, any entry that was not digits was dropped silently (``2;5;10`` ran k = 5 alone) and any number of
cut-offs of any size was taken (a long list made two table columns per value)."""
from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.eval_tables import MAX_K, MAX_KS, parse_ks

from tests.sample_data_dir import sample_data_dir

ROOT = Path(__file__).resolve().parent.parent


def test_separators_duplicates_and_order():
    assert parse_ks("2,5,10") == ([2, 5, 10], [])
    assert parse_ks("10; 2 5,,5") == ([2, 5, 10], [])


def test_bad_entries_are_named_and_nothing_usable_gives_five():
    ks, dropped = parse_ks("x,0,-3,2.5")
    assert ks == [5]
    assert [d.split(" ")[0] for d in dropped] == ["x", "0", "-3", "2.5"]
    assert parse_ks(f"3,{MAX_K + 1}") == ([3], [f"{MAX_K + 1} (not a whole number from 1 to {MAX_K})"])


def test_at_most_max_ks_values():
    ks, dropped = parse_ks(",".join(str(k) for k in range(1, 5001)))
    assert ks == list(range(1, MAX_KS + 1))
    assert len(dropped) == 5000 - MAX_KS


def test_the_page_says_what_it_left_out_before_the_run(tmp_path, monkeypatch, sample_workspace_dir):
    sample_data_dir(tmp_path, monkeypatch, sample_workspace_dir)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    at.switch_page("pages/evaluate.py")
    at.run()
    assert not at.warning, [w.value for w in at.warning]  # the default 2,5,10 is fine
    at.text_input(key="eval_ks").set_value("2;5;x**y**").run()
    assert not at.exception, [e.value for e in at.exception]
    notes = [w.value for w in at.warning if "k values" in w.value]
    assert len(notes) == 1 and "k = 2, 5" in notes[0] and "x\\*\\*y\\*\\*" in notes[0], notes
