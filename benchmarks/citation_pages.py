"""Citations with pages (issue 34): whether a cited page holds the quoted sentence, and what the
position bookkeeping costs.

``storage WS [WS …]``: the ``doc_positions`` rows of each workspace by kind, and the bytes their table
and primary-key index take (SQLite's ``dbstat``: pages of 4 KiB, and the payload bytes in them; the database is opened read-only, with no upgrade, so
a workspace written by an older release is measured as it is).

``pages PDF [PDF …]``: indexes the PDFs into a new workspace, asks every question of ``--questions``
(default: one question per page, made from that page's own longest sentence) in every mode with the
offline answers, and counts the answer sentences whose cited page holds the sentence: the quoted words
are looked for, whitespace-insensitive, in the text PDFium extracts from the cited page(s). It prints
the share per mode and the bookkeeping cost: position rows and bytes, and the parse time of each PDF
with page positions kept and without (the same pages joined, no offsets recorded; CPU seconds, median
of ``--repeat`` runs, since the machine is shared).

    python benchmarks/citation_pages.py storage WS [WS …]
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
    """The text PDFium extracts from each page (what the viewer renders), whitespace collapsed."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(pdf))
    try:
        return [_norm(document[n].get_textpage().get_text_range()) for n in range(len(document))]
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


def holds(page_text: str, quote: str) -> bool:
    """The quoted sentence is on the page: its words (at most the first 12, "…" cuts dropped) in order,
    whitespace-insensitive."""
    from core.citations import quote_candidates

    for candidate in quote_candidates(quote):
        words = _norm(candidate.replace("\u2026", " ")).split()[:12]
        if words and re.search(r"\s*".join(re.escape(w) for w in words), page_text.replace(" ", "")):
            return True
    return False


def parse_seconds(pdf: Path, repeat: int) -> dict:
    """CPU seconds (median of ``repeat``) to parse ``pdf`` with page positions and without them."""
    from core.parsing import pdf as pdf_parsing

    data = pdf.read_bytes()
    timings: dict[str, list[float]] = {"with_positions": [], "without_positions": []}
    for _ in range(repeat):
        for kind in timings:
            started = time.process_time()
            docs = pdf_parsing.load_pdf(pdf.name, data)[0]
            if kind == "without_positions":
                for doc in docs:
                    doc.page_starts = ()
            timings[kind].append(time.process_time() - started)
    return {k: round(statistics.median(v), 4) for k, v in timings.items()}


def pages_main(args: argparse.Namespace) -> None:
    from core.api import index_sources, run_query
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
        for mode in parse_modes(args.modes):
            tally = {"sentences": 0, "held": 0, "other_page": 0, "not_a_page_citation": 0}
            for q in questions:
                result = run_query(LOCAL_ADMIN, ws, q["question"], mode=mode, offline=True)
                answer = getattr(result.answer, "text", "") if result.answer else ""
                for doc, first, last, quote in cited_sentences(answer):
                    pages = texts.get(doc)
                    if pages is None:
                        continue
                    tally["sentences"] += 1
                    if any(holds(pages[n - 1], quote) for n in range(first, min(last, len(pages)) + 1)):
                        tally["held"] += 1
                    else:
                        tally["other_page"] += 1
                        misses.append({"mode": mode, "qid": q.get("qid"), "doc": doc, "pages": [first, last],
                                       "quote": quote[:160],
                                       "found_on": [n + 1 for n, t in enumerate(pages) if holds(t, quote)]})
            per_mode[mode] = tally
        storage = position_storage(root / "ws")
        parse = {p.name: parse_seconds(p, args.repeat) for p in pdfs}
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(f"{len(pdfs)} PDF(s), {sum(len(t) for t in texts.values())} pages, {len(questions)} questions; "
          f"indexed in {index_seconds:.1f} s wall")
    print("| mode | cited sentences | cited page holds it | share |")
    print("|---|---|---|---|")
    for mode, tally in per_mode.items():
        share = 100.0 * tally["held"] / tally["sentences"] if tally["sentences"] else float("nan")
        print(f"| {mode} | {tally['sentences']} | {tally['held']} | {share:.1f} % |")
    for miss in misses[:20]:
        print("miss:", json.dumps(miss, ensure_ascii=False))
    rows = ", ".join(f"{k} {v:,}" for k, v in sorted(storage["rows"].items())) or "none"
    print(f"positions: {rows}; {storage['bytes'] / 1024:,.1f} KiB of pages (table and its index), "
          f"{storage['payload']:,} bytes of payload")
    for name, timing in parse.items():
        print(f"parse {name}: {timing['with_positions']:.3f} s CPU with page positions, "
              f"{timing['without_positions']:.3f} s without (median of {args.repeat})")
    write_result("citation_pages", {"pdfs": [str(p) for p in pdfs], "questions": len(questions),
                                    "per_mode": per_mode, "misses": misses, "storage": storage, "parse": parse})


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
    args = parser.parse_args()
    if args.command == "storage":
        storage_main(args.workspaces)
    else:
        pages_main(args)


if __name__ == "__main__":
    main()
