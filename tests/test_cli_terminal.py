"""The CLI's printed text cannot drive the terminal (issue 38): a document id, title or file name holding
``ESC ]8`` (a link), ``ESC ]52`` (the clipboard), ``ESC [2J`` (clear screen), a carriage return or a
bidirectional override is printed with those characters as visible ``\\u001b`` escapes, and JSON printed by
a command still decodes to the same text (``core/cli/terminal.py``)."""
from __future__ import annotations

import io
import json

import pytest

from core.cli.main import main
from core.cli.terminal import TerminalSafe, printable

HOSTILE_ID = "zz\x1b]52;c;cm0gLXJmIH4=\x07 \x1b]8;;http://payload.invalid/\x07click\x1b]8;;\x07 \x1b[2J\r\u202egnp.exe\x85"
CONTROLS = [chr(c) for c in range(0x20) if chr(c) not in "\t\n"] + ["\x7f", "\x85", "\x9b", "\u202e", "\u2066"]


@pytest.mark.parametrize("char", CONTROLS)
def test_every_control_character_is_printed_as_its_escape(char):
    out = printable(f"a{char}b")
    assert char not in out and out == f"a\\u{ord(char):04x}b"


def test_tab_newline_and_ordinary_text_pass_and_json_still_decodes():
    text = "tab\there\nnew line, é 中 “quotes” \\ backslash"
    assert printable(text) == text
    value = {"title": HOSTILE_ID}
    assert json.loads(printable(json.dumps(value, ensure_ascii=False))) == value
    assert printable("50%\r", keep_return=True) == "50%\r"  # standard error: progress bars redraw


def test_terminal_safe_filters_writes_and_keeps_the_streams_other_attributes():
    buffer = io.StringIO()
    stream = TerminalSafe(buffer)
    assert stream.write("x\x1b[31my") == 7  # the caller's length, as a stream reports it
    stream.writelines(["\x07", "z"])
    assert buffer.getvalue() == "x\\u001b[31my\\u0007z" and stream.getvalue() == buffer.getvalue()


def test_a_command_prints_a_hostile_id_and_path_without_control_characters(tmp_path, capsys):
    main(["delete", "--workspace", str(tmp_path / "ws\x1b[2J"), HOSTILE_ID])
    main(["status", "--workspace", str(tmp_path / "ws\x1b[2J")])
    out, err = capsys.readouterr()
    assert "zz\\u001b]52" in err and "\\u202egnp" in err  # the id is shown, its controls as escapes
    assert "ws\\u001b[2J" in out
    for char in CONTROLS:
        assert char not in out, repr(char)
        assert char not in err or char == "\r", repr(char)
