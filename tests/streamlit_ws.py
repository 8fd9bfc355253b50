"""A minimal client of Streamlit's own browser protocol, for the session-churn test and benchmark.

A browser tab is one websocket on ``/_stcore/stream`` (subprotocol ``streamlit``): the client sends a
``BackMsg`` with ``rerun_script`` (the page to run, its query string) and the server streams
``ForwardMsg``s until ``script_finished``. ``open_session`` does exactly that and closes the socket, as a
tab that is closed after the page rendered; the server then disconnects that session as it would a
real tab's. No browser is started, so 200 sessions cost the server's work only.

``serve_app(data, log)`` starts ``streamlit run app.py`` over a data folder and yields ``(url, pid)``;
``rss_mb(pid)`` is the server process's resident memory; ``churn(url, n)`` opens and closes ``n``
sessions one after the other, going round the app's pages.

``connect(url, cookies)`` opens a tab's websocket as a signed-in browser does (its session cookies, the
XSRF token Streamlit's frontend sends as the second subprotocol, a same-origin ``Origin``) and
``run_page(conn, page, query, states)`` sends one rerun with any widget states: a crafted request, the
way an attacker who scripts the protocol would send it (tests/test_crafted_rerun.py).
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
# the pages a session opens in turn ("" is the default page, Documents)
PAGES: tuple[str, ...] = ("", "knowledge_graph", "compare", "inspect", "evaluate", "summary_tree")
OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
               "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
DROPPED_ENV = ("RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "RAGSCOPE_ROLES", "RAGSCOPE_WORKSPACE")


class SessionError(RuntimeError):
    """The server closed a session early or its script did not finish in time."""


def _run(conn, page: str, query: str, states: Sequence[Any], timeout_s: float,
         alerts: Optional[list[str]] = None) -> dict[str, tuple[str, str]]:
    """Send one rerun of ``page`` with ``states`` (WidgetState messages) and read until the script
    finished; returns the widgets it drew, ``{label: (kind, widget id)}``; the texts of the alerts and
    exceptions it drew are appended to ``alerts``."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    back = BackMsg()
    back.rerun_script.query_string = query
    back.rerun_script.page_name = page
    back.rerun_script.widget_states.widgets.extend(states)
    conn.send_binary(back.SerializeToString())
    deadline = time.monotonic() + timeout_s
    widgets: dict[str, tuple[str, str]] = {}
    while time.monotonic() < deadline:
        data = conn.recv()
        if not data:
            raise SessionError(f"{page or 'default page'}: the server closed the session")
        msg = ForwardMsg()
        msg.ParseFromString(data)
        kind = msg.WhichOneof("type")
        if kind == "script_finished":
            if msg.script_finished == msg.FINISHED_EARLY_FOR_RERUN:
                widgets = {}  # the app reruns at once (e.g. it set the URL's workspace): wait for that run
                continue
            return widgets
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            name = element.WhichOneof("type")
            inner = getattr(element, name) if name else None
            if alerts is not None and name in ("alert", "exception"):
                alerts.append(inner.body if name == "alert" else f"{inner.type}: {inner.message}")
            if inner is not None and getattr(inner, "id", "") and hasattr(inner, "label"):
                widgets.setdefault(inner.label, (name, inner.id))
    raise SessionError(f"{page or 'default page'}: the script did not finish in {timeout_s} s")


def run_page(conn: Any, page: str, query: str = "", states: Sequence[Any] = (), timeout_s: float = 300.0,
             alerts: Optional[list[str]] = None) -> dict[str, tuple[str, str]]:
    """Send one rerun of ``page`` with the widget states ``states`` on an open connection; returns the
    widgets that run drew, ``{label: (kind, widget id)}`` (alert texts appended to ``alerts``)."""
    return _run(conn, page, query, states, timeout_s, alerts)


