"""N concurrent sessions against one server, driven from a separate process (issue 38, item 6).

The server (``serve``) is one Python process that holds a workspace and answers each session's
questions with the same front-door call the Compare page makes (``core.api.run_modes``, all seven
modes, extractive answers, a viewer principal) — so it shares its work through ``core.fairness``'s
slots exactly as the Streamlit server does. It speaks plain HTTP (``POST /ask``, ``POST /index``,
``GET /stats``) on the loopback address; there is no browser and no Streamlit rendering on the
machine, so the numbers measure the server's service of concurrent sessions, not the browsers'.

The driver (``run``, the default) starts the server, waits for it, then for each N runs N client
threads — one per session, each asking ``--per-session`` questions of the sample set one after the
other — and reports per-N median and p95 latency, throughput (questions per second) and the
server's peak RSS, and how fairly the sessions were served: Jain's index over the sessions' mean
latencies (1.0 = every session waited the same) and the slowest session's mean over the fastest's.
``--indexer`` adds four sessions alone, the indexing of the sample corpus alone, and both at once
(a fifth client indexing into a scratch workspace of the same server, a heavy slot), back to back,
and reports the two fairness ratios: the readers' median with the indexer over without it, and the
indexing's time with the readers over alone (ratios of interleaved runs hold on a busy machine).

    python benchmarks/load_sessions.py --workspace WS [--n 1,4,8,16] [--per-session 3] [--indexer] [--port PORT]

``WS`` is an indexed workspace (e.g. ``python -m core index --workspace WS data/samples``). Results go
to ``benchmarks/results/load_sessions.json`` and stdout.
"""
from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from common import ROOT, median, p95, write_result

QUESTIONS = ROOT / "data" / "sample_questions.jsonl"


# --- the server ------------------------------------------------------------------------------------
def serve(workspace: str, port: int) -> None:
    import psutil

    from core import api
    from core.auth import Principal, Role
    from core.fairness import slots

    viewer = Principal("bench-viewer", "viewer@example.org", Role.viewer)
    editor = Principal("bench-editor", "editor@example.org", Role.editor)
    from core.workspace import Workspace

    ws = Workspace(Path(workspace))  # a folder given by the operator (no workspace name to resolve)
    peak = {"rss": 0}
    process = psutil.Process()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args) -> None:  # quiet
            return

        def _reply(self, data: dict) -> None:
            body = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802
            peak["rss"] = max(peak["rss"], process.memory_info().rss)
            self._reply({"rss_mb": process.memory_info().rss / 2**20, "peak_rss_mb": peak["rss"] / 2**20,
                         "slots": slots().snapshot()})

        def do_POST(self) -> None:  # noqa: N802
            payload = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            started = time.perf_counter()
            if self.path == "/ask":
                results = api.run_modes(viewer, ws, payload["question"], "all")
                out = {"modes": len(results)}
            elif self.path == "/index":
                target = Workspace(Path(payload["workspace"]))
                try:
                    report = api.index_uploads(editor, target, [(p.name, p.read_bytes())
                                                                for p in sorted(Path(payload["folder"]).glob("*.md"))])
                finally:
                    target.close()
                out = {"documents": report.processed}
            else:
                self.send_error(404)
                return
            peak["rss"] = max(peak["rss"], process.memory_info().rss)
            self._reply(out | {"seconds": time.perf_counter() - started})

    class Server(ThreadingHTTPServer):
        request_queue_size = 128  # every session connects at once (the default backlog of 5 refuses some)
        daemon_threads = True

    Server(("127.0.0.1", port), Handler).serve_forever()


