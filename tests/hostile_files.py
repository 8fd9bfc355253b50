"""Hostile inputs for the bounded-parsing tests (and ``benchmarks/hostile_files.py``).

* ``shared_stream_pdf(pages, repeats)`` — a small PDF whose pages all draw one large, highly
  compressible content stream: each page's text extraction interprets the whole stream again.
* ``expanding_docx(paragraphs)`` — a small DOCX whose ``word/document.xml`` expands hundreds of times.
* ``spin_loader`` / ``allocate_loader`` / ``sleep_loader`` (``marked_sleep_loader``: says when it began) — loaders that never finish, allocate
  without end, or block: registered by a test for a made-up extension (``core.parsing.registry``),
  they prove that the worker's CPU, memory and wall-clock limits hold on their own, not only the caps.
  They live in an importable module because the worker imports a loader by its module and name.
"""
from __future__ import annotations

import io
import time
import zipfile
import zlib
from pathlib import Path

PHRASE = "(Harbour ledger entry ) Tj "


def _pdf(objects: list[bytes]) -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def shared_stream_pdf(pages: int = 20, repeats: int = 40_000) -> bytes:
    """``pages`` pages sharing one Flate-compressed content stream of ``repeats`` text-showing
    operators (~27 bytes each, ~20 characters of text each)."""
    content = b"BT /F1 10 Tf 40 700 Td " + (PHRASE * repeats).encode("ascii") + b" ET"
    stream = zlib.compress(content, 9)
    first_page = 5  # objects 1-4: catalog, pages, font, stream; then the pages
    kids = " ".join(f"{first_page + i} 0 R" for i in range(pages)).encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + kids + b"] /Count " + str(pages).encode() + b" >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Length " + str(len(stream)).encode() + b" /Filter /FlateDecode >>\nstream\n" + stream + b"\nendstream",
    ]
    page = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 3 0 R >> >> >>")
    return _pdf(objects + [page] * pages)


def text_pdf(text: str) -> bytes:
    """A one-page PDF drawing ``text`` (ASCII, no parentheses)."""
    stream = f"BT /F1 12 Tf 40 700 Td ({text}) Tj ET".encode("ascii")
    return _pdf([
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ])


_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>')
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
    'officeDocument" Target="word/document.xml"/></Relationships>')
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def many_member_docx(extra_members: int = 300_000) -> bytes:
    """A DOCX with one short paragraph and ``extra_members`` empty zip members beside it (a zip64 directory
    past 65,535 members): tiny members, so neither the size nor the ratio cap applies."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        archive.writestr("word/document.xml", f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document '
                                              f'xmlns:w="{_W}"><w:body><w:p><w:r><w:t>Harbour ledger</w:t></w:r>'
                                              f'</w:p></w:body></w:document>')
        for index in range(extra_members):
            archive.writestr(f"x/{index}", b"")
    return buffer.getvalue()


def expanding_docx(paragraphs: int = 200_000, text: str = "Harbour ledger entry " * 20) -> bytes:
    """A valid DOCX of ``paragraphs`` identical paragraphs, written in streamed pieces (the XML is
    never held whole in memory here)."""
    buffer = io.BytesIO()
    paragraph = f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>".encode()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            member.write(f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document '
                         f'xmlns:w="{_W}"><w:body>'.encode())
            block = paragraph * 1000
            for _ in range(paragraphs // 1000):
                member.write(block)
            member.write(paragraph * (paragraphs % 1000))
            member.write(b"</w:body></w:document>")
    return buffer.getvalue()


def spin_loader(name: str, data: bytes, limits: object) -> tuple[list, list]:
    """Never returns: a pure CPU loop."""
    n = 0
    while True:
        n = (n * 31 + 7) % 1_000_003


def allocate_loader(name: str, data: bytes, limits: object) -> tuple[list, list]:
    """Never returns: allocates 64 MB blocks without end (and touches them)."""
    kept = []
    while True:
        kept.append(bytearray(64 * 2**20))


def sleep_loader(name: str, data: bytes, limits: object) -> tuple[list, list]:
    """Blocks without using CPU (only the wall-clock timeout ends it)."""
    time.sleep(3600)
    return [], []


def marked_sleep_loader(name: str, data: bytes, limits: object) -> tuple[list, list]:
    """Writes its process id to the file named by ``data`` (so a test knows parsing has begun, and in
    which process), then blocks like ``sleep_loader``."""
    import os

    marker = Path(data.decode("utf-8"))
    marker.with_suffix(".part").write_text(str(os.getpid()), encoding="utf-8")
    marker.with_suffix(".part").replace(marker)
    time.sleep(3600)
    return [], []
