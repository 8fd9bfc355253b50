"""A second process that holds a workspace's write lock until told to let go (the locking tests).

``start_holder(folder)`` starts ``python -c HOLDER folder`` offline, waits until it prints ``locked``
and returns it; a line on its stdin (or closing stdin) releases the lock, and it prints ``released``.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False",
           PYTHONUNBUFFERED="1")

HOLDER = textwrap.dedent("""
    import sys
    from core.workspace import Workspace
    ws = Workspace(sys.argv[1])
    with ws.writer():
        print("locked", flush=True)
        sys.stdin.readline()
    print("released", flush=True)
""")


def start_holder(folder: Path) -> subprocess.Popen:
    """The holder process, once it holds ``folder``'s write lock."""
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(folder)], cwd=ROOT, env=ENV, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stdout.readline().strip()
    assert line == "locked", proc.stderr.read()
    return proc
