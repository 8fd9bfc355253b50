"""Documents: upload files, paste text or load the sample corpus; watch the index grow live;
see every document's status, delete documents and retry failed ones."""
from __future__ import annotations

import time
from typing import Any, Callable

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core import api
from core.loaders import SUPPORTED_EXTENSIONS
from core.types import ProgressEvent
from ui import state
from ui.errors import escape_markdown, show_errors

STEPS = {"index": "Documents", "extract": "Extract (spaCy / LLM)", "merge": "Merge entities and relations",
         "tree": "Summary tree", "embed": "Embed and store vectors", "repair": "Repair vectors"}
MAX_CALLS = 30  # uploads are indexed in at most this many calls (one per file when few): growth per document
Job = Callable[[Callable[[ProgressEvent], None]], Any]


@st.cache_data(show_spinner=False, max_entries=16)
def documents_frame(path: str, generation: int, _ws: Any) -> pd.DataFrame:
    """The status table of a workspace, cached per (path, generation)."""
    columns = ["doc_id", "name", "status", "chunks", "entities", "error", "seconds"]
    return pd.DataFrame(_ws.documents_table()).reindex(columns=columns)


def growth_key() -> str:
    return f"growth::{state.current_workspace_name()}"


def snapshot(status: dict[str, Any]) -> dict[str, int]:
    return {"documents": int(status["processed"]), "chunks": int(status["chunks"]),
            "entities": int(status["entities"]), "relations": int(status["relations"]),
            "summaries": int(status["tree_nodes"])}


def growth_figure(points: list[dict[str, int]]) -> go.Figure:
    """Entities (nodes) and relations (edges) against documents processed."""
    xs = [p["documents"] for p in points]
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=xs, y=[p["entities"] for p in points], mode="lines+markers", name="entities (nodes)"))
    fig.add_trace(go.Scatter(x=xs, y=[p["relations"] for p in points], mode="lines+markers", name="relations (edges)"))
    fig.update_layout(height=280, margin=dict(l=10, r=10, t=30, b=10), title="Knowledge graph growth",
                      xaxis_title="documents processed", yaxis_title="count", legend=dict(orientation="h"))
    return fig


def show_counters(target: Any, status: dict[str, Any]) -> None:
    with target.container():
        cols = st.columns(5)
        for col, (label, key) in zip(cols, [("Documents", "processed"), ("Chunks", "chunks"),
                                            ("Entities", "entities"), ("Relations", "relations"),
                                            ("Summaries", "tree_nodes")]):
            col.metric(label, int(status[key]))


class IndexingMonitor:
    """A progress callback that renders ProgressEvents live: a bar per step, counters and growth chart."""

    def __init__(self, ws: Any, n_calls: int, counters: Any, chart: Any) -> None:
        self.ws = ws
        self.n_calls = max(n_calls, 1)
        self.counters = counters
        self.chart = chart
        self.bars: dict[str, Any] = {}
        self.calls_finished = 0
        self.docs_before = 0  # documents indexed by earlier calls of this run
        self.call_done = 0
        self.draws = 0
        self.points: list[dict[str, int]] = st.session_state.setdefault(growth_key(), [])
        self.record(force=True)

    def bar(self, step: str) -> Any:
        if step not in self.bars:
            self.bars[step] = st.progress(0.0, text=STEPS.get(step, step))
        return self.bars[step]

    def __call__(self, event: ProgressEvent) -> None:
        message = escape_markdown(event.message[:120]) if event.message else ""
        label = STEPS.get(event.step, event.step)
        if event.step == "index":
            self.call_done = event.done
            within = event.done / event.total if event.total else 1.0
            overall = min((self.calls_finished + within) / self.n_calls, 1.0)
            last = (" — done" if event.message == "done" else f" — last: {message}") if event.done else " — starting…"
            where = f" (call {self.calls_finished + 1} of {self.n_calls})" if self.n_calls > 1 else ""
            text = f"{label}: {self.docs_before + event.done} indexed{where}{last}"
            self.bar("index").progress(overall, text=text)
            if event.done:
                self.record()
            return
        fraction = 1.0 if event.total <= 0 else min(event.done / event.total, 1.0)
        order = list(STEPS)
        if event.step in order:  # earlier steps of this batch are complete
            for step in order[1: order.index(event.step)]:
                if step in self.bars and step != "repair":
                    self.bars[step].progress(1.0, text=f"{STEPS[step]}: done")
        suffix = f" ({event.done}/{event.total})" if event.total else ""
        self.bar(event.step).progress(fraction, text=f"{label}{suffix} {message}")

    def finish_call(self) -> None:
        self.calls_finished += 1
        self.docs_before += self.call_done
        self.call_done = 0

    def record(self, force: bool = False) -> None:
        status = self.ws.status()
        point = snapshot(status)
        show_counters(self.counters, status)
        if not force and self.points and self.points[-1] == point:
            return
        if not self.points or self.points[-1] != point:
            self.points.append(point)
        if len(self.points) >= 2:
            self.draws += 1
            self.chart.plotly_chart(growth_figure(self.points), key=f"doc_growth_live_{self.draws}")


