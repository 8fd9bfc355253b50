"""Recall of the two-stage vector search against exact, per collection and k, on a real workspace: python recall2.py WS"""
import sys, json, time
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1])); sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
import numpy as np
import million_tokens as mt
from core.storage import coarse_search as cs
from core.workspace import Workspace
ws = Workspace(sys.argv[1]); qs = mt.questions(30); qv = ws.embedder.embed(qs)
for coll in ("entities", "relations"):
    m = ws.vectors.matrix(coll)
    big = np.ascontiguousarray(np.vstack([m.vectors] * 10))
    for dims, cands in ((64, 400), (64, 1500), (96, 1000), (128, 1000), (128, 2000)):
        cs.COARSE_DIMS, cs.MIN_CANDIDATES = dims, cands
        idx = cs.CoarseIndex(m.vectors)
        rec = {}
        for k in (10, 40):
            r = []
            for v in qv:
                s = m.vectors @ v
                r.append(len(set(np.argpartition(-s, k - 1)[:k].tolist()) & set(idx.top_rows(v, k)[0].tolist())) / k)
            rec[k] = round(float(np.mean(r)), 4)
        bidx = cs.CoarseIndex(big); bidx.top_rows(qv[0], 40)
        t = time.process_time()
        for v in qv: bidx.top_rows(v, 40)
        tc = (time.process_time() - t) / len(qv) * 1000
        t = time.process_time()
        for v in qv:
            s = big @ v; np.argpartition(-s, 39)[:40]
        te = (time.process_time() - t) / len(qv) * 1000
        print(json.dumps({"coll": coll, "rows": len(m.ids), "dims": dims, "cands": cands, "recall": rec,
                          "ms_cpu_at_10x": {"coarse": round(tc, 2), "exact": round(te, 2), "rows": len(big)}}), flush=True)
