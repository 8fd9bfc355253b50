"""Documents: upload files, paste text or load the sample corpus; watch the index grow live;
see every document's status, delete documents, retry failed ones and resume pending ones.

Indexing runs as a background job (``ui.indexing.IndexJob``) that this page polls, so it can be
cancelled: with an LLM configured (see ``ui.llm``) extraction and summaries use it, exactly as the
CLI does, and the page shows which extractor will be used before the run and the LLM's calls and
tokens per stage after it."""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from ui.auth_gate import guard  # noqa: E402

guard()  # the refusal / sign-in page unless this session may open it (app.py gates first)

from core import api
from core.auth import Role
from core.loaders import ARCHIVE_EXTENSIONS, DEFAULT_MAX_BYTES, SUPPORTED_EXTENSIONS
from ui import import_view, state
from ui.index_report import report_section
from ui.errors import escape_markdown, show_errors
from ui.counters import workspace_counts
from ui.indexing import IndexCall, IndexJob, growth_figure, models_to_load, progress_bars, running_job_on
from ui.llm import session_llm, usage_totals
from ui.numbers import count
from ui.upload_check import MANY_FILES_HINT, estimate_tokens, large_upload_notes, pasted_document_name
from ui.escape import md
from ui.safe_tables import safe_dataframe
from ui.status_table import capped_reasons, rows_while_indexing

if TYPE_CHECKING:
    from core.api import Workspace

POLL_S = 1.0  # seconds between redraws of a running job's progress bars and counters
TABLE_POLL_S = 5.0  # seconds between redraws of the growth chart while a job runs
JOB_KEY = "doc_job"
MAX_TABLE_ROWS = 20  # the status table shows this many rows without scrolling
UPLOAD_LIMIT_MB = DEFAULT_MAX_BYTES // (1024 * 1024)  # .streamlit/config.toml's maxUploadSize says the same


@st.cache_data(show_spinner=False, max_entries=16)
def documents_frame(path: str, generation: int, _ws: Workspace) -> pd.DataFrame:
    """The status table of a workspace, cached per (path, generation)."""
    return frame_of(api.documents_table(state.principal(), _ws))


def frame_of(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The status table from ``api.documents_table`` rows (newest first)."""
    columns = ["doc_id", "name", "status", "tokens", "chunks", "entities", "dropped", "error", "seconds", "updated"]
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame.reindex(columns=columns)
    frame = frame.sort_values("updated_at", ascending=False, kind="stable")  # newest first: never below the fold
    frame["updated"] = pd.to_datetime(frame["updated_at"], unit="s", utc=True).dt.strftime("%H:%M:%S")
    frame = frame.reindex(columns=columns)
    for column in ("tokens", "chunks", "entities", "dropped"):  # whole numbers even beside a missing one: shown 1,500
        frame[column] = pd.to_numeric(frame[column], errors="coerce").round().astype("Int64")
    return frame


def growth_key() -> str:
    return f"growth::{state.current_workspace_name()}"


def show_counters(target: Any, status: dict[str, Any]) -> None:
    with target.container():
        cols = st.columns(5)
        for col, (label, key) in zip(cols, [("Documents", "processed"), ("Chunks", "chunks"),
                                            ("Entities", "entities"), ("Relations", "relations"),
                                            ("Summaries", "tree_nodes")]):
            col.metric(label, count(status[key]))


def upload_calls(ws: Workspace, files: list[tuple[str, bytes]]) -> list[IndexCall]:
    """One indexing call for all the files, as ``python -m core index`` makes: the pipeline groups
    the documents into its batches (``RAGSCOPE_BATCH_TOKENS``, 24,000 tokens), so the app does the
    library's work. A call per file cost every file a batch of its own (re-merging, re-embedding the
    entities and relations it touched, the corpus path of the tree): 1.48x the library's CPU on the
    sample corpus. The growth chart gets a point per batch. The call runs on the job's thread as this
    session's principal (taken here, on the page's thread)."""
    who = state.principal()
    return [lambda progress, **options: api.index_uploads(who, ws, files, progress, **options)]


def upload_sizes(files: list[Any]) -> dict[str, int]:
    """Estimated tokens per uploaded file (by file id), counted once per upload in this session."""
    cache: dict[str, int] = st.session_state.setdefault("doc_upload_sizes", {})
    for f in files:
        if f.file_id not in cache:
            cache[f.file_id] = estimate_tokens(f.name, f.getvalue())
    return cache


def sample_files() -> list[tuple[str, bytes]]:
    """The sample corpus's articles (its README is not one of them)."""
    return [(p.name, p.read_bytes()) for p in api.sample_paths(state.principal())]


ADD_TABS_WIDGET = "doc_add_tabs"  # the "Upload files / Paste text" tabs (their state: the tab shown)
ADD_TAB_KEY = "doc_add_tab"  # the tab in use when the last run started (the run hides the tabs)


