"""numpy's BLAS runs on one thread once the exact vector search exists (core/storage/vector_search.py,
``one_blas_thread``): on a Compare click a second OpenBLAS thread only adds hand-offs and a spinning wait
(175 -> 101 ms of process CPU on dev_musique_full), and one thread makes a product's rounding independent
of the machine's core count. Checked in a fresh interpreter, since the setting is per process."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import numpy  # noqa: F401 - loads the BLAS
from threadpoolctl import threadpool_info, threadpool_limits
threadpool_limits(limits=2, user_api="blas")  # as numpy starts on a machine with two cores or more
def threads():
    return sorted({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})
before = threads()
from core.storage.vector_search import MatrixSearch
MatrixSearch(lambda collection: None)
print(before, threads())
"""


def _probe(**env: str) -> str:
    """The probe's output in a fresh interpreter whose environment has only the given RAGSCOPE_BLAS_THREADS."""
    base = {k: v for k, v in os.environ.items() if k != "RAGSCOPE_BLAS_THREADS"}
    run = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**base, "PYTHONPATH": str(ROOT), **env})
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def test_the_vector_search_sets_one_blas_thread() -> None:
    assert _probe() == "[2] [1]"


def test_the_count_can_be_chosen_or_left_to_the_library() -> None:
    assert _probe(RAGSCOPE_BLAS_THREADS="0") == "[2] [2]"
    assert _probe(RAGSCOPE_BLAS_THREADS="1") == "[2] [1]"
