"""Citations with pages (issue 34): whether a cited page holds the quoted sentence, and what the
position bookkeeping costs.

``storage WS [WS …]``: the ``doc_positions`` rows of each workspace by kind, and the bytes their table
and primary-key index take (SQLite's ``dbstat``: pages of 4 KiB, and the payload bytes in them; the database is opened read-only, with no upgrade, so
a workspace written by an older release is measured as it is).

``pages PDF [PDF …]``: indexes the PDFs into a new workspace, asks every question of ``--questions``
(default: one question per page, made from that page's own longest sentence) in every mode with the
offline answers, and counts the answer sentences whose cited page holds the sentence: the quoted words
are looked for, whitespace-insensitive, in the text pypdf (the parser's library) or PDFium (the viewer's)
extracts from the cited page alone (a cited range ``pp. 3–4``: its pages joined, for a sentence across a
page break). It prints
the share per mode and the bookkeeping cost: position rows and bytes, and the parse time of each PDF
with page positions kept and without (the same pages joined, no offsets recorded; CPU seconds, median
of ``--repeat`` runs, since the machine is shared).

``make-carol DIR``: writes one PDF per stave of *A Christmas Carol* (``../shared/data/demo_christmas_carol``,
its text lines as they are, ``--lines`` a page, Helvetica), the made PDFs the pages check was run on.

    python benchmarks/citation_pages.py storage WS [WS …]
    python benchmarks/citation_pages.py make-carol DIR [--lines 50]
    python benchmarks/citation_pages.py pages FILE.pdf [FILE.pdf …] [--modes all] [--questions Q.jsonl]
        [--keep DIR] [--repeat 5]
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from common import require, write_result

POSITION_TABLE = "doc_positions"
DATABASE = "ragscope.sqlite3"
QUESTION_WORDS = 14  # a made question quotes at most this many words of its page's sentence


def position_storage(workspace: Path) -> dict:
    """Rows of ``doc_positions`` by kind and the bytes of the table and its index (read-only)."""
    db = require(workspace / DATABASE)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if POSITION_TABLE not in names:
            return {"rows": {}, "bytes": 0, "payload": 0, "documents": _count(conn, "documents")}
        rows = dict(conn.execute(f"SELECT kind, count(*) FROM {POSITION_TABLE} GROUP BY kind").fetchall())
        objects = [POSITION_TABLE] + [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE tbl_name = ? AND type = 'index'", (POSITION_TABLE,))]
        marks = ",".join("?" * len(objects))
        used, payload = conn.execute(f"SELECT coalesce(sum(pgsize), 0), coalesce(sum(payload), 0) FROM dbstat "
                                     f"WHERE name IN ({marks})", objects).fetchone()
        return {"rows": rows, "bytes": int(used), "payload": int(payload), "documents": _count(conn, "documents")}
    finally:
        conn.close()


def _count(conn: sqlite3.Connection, table: str) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def storage_main(workspaces: list[str]) -> None:
    out = {}
    for path in workspaces:
        found = position_storage(Path(path))
        out[path] = found
        rows = ", ".join(f"{k} {v:,}" for k, v in sorted(found["rows"].items())) or "none"
        print(f"{path}: {found['documents']:,} documents; position rows: {rows}; "
              f"{found['bytes'] / 1024:,.1f} KiB of pages (table and its index), {found['payload']:,} bytes of payload")
    write_result("citation_storage", {"workspaces": out})


def _norm(text: str) -> str:
    return " ".join(text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
                    .replace("\u201d", '"').split())


def page_texts(pdf: Path) -> list[str]:
    """Each page's text as the parser's library (pypdf) extracts that page alone, and as PDFium (the
    viewer's library) does, joined, whitespace collapsed: the truth a cited page is checked against
    is read page by page, never through the stored page offsets being checked."""
    import pypdfium2 as pdfium
    from pypdf import PdfReader

    reader = PdfReader(str(pdf))
    document = pdfium.PdfDocument(str(pdf))
    try:
        return [_norm((reader.pages[n].extract_text() or "") + " \u2029 " + document[n].get_textpage().get_text_range())
                for n in range(len(document))]
    finally:
        document.close()


def made_questions(pages: list[str], name: str) -> list[dict]:
    """One question per page: the start of that page's longest sentence (a quoted-span question)."""
    out = []
    for number, text in enumerate(pages, 1):
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s.split()) >= 8]
        if sentences:
            words = max(sentences, key=len).split()[:QUESTION_WORDS]
            out.append({"qid": f"{name}:p{number}", "question": " ".join(words).rstrip(".,;:") + "?"})
    return out