def start_job(ws: Workspace, calls: list[IndexCall], what: str) -> None:
    """Start indexing on a background thread with the session's LLM (if any), then redraw the page."""
    # the run hides the add-documents tabs, which drops their state: keep the tab in use for when they return
    st.session_state[ADD_TAB_KEY] = st.session_state.get(ADD_TABS_WIDGET, st.session_state.get(ADD_TAB_KEY))
    llm = session_llm(ws, cancel_event=threading.Event())
    job = IndexJob(ws, calls, what, llm.chat, llm.cancel_event, points=st.session_state.get(growth_key(), []),
                   principal=state.principal())
    st.session_state[JOB_KEY] = job.start()
    st.rerun()


def _cancel_job() -> None:
    """Cancel through the front door (editor or above; the run on this session's workspace only)."""
    job = st.session_state.get(JOB_KEY)
    if job is not None:
        with show_errors():
            api.cancel_indexing(state.principal(), job.ws)


def finish_job(job: IndexJob) -> None:
    """Keep the finished job's summary (or error) for ``report_section`` and its growth points."""
    st.session_state.pop(JOB_KEY, None)
    st.session_state[growth_key()] = job.snapshot()["points"]
    if job.state == "error":
        st.session_state["doc_job_error"] = job.error
    else:
        st.session_state["doc_last_report"] = job.summary | {"what": job.what}


@st.fragment(run_every=POLL_S)
def job_panel() -> None:
    """Live progress of the running job (redrawn every POLL_S seconds) with its Cancel button, its
    counters and the status table, all from one job snapshot (the sidebar reads the same). The growth
    chart is in ``job_chart`` (every TABLE_POLL_S seconds): rebuilt every second, the plotly figure and
    the table took about a tenth of the server's time during the sample corpus (profiled); the table's
    frame is now built once per workspace generation."""
    job: IndexJob | None = st.session_state.get(JOB_KEY)
    if job is None:
        return
    if not job.running:
        st.rerun()  # the whole page: report, counters, table
    snap = job.snapshot()
    with st.container(border=True):
        extractor = f"LLM {job.llm.model}" if job.llm is not None else "spaCy (offline)"
        st.markdown(f"**Indexing {escape_markdown(job.what)}…** ({snap['seconds']:.0f} s, extraction: "
                    f"{escape_markdown(extractor)})")
        if models_to_load(job.ws):
            st.caption("This run also loads the language and embedding models (once per server start).")
        for step, fraction, text in progress_bars(snap, escape_markdown):
            st.progress(fraction, text=text)
        if snap["status"]:
            show_counters(st.empty(), workspace_counts(job.ws))  # the sidebar reads the same numbers
        if snap["usage"]:
            t = usage_totals(snap["usage"])
            st.caption(f"LLM so far: {count(t['calls'])} call(s) ({count(t['cached'])} from the cache), {t['prompt_tokens']:,} "
                       f"prompt + {t['completion_tokens']:,} completion tokens")
        if snap["cancelling"]:
            st.warning("Cancelling at the next safe point (LLM calls in flight finish; their replies are cached)…")
        elif not state.can(Role.editor):
            st.caption("An editor is indexing this workspace; only an editor or admin can cancel the run.")
        else:
            st.button("Cancel", key="doc_cancel", on_click=_cancel_job,
                      help="Stop at the next safe point: LLM calls in flight finish and are cached, no new call "
                           "starts; unfinished documents stay pending (offline: after the current batch).")
    table_section(job.ws, interactive=False, frame=job_frame(snap))  # the rows read with those counters


def job_frame(snap: dict[str, Any]) -> pd.DataFrame | None:
    """The status table of a job snapshot, built once per workspace generation it was read at (None:
    the snapshot has no rows; the table is then read as without a job)."""
    rows = snap.get("documents")
    if rows is None:
        return None
    key = ("doc_job_frame", snap.get("generation"), len(rows))
    cached = st.session_state.get("doc_job_frame")
    if cached is None or cached[0] != key:
        cached = (key, frame_of(rows))
        st.session_state["doc_job_frame"] = cached
    return cached[1]


@st.fragment(run_every=TABLE_POLL_S)
def job_chart() -> None:
    """The growth chart (a point per indexing batch) while a job runs."""
    job: IndexJob | None = st.session_state.get(JOB_KEY)
    if job is None or not job.running:
        return
    points = job.snapshot()["points"]
    if len(points) >= 2:
        st.plotly_chart(growth_figure(points), key="doc_growth_live")