def upload_jobs(ws: Any, files: list[tuple[str, bytes]]) -> list[Job]:
    """One indexing call per file (grouped when there are many), so the growth chart has a point per call."""
    size = max(1, -(-len(files) // MAX_CALLS))
    groups = [files[i: i + size] for i in range(0, len(files), size)]
    return [lambda progress, group=group: api.index_uploads(ws, group, progress) for group in groups]


def sample_files() -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted(api.SAMPLES_DIR.iterdir())
            if p.is_file() and not p.name.startswith(".")]


def run_jobs(ws: Any, jobs: list[Job], what: str) -> None:
    """Run indexing calls with live progress, then store a summary and rerun (refreshes the sidebar too)."""
    started = time.perf_counter()
    summary: dict[str, Any] = {"processed": 0, "unchanged": 0, "replaced": 0, "failed": []}
    with st.status(f"Indexing {what}… (the first run also loads the language and embedding models)",
                   expanded=True) as box:
        counters = st.empty()
        chart = st.empty()
        monitor = IndexingMonitor(ws, len(jobs), counters, chart)
        with show_errors("Indexing stopped") as guard:
            for job in jobs:
                report = job(monitor)
                monitor.finish_call()
                summary["processed"] += report.processed
                summary["unchanged"] += report.unchanged
                summary["replaced"] += report.replaced
                summary["failed"] += list(report.failed)
        elapsed = time.perf_counter() - started
        if guard.failed:
            box.update(label="Indexing stopped with an error", state="error")
            return
        box.update(label=f"Indexed {what} in {elapsed:.1f} s", state="complete", expanded=False)
    summary["seconds"] = round(elapsed, 1)
    st.session_state["doc_last_report"] = summary
    st.rerun()


def _stash_paste() -> None:
    text = st.session_state.get("doc_paste_text") or ""
    name = (st.session_state.get("doc_paste_name") or "").strip() or "pasted-text"
    if not text.strip():
        st.session_state["doc_paste_error"] = "Paste some text first."
        return
    st.session_state["doc_paste_job"] = (name, text)
    st.session_state["doc_paste_text"] = ""


def input_section(ws: Any) -> None:
    upload_tab, paste_tab, sample_tab = st.tabs(["Upload files", "Paste text", "Sample corpus"])
    with upload_tab:
        files = st.file_uploader("Documents", accept_multiple_files=True, key="doc_upload",
                                 type=sorted(e.lstrip(".") for e in SUPPORTED_EXTENSIONS),
                                 help="txt, md, pdf, docx, html or JSONL corpora (one document per line).")
        if st.button("Index uploaded files", key="doc_index_uploads", type="primary", disabled=not files):
            items = [(f.name, f.getvalue()) for f in files or []]
            run_jobs(ws, upload_jobs(ws, items), f"{len(items)} file(s)")
    with paste_tab:
        st.text_input("Document name", key="doc_paste_name", value="pasted-text", max_chars=120)
        st.text_area("Text", key="doc_paste_text", height=180)
        st.button("Index pasted text", key="doc_paste_index", on_click=_stash_paste)
        error = st.session_state.pop("doc_paste_error", None)
        if error:
            st.warning(error)
        job = st.session_state.pop("doc_paste_job", None)
        if job:
            name, text = job
            run_jobs(ws, [lambda progress: api.index_text(ws, name, text, progress)], "pasted text")
    with sample_tab:
        st.write("Eleven short articles about a fictional coast (Velmora): towns, a flood, a railway, a festival.")
        if st.button("Load sample corpus", key="doc_load_samples"):
            items = sample_files()
            run_jobs(ws, upload_jobs(ws, items), "the sample corpus")


def report_section() -> None:
    report = st.session_state.pop("doc_last_report", None)
    if not report:
        return
    text = (f"Indexed {report['processed']} document(s) in {report['seconds']} s; "
            f"{report['unchanged']} unchanged, {report['replaced']} replaced, {len(report['failed'])} failed.")
    (st.warning if report["failed"] else st.success)(text)
    for fail in report["failed"]:
        st.text(f"✗ {fail.get('name', '?')}: {fail.get('reason', '')}")


def table_section(ws: Any) -> None:
    frame = documents_frame(str(ws.path), ws.generation(), ws)
    st.subheader("Document status")
    if frame.empty:
        st.info("No documents yet: upload files, paste text or load the sample corpus above.")
        return
    st.dataframe(frame.drop(columns=["doc_id"]), key="doc_table", hide_index=True,
                 column_config={"seconds": st.column_config.NumberColumn("seconds", format="%.2f")})
    failed = frame[frame["status"] == "failed"]
    if not failed.empty:
        st.error(f"{len(failed)} document(s) failed. Reasons:")
        for _, row in failed.iterrows():
            st.text(f"✗ {row['name']}: {row['error'] or 'unknown reason'}")
    labels = {row.doc_id: f"{row.name} ({row.status})" for row in frame.itertuples()}
    left, right = st.columns([3, 1])
    with left:
        chosen = st.multiselect("Delete documents", list(labels), format_func=lambda d: labels.get(d, d),
                                key="doc_delete_select")
        if st.button("Delete selected", key="doc_delete", disabled=not chosen):
            with show_errors("Delete failed") as guard, st.spinner("Deleting…"):
                stats = api.delete(ws, list(chosen))
            if not guard.failed:
                st.session_state["doc_last_deleted"] = (len(chosen), stats)
                st.rerun()
    with right:
        st.write("")
        retry = st.button("Retry failed", key="doc_retry", disabled=failed.empty,
                          help="Index the failed documents again (those whose text could be loaded).")
    if retry:
        run_jobs(ws, [lambda progress: api.retry(ws, progress)], "failed documents")
    deleted = st.session_state.pop("doc_last_deleted", None)
    if deleted:
        st.success(f"Deleted {deleted[0]} document(s).")


def growth_section(ws: Any) -> None:
    points = st.session_state.get(growth_key(), [])
    show_counters(st.empty(), ws.status())
    if len(points) >= 2:
        st.plotly_chart(growth_figure(points), key="doc_growth_chart")
    else:
        st.caption("The graph-growth chart appears while documents are indexed in this session.")


@show_errors()
def main() -> None:
    st.title("Documents")
    st.caption("Add documents; each one is chunked, extracted, merged into the graphs, summarised into the tree "
               "and embedded — incrementally. Document text is treated as untrusted and shown as plain text.")
    ws = state.workspace()
    report_section()
    input_section(ws)
    growth_section(ws)
    table_section(ws)


main()
