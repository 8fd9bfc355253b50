"""Session churn against the real Streamlit server: N sessions opened and closed, the server's memory.

A session is one websocket on Streamlit's own browser protocol (``tests/streamlit_ws.py``): it runs a
page and, every other session, types a sample question on Compare and presses Run (all modes, the
results kept in its session state, as a tab does), then closes. Sessions run one after the other from
this process; the server is a separate ``streamlit run app.py`` over a copy of ``--workspace``.

The growth is measured from the server's RSS after a warm-up (every question asked once and every page
opened once, so the models and the bounded caches are loaded) to its RSS ``--settle`` seconds (40)
after the last session closed. Streamlit keeps a closed session (its whole ``st.session_state``) for
reconnection for ``server.disconnectedSessionTTL`` seconds (at most 128 of them) and drops expired
ones when another session disconnects; the benchmark waits ``--settle`` seconds, opens and closes one
more session, and reads the RSS (``after``); when the TTL is longer than that it waits for the TTL too
and reads it again (``expired``); then a session comes and goes every 10 s and the lowest RSS is kept,
at most ``--extra`` seconds (180) more (``back``: closed sessions are freed once the TTL has passed and
the next 20 s collection has run). ``--ttl`` overrides the configured TTL (``.streamlit/config.toml``,
30 s), e.g. ``--ttl 120`` for Streamlit's default.

    python benchmarks/session_churn.py --workspace WS [--sessions 200] [--ttl SECONDS] [--settle SECONDS]
        [--batch 25] [--port PORT]

The slope is a least-squares fit of the RSS against the sessions opened, over every reading after the
first (MB per 100 sessions), printed with the median RSS of the first and second half of the readings:
flat memory reads a slope near 0 and two equal medians however long the churn runs.

``WS`` is an indexed workspace (``python -m core index --workspace WS data/samples``). Results go to
``benchmarks/results/session_churn.json`` and stdout.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Optional

from common import ROOT, write_result

sys.path.insert(0, str(ROOT / "tests"))
from streamlit_ws import PAGES, open_session, rss_mb, serve_app  # noqa: E402

QUESTIONS = ROOT / "data" / "sample_questions.jsonl"


SETTLE_POLL_S = 10


def configured_ttl() -> int:
    """``server.disconnectedSessionTTL`` of the app's ``.streamlit/config.toml`` (120: Streamlit's default)."""
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    return int(config.get("server", {}).get("disconnectedSessionTTL", 120))


def questions() -> list[str]:
    return [json.loads(line)["question"] for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]


def one_session(url: str, i: int, asked: list[str]) -> None:
    """Session ``i``: even ones ask a question on Compare, odd ones open a page."""
    if i % 2 == 0:
        open_session(url, "compare", question=asked[(i // 2) % len(asked)])
    else:
        open_session(url, PAGES[(i // 2) % len(PAGES)])


def slope_mb_per_100(rows: list[dict[str, Any]]) -> float:
    """Least-squares slope of the server's RSS against the sessions opened so far, in MB per 100
    sessions, over every reading after the first (the first one is still inside the climb to the
    steady number of sessions kept for the TTL); 0.0 with fewer than two such readings."""
    import statistics

    tail = rows[1:]
    if len(tail) < 2:
        return 0.0
    fit = statistics.linear_regression([r["sessions"] for r in tail], [r["rss_mb"] for r in tail])
    return round(fit.slope * 100, 2)


def half_medians(rows: list[dict[str, Any]]) -> tuple[float, float]:
    """Median RSS (MB) of the first and of the second half of the readings: equal when memory is flat."""
    import statistics

    half = max(1, len(rows) // 2)
    first, second = rows[:half], rows[half:] or rows[:half]
    return (round(statistics.median(r["rss_mb"] for r in first), 1),
            round(statistics.median(r["rss_mb"] for r in second), 1))


def settled_rss(url: str, pid: int, last: float, churn_end: float, extra_s: float,
                back_below_mb: Optional[float] = None) -> tuple[float, float]:
    """The server's RSS once the closed sessions are gone: every ``SETTLE_POLL_S`` a session comes and goes
    (Streamlit drops expired sessions when one leaves; the housekeeping collects every 20 s) and the lowest
    reading is kept, until a reading is below ``back_below_mb`` (when given) or ``extra_s`` have passed.
    After a fast churn the memory comes back 60–90 s after it (the TTL, then the next collection; on a busy
    machine the closed sessions' last script runs finish long after their sockets closed), and the RSS can
    stay flat for a while before it drops, so "two equal readings" is no sign of being settled. Returns
    (lowest RSS, seconds after the churn when it was read)."""
    deadline = time.perf_counter() + extra_s
    lowest, lowest_at = last, time.perf_counter() - churn_end
    while time.perf_counter() < deadline and not (back_below_mb is not None and lowest < back_below_mb):
        time.sleep(SETTLE_POLL_S)
        open_session(url, "")
        now = rss_mb(pid)
        if now < lowest:
            lowest, lowest_at = now, time.perf_counter() - churn_end
    return lowest, lowest_at


def measure(workspace: Path, sessions: int = 200, ttl: Optional[int] = None, settle_s: float = 40,
            batch: int = 25, log_dir: Optional[Path] = None, echo: bool = True,
            port: Optional[int] = None, extra_s: float = 180,
            back_within_mb: Optional[float] = None) -> dict[str, Any]:
    """Serve a copy of ``workspace``, warm it, churn ``sessions`` sessions and return the RSS figures
    (MB): ``start`` after the warm-up, ``peak`` during the churn, ``after`` ``settle_s`` seconds after
    the churn (``growth`` = after - start), ``expired`` once the TTL has passed too, ``back`` once the
    RSS is back (``settled_rss``: the lowest reading, at most ``extra_s`` later, stopping early once within
    ``back_within_mb`` of ``start`` when given; ``back_growth`` = back - start)."""
    ttl = configured_ttl() if ttl is None else ttl
    asked = questions()
    with tempfile.TemporaryDirectory(prefix="churn-") as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(workspace, data / "default")
        log = (log_dir or Path(tmp)) / "streamlit-churn.log"
        args = ["--server.disconnectedSessionTTL", str(ttl)]
        with serve_app(data, log, args=args, port=port) as (url, pid):
            started = time.perf_counter()
            for question in asked:  # warm-up: models, views and every question's caches
                open_session(url, "compare", question=question)
            for page in PAGES:
                open_session(url, page)
            time.sleep(ttl + 2)
            open_session(url, "")  # expires the warm-up's sessions
            start = peak = rss_mb(pid)
            warm_s = time.perf_counter() - started
            rows = []
            began = time.perf_counter()
            for i in range(sessions):
                one_session(url, i, asked)
                if (i + 1) % batch == 0 or i + 1 == sessions:
                    now = rss_mb(pid)
                    peak = max(peak, now)
                    rows.append({"sessions": i + 1, "rss_mb": round(now, 1), "growth_mb": round(now - start, 1)})
                    if echo:
                        print(f"{i + 1:4d} sessions  RSS {now:7.1f} MB  growth {now - start:+6.1f} MB", flush=True)
            churn_s = time.perf_counter() - began
            time.sleep(settle_s)
            open_session(url, "")  # Streamlit drops expired sessions when another one leaves
            after = expired = rss_mb(pid)
            if ttl + 2 > settle_s:
                time.sleep(ttl + 2 - settle_s)
                open_session(url, "")
                expired = rss_mb(pid)
            back_below = None if back_within_mb is None else start + back_within_mb
            back, back_s = settled_rss(url, pid, min(after, expired), began + churn_s, extra_s, back_below)
    return {"sessions": sessions, "ttl_s": ttl, "settle_s": settle_s, "warm_s": round(warm_s, 1),
            "churn_s": round(churn_s, 1), "start_mb": round(start, 1), "peak_mb": round(peak, 1),
            "after_mb": round(after, 1), "expired_mb": round(expired, 1), "growth_mb": round(after - start, 1),
            "back_mb": round(back, 1), "back_s": round(back_s, 1), "back_growth_mb": round(back - start, 1),
            "peak_growth_mb": round(peak - start, 1), "expired_growth_mb": round(expired - start, 1),
            "slope_mb_per_100": slope_mb_per_100(rows), "half_medians_mb": half_medians(rows), "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workspace", required=True, type=Path, help="an indexed workspace folder (copied)")
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--ttl", type=int, default=None, help="server.disconnectedSessionTTL (default: the app's config)")
    parser.add_argument("--settle", type=float, default=40, help="seconds after the churn before the RSS is read")
    parser.add_argument("--batch", type=int, default=25, help="sessions between two RSS readings")
    parser.add_argument("--port", type=int, default=None, help="the server's port (default: a free one)")
    parser.add_argument("--extra", type=float, default=180, help="at most this many more seconds of readings for the lowest RSS")
    args = parser.parse_args()
    r = measure(args.workspace, args.sessions, args.ttl, args.settle, batch=args.batch, port=args.port,
                extra_s=args.extra)
    print(f"\n{r['sessions']} sessions, TTL {r['ttl_s']} s: start {r['start_mb']} MB, peak {r['peak_mb']} MB "
          f"({r['peak_growth_mb']:+}), {r['settle_s']:g} s after the churn {r['after_mb']} MB "
          f"(growth {r['growth_mb']:+} MB), after the TTL {r['expired_mb']} MB ({r['expired_growth_mb']:+}); "
          f"churn {r['churn_s']} s; slope {r['slope_mb_per_100']:+} MB per 100 sessions, median RSS of the first / "
          f"second half of the readings {r['half_medians_mb'][0]} / {r['half_medians_mb'][1]} MB; lowest "
          f"{r['back_s']} s after the churn at {r['back_mb']} MB ({r['back_growth_mb']:+})")
    name = "session_churn" if args.ttl is None else f"session_churn_ttl{args.ttl}"
    write_result(name, r)


if __name__ == "__main__":
    main()
