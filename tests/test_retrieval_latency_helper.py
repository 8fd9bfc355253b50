"""benchmarks/retrieval_latency.py says per mode whether the int8 embedder's helper thread was on
(``helper_share``): under ``RAGSCOPE_QUERY_HELPER=auto`` a loaded machine times the one-thread path, so
wall times of two runs compare only at equal shares."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))


def test_helper_on_follows_the_setting_and_the_load(monkeypatch):
    import core.onnx_embeddings as onnx_embeddings
    import retrieval_latency  # benchmarks/retrieval_latency.py

    monkeypatch.setattr(onnx_embeddings.os, "cpu_count", lambda: 2)
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "1")
    assert retrieval_latency.helper_on() is True
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "0")
    assert retrieval_latency.helper_on() is False
    monkeypatch.setenv("RAGSCOPE_QUERY_HELPER", "auto")
    monkeypatch.setattr(onnx_embeddings, "_load_average", lambda: 5.0)
    assert retrieval_latency.helper_on() is False  # a loaded machine: the one-thread path is timed
    monkeypatch.setattr(onnx_embeddings, "_load_average", lambda: 0.5)
    assert retrieval_latency.helper_on() is True