def connect(url: str, cookies: Optional[Mapping[str, str]] = None, timeout_s: float = 300.0) -> Any:
    """A tab's websocket to the app at ``url`` carrying a browser's ``cookies`` (name -> value): with
    Streamlit's XSRF cookie among them its value goes as the token, as the frontend sends it."""
    import websocket  # websocket-client

    ws_url = url.replace("http://", "ws://", 1).rstrip("/") + "/_stcore/stream"
    cookies = dict(cookies or {})
    protocols = ["streamlit"] + ([cookies["_streamlit_xsrf"]] if cookies.get("_streamlit_xsrf") else [])
    header = "; ".join(f"{name}={value}" for name, value in cookies.items())
    return websocket.create_connection(ws_url, subprotocols=protocols, timeout=timeout_s, origin=url.rstrip("/"),
                                       cookie=header or None)


def open_session(url: str, page: str = "", query: str = "", question: Optional[str] = None,
                 timeout_s: float = 300.0) -> int:
    """One tab: connect, run ``page`` once and, given a ``question``, type it in the page's "Question"
    box and press "Run" (the Compare and Inspect pages), then close. Returns the number of widgets the
    last run drew; raises SessionError when a script did not finish or the page has no such widgets."""
    import websocket  # websocket-client
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    ws_url = url.replace("http://", "ws://", 1).rstrip("/") + "/_stcore/stream"
    conn = websocket.create_connection(ws_url, subprotocols=["streamlit"], timeout=timeout_s)
    try:
        widgets = _run(conn, page, query, [], timeout_s)
        if question is None:
            return len(widgets)
        if "Question" not in widgets or "Run" not in widgets:
            raise SessionError(f"{page}: no Question box and Run button among {sorted(widgets)}")
        text = WidgetState(id=widgets["Question"][1], string_value=question)
        press = WidgetState(id=widgets["Run"][1], trigger_value=True)
        return len(_run(conn, page, query, [text, press], timeout_s))
    finally:
        conn.close()


def churn(url: str, n: int, pages: Sequence[str] = PAGES, questions: Sequence[str] = (), query: str = "") -> None:
    """Open and close ``n`` sessions one after the other, page after page; with ``questions``, every
    session asks the next one on Compare instead (all modes, the results kept in its session state)."""
    for i in range(n):
        if questions:
            open_session(url, "compare", query, questions[i % len(questions)])
        else:
            open_session(url, pages[i % len(pages)], query)


def rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` in MB."""
    import psutil

    return psutil.Process(pid).memory_info().rss / 2**20


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(url: str, proc: subprocess.Popen, log: Path, timeout_s: float = 180) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited:\n{log.read_text(errors='replace')[-3000:]}")
        try:
            urllib.request.urlopen(url, timeout=2).read()
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer in {timeout_s} s:\n{log.read_text(errors='replace')[-3000:]}")


@contextmanager
def serve_app(data: Path, log: Path, env: Optional[Mapping[str, str]] = None,
              args: Sequence[str] = (), launcher: Optional[Sequence[str]] = None,
              port: Optional[int] = None) -> Iterator[tuple[str, int]]:
    """``streamlit run app.py`` over the data folder ``data`` (offline, on ``port`` or a free loopback
    port); yields ``(url, server pid)`` and stops the server afterwards. ``launcher`` replaces
    ``python -m streamlit`` (a script that prepares the server process first)."""
    port = port or free_port()
    run_env = dict(os.environ, RAGSCOPE_DATA_DIR=str(data), **OFFLINE_ENV)
    for name in DROPPED_ENV:
        run_env.pop(name, None)
    run_env.update(env or {})
    command = [*(launcher or [sys.executable, "-m", "streamlit"]), "run", "app.py", "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.headless", "true", *args]
    url = f"http://127.0.0.1:{port}"
    with open(log, "w") as out:
        proc = subprocess.Popen(command, cwd=ROOT, env=run_env, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait(url + "/_stcore/health", proc, log)
        yield url, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
