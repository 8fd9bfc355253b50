"""The Documents page's report of the last indexing run: what was indexed, what failed and why, the files a
zip held that no loader reads (skipped, not failed documents), and the LLM's calls and tokens per stage.

Names and reasons come from uploads (a zip member's path is untrusted text): lines go through ``st.text``
and Markdown through ``escape_markdown``; counts through ``ui.numbers.count``."""
from __future__ import annotations

from typing import Any

import streamlit as st

from ui.errors import escape_markdown, show_errors
from ui.llm import usage_frame, usage_totals
from ui.numbers import count
from ui.safe_tables import safe_dataframe
from ui.status_table import capped_reasons


def usage_section(report: dict[str, Any]) -> None:
    """The LLM's calls and tokens per stage for the last run, and per chunk indexed."""
    usage = report.get("usage") or {}
    if not usage:
        return
    t = usage_totals(usage)
    chunks = int(report.get("chunks") or 0)
    per_chunk = (f" For {count(chunks)} chunk(s): {t['calls'] / chunks:.1f} call(s), {t['prompt_tokens'] / chunks:,.0f} "
                 f"prompt and {t['completion_tokens'] / chunks:,.0f} completion tokens per chunk.") if chunks else ""
    st.caption(f"LLM {escape_markdown(report.get('model', ''))}: {count(t['calls'])} call(s), {count(t['cached'])} "
               f"answered from the cache, {count(t['prompt_tokens'])} prompt + {count(t['completion_tokens'])} "
               f"completion tokens.{per_chunk}")
    safe_dataframe(usage_frame(usage), hide_index=True, key="doc_llm_usage")


def report_section() -> None:
    """The last run's outcome (kept in the session by the Documents page when its job ends), shown once."""
    error = st.session_state.pop("doc_job_error", None)
    if error is not None:
        with show_errors("Indexing stopped"):
            raise error
    report = st.session_state.pop("doc_last_report", None)
    if not report:
        return
    skipped = report.get("skipped") or []
    if report.get("cancelled"):
        st.warning(f"Indexing cancelled after {count(report['processed'])} document(s) in {report['seconds']} s. "
                   f"{count(report.get('pending', 0))} document(s) stay pending: press Resume pending to continue — "
                   "finished LLM work is cached, so it costs no new calls.")
    else:
        text = (f"Indexed {count(report['processed'])} document(s) in {report['seconds']} s; "
                f"{count(report['unchanged'])} unchanged, {count(report['replaced'])} replaced, "
                f"{count(len(report['failed']))} failed" + (f", {count(len(skipped))} skipped." if skipped else "."))
        (st.warning if report["failed"] else st.success)(text)
    for line in capped_reasons([f"✗ {fail.get('name', '?')}: {fail.get('reason', '')}" for fail in report["failed"]]):
        st.text(line)
    if skipped:
        st.caption("Skipped (files in the zip of a type no loader reads; not added as documents):")
        for line in capped_reasons([f"– {skip.get('name', '?')}: {skip.get('reason', '')}" for skip in skipped]):
            st.text(line)
    if report.get("dropped"):
        st.caption(f"The extraction parser dropped {count(report['dropped'])} record(s) it could not use — see "
                   "“What the extraction dropped” below the status table.")
    usage_section(report)
