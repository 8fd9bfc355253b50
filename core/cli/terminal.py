"""What the CLI prints cannot drive the terminal: document titles, ids, chunk text, entity names and file
names come from uploaded files, and a terminal acts on control characters inside them — ``ESC ]8`` turns
text into a link to anywhere, ``ESC ]52`` writes the clipboard, ``ESC [2J`` clears the screen, a
carriage return or a bidirectional override makes a line read as something it is not. While a command
runs, standard output and standard error go through ``TerminalSafe``, which writes every such character
as its visible escape ``\\u001b`` — JSON's own escape, so a command that prints JSON (``--json``, ``edits
export``) still prints valid JSON that decodes to the same text. Tab and newline pass; carriage return passes
on standard error only (progress bars redraw their line with it). Files the CLI writes (``--out``,
``--per-question``, exports) are data and are written as they are, through their own format's rules."""
from __future__ import annotations

import contextlib
import re
import sys
from typing import Any, Iterator, TextIO

# C0 controls but tab and newline (carriage return: see ``keep_return``), DEL, C1 controls, and the
# Unicode bidirectional embeddings, overrides and isolates.
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x0c\x0d\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROLS_BUT_RETURN = re.compile(r"[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def visible(char: str) -> str:
    """A control character as the escape that names it (``\\u001b``, ``\\u202e``; valid in a JSON string)."""
    return f"\\u{ord(char):04x}"


def printable(text: str, keep_return: bool = False) -> str:
    """``text`` with every terminal control character written as its visible escape."""
    pattern = _CONTROLS_BUT_RETURN if keep_return else _CONTROLS
    return pattern.sub(lambda m: visible(m.group(0)), text)


class TerminalSafe:
    """A text stream that writes to ``stream`` through ``printable``; everything else is the stream's."""

    def __init__(self, stream: TextIO, keep_return: bool = False) -> None:
        self._stream = stream
        self._keep_return = keep_return

    def write(self, text: str) -> int:
        self._stream.write(printable(text, self._keep_return))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


@contextlib.contextmanager
def safe_terminal() -> Iterator[None]:
    """Standard output and error through ``TerminalSafe`` for the block (restored after it)."""
    out, err = sys.stdout, sys.stderr
    sys.stdout = TerminalSafe(out)
    sys.stderr = TerminalSafe(err, keep_return=True)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err