def cited_sentences(answer: str) -> list[tuple[str, int, int, str]]:
    """``(document, first page, last page, quoted text)`` of each page citation of an answer."""
    from core.citations import _CITED, quoted_before

    out = []
    for written, doc, quote in quoted_before(answer):
        match = _CITED.match(written)
        if match is None or not match.group(2):
            continue
        first = int(match.group(3))
        out.append((doc, first, int(match.group(4) or first), quote))
    return out


HELD_WORDS = 8  # a quoted sentence is on a page when its first word tokens are, in order


def holds(page_text: str, quote: str) -> bool:
    """The quoted sentence is on the page: its first ``HELD_WORDS`` word tokens ("…" cuts and a line's
    label dropped) in order with only non-word characters between (an answer's sentence drops the
    markup the page keeps: ``{}`` for ``{<object definition>}``)."""
    from core.citations import quote_candidates

    for candidate in quote_candidates(quote):
        words = re.findall(r"\w+", _norm(candidate.replace("\u2026", " ")))[:HELD_WORDS]
        if words and re.search(r"[\W_]*".join(re.escape(w) for w in words), page_text):
            return True
    return False


def parse_seconds(pdf: Path, repeat: int) -> dict:
    """CPU seconds (median of ``repeat``) to parse ``pdf`` with page positions and without them."""
    from core.parsing import pdf as pdf_parsing
    from core.parsing.limits import ParseLimits

    data = pdf.read_bytes()
    keep_pages = pdf_parsing._with_pages
    timings: dict[str, list[float]] = {"with_positions": [], "without_positions": []}
    try:
        for _ in range(repeat):  # interleaved: the two kinds see the same machine load
            for kind in timings:
                pdf_parsing._with_pages = keep_pages if kind == "with_positions" else (lambda doc, texts: doc)
                started = time.process_time()
                pdf_parsing.load_pdf(pdf.name, data, ParseLimits())
                timings[kind].append(time.process_time() - started)
    finally:
        pdf_parsing._with_pages = keep_pages
    return {k: round(statistics.median(v), 4) for k, v in timings.items()}


