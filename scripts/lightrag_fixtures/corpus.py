"""The fixture corpus's knowledge and the offline stand-ins LightRAG needs besides an LLM: its tokenizer's
BPE file (seeded into tiktoken's cache from the ``bpe-openai`` package) and a deterministic embedder.
Used by ``scripts/make_lightrag_fixtures.py`` inside the LightRAG virtual environment."""
from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
DIM = 64
CHUNK_TOKENS, CHUNK_OVERLAP = 90, 15  # small chunks: every fixture document has two or three
CHANGED_FILE, DELETED_FILE = "greer-ironworks.md", "calder-bay.md"
CHANGED_TEXT_SUFFIX = " In 1990 the old foundry hall of Greer Ironworks became the Linmouth Museum of Industry."

# the fixture corpus's names and their types (the stand-in's "knowledge"); other corpora use capitalised runs
GAZETTEER = {
    "Brennock Observatory": "organization", "Tarn Ridge": "location", "Harlow Valley": "location",
    "Ada Vell": "person", "Greer Ironworks": "organization", "Linmouth University": "organization",
    "Orrin Pell": "person", "Harlow Valley Railway": "organization", "Tomas Greer": "person",
    "Linmouth": "location", "River Lin": "location", "Vell Library": "organization",
    "Calder Bay Marine Station": "organization", "Calder Bay": "location", "Mara Oduya": "person",
    "Calder Bay Lifeboat Station": "organization", "Wren": "artifact", "Elin Greer": "person",
    "Linmouth Museum of Industry": "organization",
}
STOP = set("a an the and or of in on at to for from by with as is was were be been its his her their this that "
           "it he she they there which who whom whose also then than into over under each every before after "
           "until since".split())


def seed_tiktoken(cache_dir: Path) -> None:
    """Put o200k_base where tiktoken looks first (TIKTOKEN_CACHE_DIR/sha1(url)), from the bpe-openai package."""
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache_dir)
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / hashlib.sha1(O200K_URL.encode()).hexdigest()
    if target.exists() and hashlib.sha256(target.read_bytes()).hexdigest() == O200K_SHA256:
        return
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("bpe-openai is not installed in this environment (run bash scripts/install-lightrag.sh)")
    packed = Path(list(spec.submodule_search_locations)[0]) / "data" / "o200k_base.tiktoken.gz"
    data = gzip.decompress(packed.read_bytes())
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        sys.exit(f"{packed} does not match tiktoken's sha256 for o200k_base")
    target.write_bytes(data)


class HashEmbedder:
    """Deterministic bag-of-words vectors: each lower-cased word adds ±1 at sha1-chosen positions."""

    def __init__(self, dim: int = DIM) -> None:
        self.dim = dim

    def vector(self, text: str) -> np.ndarray:
        out = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            if word in STOP:
                continue
            digest = hashlib.sha1(word.encode()).digest()
            for k in range(2):
                out[digest[2 * k] % self.dim] += 1.0 if digest[2 * k + 1] % 2 else -1.0
        norm = float(np.linalg.norm(out))
        if not norm:  # nothing but stop words: a fixed unit vector (NanoVectorDB divides by the norm)
            out[0], norm = 1.0, 1.0
        return out / norm

    async def __call__(self, texts: list[str], **_: Any) -> np.ndarray:
        return np.stack([self.vector(t) for t in texts]) if texts else np.zeros((0, self.dim), dtype=np.float32)



def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def doc_text(row: dict) -> str:
    title, text = row.get("title", ""), row.get("text", "")
    return f"{title}\n{text}" if title else text