def _stash_paste() -> None:
    text = st.session_state.get("doc_paste_text") or ""
    name = pasted_document_name(st.session_state.get("doc_paste_name") or "")
    if not text.strip():
        st.session_state["doc_paste_error"] = "Paste some text first."
        return
    st.session_state["doc_paste_job"] = (name, text)
    st.session_state["doc_paste_text"] = ""


def input_section(ws: Workspace) -> None:
    llm = session_llm(ws, build=False)
    if llm.note:
        st.warning(escape_markdown(llm.note))
    st.info(llm.extraction_text())
    left, right = st.columns([3, 1], vertical_alignment="center")
    left.write("**Sample corpus** — eleven short invented articles about a fictional coast (Velmora): towns, a "
               "flood, a railway, a festival; with example questions for Compare, Inspect and Evaluate.")
    if right.button("Load sample corpus", key="doc_load_samples", type="primary", width="stretch"):
        items = sample_files()
        start_job(ws, upload_calls(ws, items), "the sample corpus")
    # the chosen tab survives an indexing run: the run hides these tabs, which drops their widget state, and
    # they snapped back to "Upload files" after it, under a user about to paste again. The default changes only
    # when a run starts (``start_job``), never on a tab click: it is part of the tabs' identity, and changing it
    # under a click re-created the tabs and dropped what was being typed into them
    upload_tab, paste_tab = st.tabs(["Upload files", "Paste text"], key=ADD_TABS_WIDGET,
                                    default=st.session_state.get(ADD_TAB_KEY), on_change="rerun")
    with upload_tab:
        limits = state.session_settings()  # the archive limits the upload is held to
        files = st.file_uploader("Documents", accept_multiple_files=True, key="doc_upload",
                                 type=sorted(e.lstrip(".") for e in SUPPORTED_EXTENSIONS | ARCHIVE_EXTENSIONS),
                                 help=f"txt, md, pdf, docx, html or JSONL corpora (one document per line), or a .zip "
                                      f"of them; up to {UPLOAD_LIMIT_MB} MB per file. {MANY_FILES_HINT} A .zip may "
                                      f"hold up to {count(limits.max_archive_entries)} files and "
                                      f"{limits.max_archive_uncompressed_mb:,g} MB unpacked (Settings).")
        sizes = upload_sizes(files or [])
        notes = large_upload_notes([(f.name, sizes[f.file_id]) for f in files or []],
                                   documents_frame(str(ws.path), api.generation(state.principal(), ws), ws).to_dict("records"))
        for note in notes:
            st.warning(md(note))
        if st.button("Index uploaded files", key="doc_index_uploads", type="primary", disabled=not files):
            ordered = sorted(files or [], key=lambda f: sizes[f.file_id]) if notes else list(files or [])
            items = [(f.name, f.getvalue()) for f in ordered]  # a flagged large file goes last
            start_job(ws, upload_calls(ws, items), f"{count(len(items))} file(s)")
    with paste_tab:
        st.text_input("Document name", key="doc_paste_name", value="pasted-text", max_chars=120)
        st.text_area("Text", key="doc_paste_text", height=180)
        st.button("Index pasted text", key="doc_paste_index", on_click=_stash_paste)
        error = st.session_state.pop("doc_paste_error", None)
        if error:
            st.warning(md(error))
        job = st.session_state.pop("doc_paste_job", None)
        if job:
            name, text = job
            who = state.principal()
            start_job(ws, [lambda progress, **options: api.index_text(who, ws, name, text, progress, **options)],
                      "pasted text")


@st.cache_data(show_spinner=False, max_entries=16)
def dropped_frame(path: str, generation: int, _ws: Workspace) -> pd.DataFrame:
    """Per document: how many extraction records the parser dropped, why, and an example."""
    names = {d.doc_id: d.name for d in api.documents(state.principal(), _ws)}
    rows = [{"document": names.get(doc_id, doc_id), "extractor": r.get("extractor", ""), "dropped": r["dropped"],
             "reasons": "; ".join(f"{reason} ×{count(n)}" for reason, n in sorted(r["reasons"].items(), key=lambda x: -x[1])),
             "example": (r.get("examples") or [""])[0]}
            for doc_id, r in api.dropped_records(state.principal(), _ws).items() if r["dropped"]]
    return pd.DataFrame(rows, columns=["document", "extractor", "dropped", "reasons", "example"])


def dropped_section(ws: Workspace) -> None:
    """What the extraction parser had to ignore (malformed or copied records, cut replies), per document."""
    frame = dropped_frame(str(ws.path), state.generation(ws), ws)
    if frame.empty:
        return
    with st.expander(f"What the extraction dropped ({count(frame['dropped'].sum())} record(s))", expanded=False):
        st.caption("Records the extractor's parser could not use, from each document's last indexing. Small "
                   "models drift from the record format; these never reach the graph.")
        safe_dataframe(frame, hide_index=True, key="doc_dropped")