def pages_main(args: argparse.Namespace) -> None:
    from core.api import index_sources, run_modes
    from core.auth import LOCAL_ADMIN
    from core.loaders import load_path
    from core.retrieval.registry import parse_modes
    from core.workspace import Workspace

    pdfs = [require(Path(p)) for p in args.pdfs]
    texts = {p.name: page_texts(p) for p in pdfs}
    if args.questions:
        questions = [json.loads(line) for line in Path(args.questions).read_text().splitlines() if line.strip()]
    else:
        questions = [q for p in pdfs for q in made_questions(texts[p.name], p.stem)]
    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="ragscope_pages_"))
    try:
        ws = Workspace(root / "ws")
        sources, failures = [], []
        for pdf in pdfs:
            loaded, failed = load_path(pdf)
            sources += loaded
            failures += failed
        started = time.perf_counter()
        index_sources(LOCAL_ADMIN, ws, sources, failures)
        index_seconds = time.perf_counter() - started
        per_mode: dict[str, dict] = {}
        misses = []
        modes = parse_modes(args.modes)
        tallies = {m: {"sentences": 0, "held": 0, "other_page": 0, "page_ranges": 0} for m in modes}
        for q in questions:
            results = run_modes(LOCAL_ADMIN, ws, q["question"], modes, with_answers=True, concurrent=False)
            for mode, result in results.items():
                tally = tallies[mode]
                answer = getattr(result.answer, "text", "") if result.answer else ""
                for doc, first, last, quote in cited_sentences(answer):
                    pages = texts.get(doc)
                    if pages is None:
                        continue
                    tally["sentences"] += 1
                    tally["page_ranges"] += int(last > first)
                    if holds(" ".join(pages[first - 1:min(last, len(pages))]), quote):  # a range: its pages joined
                        tally["held"] += 1
                    else:
                        tally["other_page"] += 1
                        misses.append({"mode": mode, "qid": q.get("qid"), "doc": doc, "pages": [first, last],
                                       "quote": quote[:160],
                                       "found_on": [n + 1 for n, t in enumerate(pages) if holds(t, quote)]})
        per_mode.update(tallies)
        ws.close()
        storage = position_storage(root / "ws")
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"{len(pdfs)} PDF(s), {sum(len(t) for t in texts.values())} pages, {len(questions)} questions; "
          f"indexed in {index_seconds:.1f} s wall")
    print("| mode | cited sentences | cited page holds it | share | cited as a page range |")
    print("|---|---|---|---|---|")
    for mode, tally in per_mode.items():
        share = 100.0 * tally["held"] / tally["sentences"] if tally["sentences"] else float("nan")
        print(f"| {mode} | {tally['sentences']} | {tally['held']} | {share:.1f} % | {tally['page_ranges']} |")
    for miss in misses[:20]:
        print("miss:", json.dumps(miss, ensure_ascii=False))
    parse = {p.name: parse_seconds(p, args.repeat) for p in pdfs}
    rows = ", ".join(f"{k} {v:,}" for k, v in sorted(storage["rows"].items())) or "none"
    print(f"positions: {rows}; {storage['bytes'] / 1024:,.1f} KiB of pages (table and its index), "
          f"{storage['payload']:,} bytes of payload")
    for name, timing in parse.items():
        print(f"parse {name}: {timing['with_positions']:.3f} s CPU with page positions, "
              f"{timing['without_positions']:.3f} s without (median of {args.repeat})")
    write_result("citation_pages", {"pdfs": [str(p) for p in pdfs], "questions": len(questions),
                                    "per_mode": per_mode, "misses": misses, "storage": storage, "parse": parse})


def text_pdf(pages: list[list[str]]) -> bytes:
    """A PDF with a Helvetica text layer, one page per list of lines."""
    from pdf_text import text_pdf as make

    return make(pages, font_size=10, leading=13.5, origin=(50, 750))


def make_carol(folder: str, lines_per_page: int) -> None:
    from common import SHARED_DATA

    corpus = require(SHARED_DATA / "demo_christmas_carol" / "corpus.jsonl")
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    records = [json.loads(line) for line in corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    for number, record in enumerate(records):
        lines = record["text"].split("\n")
        pages = [lines[at:at + lines_per_page] for at in range(0, len(lines), lines_per_page)]
        name = "carol-front-matter.pdf" if number == 0 else f"carol-stave-{number}.pdf"
        (out / name).write_bytes(text_pdf(pages))
        print(f"{out / name}: {len(pages)} pages")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    storage = sub.add_parser("storage", help="position rows and bytes of workspaces")
    storage.add_argument("workspaces", nargs="+")
    pages = sub.add_parser("pages", help="share of cited pages that hold the quoted sentence")
    pages.add_argument("pdfs", nargs="+")
    pages.add_argument("--modes", default="all")
    pages.add_argument("--questions", default="")
    pages.add_argument("--keep", default="")
    pages.add_argument("--repeat", type=int, default=5)
    carol = sub.add_parser("make-carol", help="PDFs made from A Christmas Carol, one per stave")
    carol.add_argument("folder")
    carol.add_argument("--lines", type=int, default=50)
    args = parser.parse_args()
    if args.command == "make-carol":
        make_carol(args.folder, args.lines)
    elif args.command == "storage":
        storage_main(args.workspaces)
    else:
        pages_main(args)


if __name__ == "__main__":
    main()
