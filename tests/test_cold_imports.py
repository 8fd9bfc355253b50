"""A cold ``query`` loads only what it uses (issue 32, item 8): spaCy comes without torch (its array library
imports torch only to recognise torch tensors) and scipy waits for the ppr mode's matrix. On an int8
workspace that is ~1.9 s of CPU less per ``query`` process."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import sys
from core.retrieval.registry import registry
registry()  # every mode's retriever built, as a query builds them; the offline keyword parser with them
from core.extraction.nlp import load_nlp
doc = load_nlp()("Agnes Marlowe kept the Kestrel Point Lighthouse near Port Sallow from 1931.")
print(sorted({e.label_ for e in doc.ents}))
print("torch" in sys.modules, "scipy" in sys.modules)
import torch  # anyone else may still import it
from core.retrieval.ppr_graph import build_matrix
print(type(torch.zeros(1)).__name__, build_matrix(["a", "b"], [("a", "b", 1.0)]).transition.shape)
"""


def test_spacy_and_the_modes_load_without_torch_or_scipy() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    labels, loaded, later = out.stdout.strip().splitlines()
    assert "PERSON" in labels  # the pipeline parses as before
    assert loaded == "False False"
    assert later == "Tensor (2, 2)"
