"""A hash of each mode's evidence chunk ids + context text per question, to diff two codes: python results.py CODE_DIR WS (CODE_DIR/../shared/data must exist)"""
import sys, json, hashlib
code, ws_path = sys.argv[1:3]
sys.path[:0] = [code, code + "/benchmarks"]
import million_tokens as mt
from core.workspace import Workspace
from core.retrieval.registry import query_context
from core.retrieval.registry import modes, retrieve
ws = Workspace(ws_path); out = {}
for mode in modes():
    for q in mt.questions(30):
        r = retrieve(query_context(ws, q), mode)
        out[f"{mode}|{q}"] = hashlib.sha256(json.dumps([[c.chunk_id for c in r.chunks], r.context_text]).encode()).hexdigest()
print(json.dumps(out))
