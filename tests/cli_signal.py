"""Start ``python -m core index`` on a file, send it a signal once its progress shows a marker, and
collect how it ended (the CLI-interrupt tests of issue 38)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from lock_holder import ROOT

ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")


def index_until_signalled(source: Path, workspace: Path, marker: bytes, sig: int = signal.SIGTERM,
                          seen_within_s: float = 300, delay_s: float = 0.0,
                          exit_within_s: float = 120) -> tuple[int, float, str]:
    """Run the CLI's ``index`` of ``source`` into ``workspace``; when ``marker`` appears on its stderr (and
    ``delay_s`` later) send ``sig``. Returns (exit code, seconds from the signal to the exit, stderr)."""
    proc = subprocess.Popen([sys.executable, "-m", "core", "index", "--workspace", str(workspace), "--offline",
                             str(source)], cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = threading.Event()
    err: list[bytes] = []

    def read() -> None:
        assert proc.stderr is not None
        for chunk in iter(lambda: proc.stderr.read1(4096), b""):
            err.append(chunk)
            if marker in b"".join(err[-2:]):
                seen.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert seen.wait(seen_within_s), b"".join(err)[-2000:]
        time.sleep(delay_s)
        sent = time.perf_counter()
        proc.send_signal(sig)
        proc.wait(timeout=exit_within_s)
        waited = time.perf_counter() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(10)
    return proc.returncode, waited, b"".join(err).decode("utf-8", "replace")
