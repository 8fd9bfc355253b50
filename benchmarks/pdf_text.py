"""Make a PDF with a text layer from lines of text (pypdf, Helvetica, letter-size pages): the test and
benchmark corpora for page citations and page furniture. One ``Tj`` per line; parentheses and backslashes
are escaped; text outside Latin-1 becomes ``?``."""
from __future__ import annotations

import io
from typing import Sequence


def _escaped(line: str) -> str:
    return line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def text_pdf(pages: Sequence[Sequence[str]], font_size: float = 10, leading: float = 14,
             origin: tuple[int, int] = (40, 760)) -> bytes:
    """The PDF bytes: one page per list of lines, written from ``origin`` down, ``leading`` apart."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = writer._add_object(DictionaryObject({NameObject("/Type"): NameObject("/Font"),
                                                NameObject("/Subtype"): NameObject("/Type1"),
                                                NameObject("/BaseFont"): NameObject("/Helvetica")}))
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        shown = " ".join(f"({_escaped(line)}) Tj T*" for line in lines)
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 {font_size:g} Tf {origin[0]} {origin[1]} Td {leading:g} TL {shown} ET"
                        .encode("latin-1", "replace"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})})
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()