# --- the driver ------------------------------------------------------------------------------------
def _post(port: int, path: str, data: dict, timeout: float = 3600) -> dict:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", json.dumps(data).encode(),
                                     {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def _get(port: int, path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=60) as response:
        return json.loads(response.read())


def sessions(port: int, n: int, per_session: int, questions: list[str]) -> dict:
    """``n`` sessions at once, each asking ``per_session`` questions in turn; latencies and throughput."""
    latencies: list[float] = []
    per_session_s: dict[int, list[float]] = {i: [] for i in range(n)}
    lock = threading.Lock()
    errors: list[str] = []

    def session(i: int) -> None:
        for j in range(per_session):
            question = questions[(i * per_session + j) % len(questions)]
            started = time.perf_counter()
            try:
                _post(port, "/ask", {"question": question})
            except Exception as exc:  # noqa: BLE001 - counted, reported
                errors.append(str(exc)[:200])
                continue
            with lock:
                latencies.append(time.perf_counter() - started)
                per_session_s[i].append(latencies[-1])

    began = time.perf_counter()
    threads = [threading.Thread(target=session, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.perf_counter() - began
    means = [sum(v) / len(v) for v in per_session_s.values() if v]
    return {"sessions": n, "questions": len(latencies), "median_s": round(median(latencies), 2),
            "p95_s": round(p95(latencies), 2), "throughput_qps": round(len(latencies) / wall, 2),
            "jain_fairness": round(jain_index(means), 3),
            "slowest_to_fastest_session": round(max(means) / min(means), 2) if means and min(means) > 0 else None,
            "wall_s": round(wall, 1), "errors": len(errors), "error_examples": errors[:2], "server_peak_rss_mb": round(_get(port, "/stats")["peak_rss_mb"])}


def jain_index(values: list[float]) -> float:
    """Jain's fairness index of the sessions' mean latencies: 1.0 when every session waited the same,
    1/n when one session got all the service; 1.0 for no values."""
    if not values or not any(values):
        return 1.0
    return sum(values) ** 2 / (len(values) * sum(v * v for v in values))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--n", default="1,4,8,16")
    parser.add_argument("--per-session", type=int, default=3)
    parser.add_argument("--indexer", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help="the server's port (default: a free one)")
    args = parser.parse_args()
    if args.serve:
        serve(args.workspace, args.port)
        return
    port = args.port
    if not port:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, __file__, "--serve", "--workspace", args.workspace, "--port", str(port)],
                              cwd=ROOT)
    try:
        for _ in range(600):
            try:
                _get(port, "/stats")
                break
            except OSError:
                time.sleep(0.5)
        questions = [json.loads(line)["question"] for line in QUESTIONS.read_text().splitlines() if line.strip()]
        _post(port, "/ask", {"question": questions[0]})  # warm-up: models loaded once, not timed
        rows = []
        for n in [int(x) for x in args.n.split(",")]:
            row = sessions(port, n, args.per_session, questions)
            rows.append(row)
            print(json.dumps(row), flush=True)
        out: dict = {"rows": rows, "slots": _get(port, "/stats")["slots"]["size"]}
        if args.indexer:
            out["indexer"] = indexer_run(port, args.per_session, questions)
            print(json.dumps(out["indexer"]), flush=True)
        write_result("load_sessions", out)
    finally:
        server.terminate()
        server.wait(30)


def indexer_run(port: int, per_session: int, questions: list[str]) -> dict:
    """Four readers alone, the indexing of the sample corpus alone, then both at once, back to back
    (interleaved, so the ratios compare runs under the same machine load). A first, untimed indexing
    loads spaCy and the embedding model in the server, so neither timed run pays for that.

    ``reader_slowdown`` = the readers' median with the indexer / without it (1.0: the indexer costs the
    readers nothing); ``indexer_slowdown`` = the indexing's time with the readers / alone."""
    folder = ROOT / "data" / "samples"
    scratch = Path(tempfile.mkdtemp(prefix="load_sessions_"))

    def index(name: str) -> float:
        return _post(port, "/index", {"workspace": str(scratch / name), "folder": str(folder)})["seconds"]

    try:
        index("warm")  # models loaded, not timed
        readers_alone = sessions(port, 4, per_session, questions)
        alone = index("alone")
        timing: dict = {}
        thread = threading.Thread(target=lambda: timing.update(seconds=index("busy")))
        thread.start()
        time.sleep(1.0)  # the indexing has taken its heavy slot before the readers arrive
        readers = sessions(port, 4, per_session, questions)
        thread.join()
        return {"index_alone_s": round(alone, 1), "index_with_4_readers_s": round(timing["seconds"], 1),
                "indexer_slowdown": round(timing["seconds"] / alone, 2),
                "readers_alone": readers_alone, "readers": readers,
                "reader_slowdown": round(readers["median_s"] / readers_alone["median_s"], 2)}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
