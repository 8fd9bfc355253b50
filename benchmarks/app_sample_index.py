"""In-app vs library indexing time of the sample corpus, back to back on the same machine.

    python benchmarks/app_sample_index.py [--runs 1] [--order app,library]

* app: ``streamlit run app.py`` on a free port with an empty data folder; headless Chromium (Playwright)
  opens the Documents page, puts the eleven data/samples articles in the file uploader and presses
  "Index uploaded files"; the time runs from that click until the page says "Indexed 11 document(s)"
  (the page's own figure, "in N s", is reported beside it). The server is started fresh for each run, so
  the app's time includes loading the language and embedding models, as the library's does.
* library: ``python -m core index data/samples/*.md --workspace <fresh tmp> --quiet`` (a new process:
  import, model load and indexing), wall clock.

Prints one line per run and the ratio app / library (goal: within 1.5x, and at most 30 s on an idle
machine), with the CPU seconds (user + sys) of each side beside the wall clock, so that a run on a
busy machine can still be compared: the server process's CPU from the click to "Indexed" (its start-up
and warm-up before the click are printed apart), the library process's whole CPU. ``--profile FILE``
samples the server with py-spy (if installed) from the click to the end, in py-spy's collapsed-stack
format (one line per stack with its sample count). Needs /usr/bin/chromium and playwright
(requirements-test.txt)."""
from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = sorted((ROOT / "data" / "samples").glob("[0-9]*.md"))
ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False",
           STREAMLIT_BROWSER_GATHER_USAGE_STATS="false")
for _name in ("RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL"):
    ENV.pop(_name, None)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def process_cpu(pid: int) -> float:
    """User + system CPU seconds of a running process (all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def library_run() -> tuple[float, float]:
    """(wall s, CPU s) of ``python -m core index`` in a new process."""
    with tempfile.TemporaryDirectory(prefix="ragscope-libidx-") as tmp:
        cpu, start = children_cpu(), time.perf_counter()
        subprocess.run([sys.executable, "-m", "core", "index", *map(str, SAMPLES), "--workspace",
                        str(Path(tmp) / "ws"), "--quiet"], cwd=ROOT, env=ENV, check=True,
                       stdout=subprocess.DEVNULL)
        return time.perf_counter() - start, children_cpu() - cpu


def app_run(profile: str = "") -> dict[str, float]:
    """wall (click → "Indexed"), said (the page's figure), cpu (server CPU over the same span),
    cpu_before (server CPU from its start to the click: start-up, first page, warm-up)."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="ragscope-appidx-") as tmp:
        port = free_port()
        env = dict(ENV, RAGSCOPE_DATA_DIR=tmp)
        proc = subprocess.Popen([sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
                                 "--server.address", "127.0.0.1", "--server.headless", "true"],
                                cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + 120
            while time.time() < deadline:
                try:
                    if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read().strip() == b"ok":
                        break
                except OSError:
                    time.sleep(0.5)
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path="/usr/bin/chromium",
                                             args=["--headless", "--no-sandbox", "--disable-gpu"])
                tab = browser.new_page(viewport={"width": 1400, "height": 1000})
                tab.goto(url, wait_until="domcontentloaded")
                tab.get_by_role("heading", name="Documents").first.wait_for(timeout=120_000)
                tab.locator('[data-testid="stFileUploader"] input[type="file"][multiple]').set_input_files(
                    [str(p) for p in SAMPLES])
                tab.wait_for_function("() => [...document.querySelectorAll('button')].some(b => "
                                      "b.innerText.includes('Index uploaded files') && !b.disabled)", timeout=60_000)
                spy = None
                if profile and shutil.which("py-spy"):
                    spy = subprocess.Popen(["py-spy", "record", "--pid", str(proc.pid), "--rate", "50",
                                            "--format", "raw", "--output", profile, "--nonblocking"],
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                cpu_before, start = process_cpu(proc.pid), time.perf_counter()
                tab.get_by_role("button", name="Index uploaded files").click()
                done = tab.get_by_text(re.compile(rf"Indexed {len(SAMPLES)} document\(s\) in [\d.]+ s")).first
                done.wait_for(timeout=30 * 60 * 1000)
                wall, cpu = time.perf_counter() - start, process_cpu(proc.pid) - cpu_before
                said = float(re.search(r"in ([\d.]+) s", done.inner_text()).group(1))
                if spy is not None:
                    spy.send_signal(signal.SIGINT)  # py-spy writes its file on SIGINT
                    spy.wait(timeout=60)
                browser.close()
            return {"wall": wall, "said": said, "cpu": cpu, "cpu_before": cpu_before}
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
            shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--order", default="app,library")
    parser.add_argument("--profile", default="", help="py-spy collapsed stacks of the server's job to this file")
    args = parser.parse_args()
    for run in range(args.runs):
        times: dict[str, float] = {}
        cpus: dict[str, float] = {}
        for what in args.order.split(","):
            load = os.getloadavg()[0]
            if what == "app":
                app = app_run(args.profile)
                times["app"], cpus["app"] = app["wall"], app["cpu"]
                print(f"run {run + 1} app: {app['wall']:.1f} s wall (page said {app['said']:.1f} s), "
                      f"server CPU {app['cpu']:.1f} s from the click ({app['cpu_before']:.1f} s before it), "
                      f"load {load:.2f}", flush=True)
            else:
                times["library"], cpus["library"] = library_run()
                print(f"run {run + 1} library: {times['library']:.1f} s wall, CPU {cpus['library']:.1f} s, "
                      f"load {load:.2f}", flush=True)
        if len(times) == 2:
            print(f"run {run + 1} ratio app/library: wall {times['app'] / times['library']:.2f}, "
                  f"CPU {cpus['app'] / cpus['library']:.2f}", flush=True)


if __name__ == "__main__":
    main()