def table_section(ws: Workspace, interactive: bool = True, frame: pd.DataFrame | None = None) -> None:
    if frame is None:
        frame = documents_frame(str(ws.path), state.generation(ws), ws)
    st.subheader("Document status")
    if frame.empty:
        st.info("No documents yet: upload files, paste text or load the sample corpus above.")
        return
    st.caption(f"{len(frame):,} document(s), most recently changed first (times in UTC).")
    shown, left_out = rows_while_indexing(frame, running=not interactive)  # not the whole table every second
    if left_out:
        st.caption(left_out)
    safe_dataframe(shown.drop(columns=["doc_id"]), key="doc_table", hide_index=True,
                 height=35 * (min(len(shown), MAX_TABLE_ROWS) + 1) + 3,
                 column_config={"seconds": st.column_config.NumberColumn("seconds", format="%.2f")})
    failed = frame[frame["status"] == "failed"]
    if not failed.empty:
        st.error(f"{len(failed):,} document(s) failed. Reasons:")
        for line in capped_reasons([f"✗ {row.name}: {row.error or 'unknown reason'}" for row in failed.itertuples()],
                                   "the status table's error column"):
            st.text(line)
    interrupted = int((frame["status"] == "interrupted").sum())
    if interrupted:  # after a crash the rest of the run is still pending: say what Resume will take on
        waiting = int((frame["status"] == "pending").sum())
        st.warning(f"{interrupted:,} document(s) were interrupted: the run indexing them stopped (a crash or a killed "
                   "process) before they were done. Resume pending indexes them"
                   + (f" and the {waiting:,} still pending ({interrupted + waiting:,} in all)." if waiting else "."))
    gaps = api.position_gaps(state.principal(), ws)  # citations that name chunks where pages are wanted
    if gaps:
        st.info(escape_markdown(gaps))
    dropped_section(ws)
    if not interactive or not state.can(Role.editor):
        return
    pending = frame[frame["status"].isin(["pending", "processing", "interrupted"])]
    labels = {row.doc_id: f"{row.name} ({row.status})" for row in frame.itertuples()}
    left, right = st.columns([3, 1])
    with left:
        chosen = st.multiselect("Delete documents", list(labels), format_func=lambda d: labels.get(d, d),
                                key="doc_delete_select")
        if st.button("Delete selected", key="doc_delete", disabled=not chosen):
            with show_errors("Delete failed") as guard, st.spinner("Deleting…"):
                stats = api.delete(state.principal(), ws, list(chosen))
            if not guard.failed:
                state.note_own_write(ws)  # our own change: no "changed outside this page" notice
                st.session_state["doc_last_deleted"] = (len(chosen), stats)
                st.rerun()
    with right:
        st.write("")
        retry = st.button("Retry failed", key="doc_retry", disabled=failed.empty,
                          help="Index the failed documents again (those whose text could be loaded).")
        resume = st.button("Resume pending", key="doc_resume", disabled=pending.empty,
                           help="Index the documents a cancelled or interrupted run left pending.")
    who = state.principal()
    if retry:
        start_job(ws, [lambda progress, **options: api.retry(who, ws, progress, **options)], "failed documents")
    if resume:
        start_job(ws, [lambda progress, **options: api.resume(who, ws, progress, **options)], "pending documents")
    deleted = st.session_state.pop("doc_last_deleted", None)
    if deleted:
        st.success(f"Deleted {count(deleted[0])} document(s).")


def growth_section(ws: Workspace) -> None:
    points = st.session_state.get(growth_key(), [])
    show_counters(st.empty(), workspace_counts(ws))
    if len(points) >= 2:
        st.plotly_chart(growth_figure(points), key="doc_growth_chart")
    else:
        st.caption("The graph-growth chart appears while documents are indexed in this session (a point per "
                   "indexing batch of about 24,000 tokens, as the library batches them).")


@show_errors()
def main() -> None:
    st.title("Documents")
    st.caption("Add documents; each one is chunked, extracted, merged into the graphs, summarised into the tree "
               "and embedded — incrementally. Document text is treated as untrusted and shown as plain text.")
    ws = state.workspace()
    job: IndexJob | None = st.session_state.get(JOB_KEY)
    if job is None:  # a reload starts a new session: reattach to the job still running on this workspace
        job = running_job_on(str(ws.path))
        if job is not None:
            st.session_state[JOB_KEY] = job
    if job is not None and not job.running:
        finish_job(job)
        job = None
    if job is not None:
        job_panel()
        job_chart()
        return
    report_section()
    if state.can(Role.editor):
        input_section(ws)
        import_view.import_section(ws)  # a LightRAG working directory as a zip (ui/import_view.py)
    else:
        st.info("You can browse this workspace's documents; adding or deleting documents needs the editor role.")
    growth_section(ws)
    table_section(ws)


main()
