"""python growth.py WS [tile]: retrieval CPU/wall median per mode over the benchmark's 20 questions.
tile=N: the vector matrices tiled N times with keys renamed like the dmf10 graph (key~k), so vectors grow with the graph."""
import sys, time, json
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1])); sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2]))
import numpy as np
tile = int(sys.argv[2]) if len(sys.argv) > 2 else 1
if tile > 1:
    from core.storage import vectors as vmod
    orig = vmod.VectorStore.matrix
    def matrix(self, name):
        m = orig(self, name)
        if name not in ("entities", "relations"):
            return m
        ids, vecs, metas = list(m.ids), [m.vectors], list(m.metadatas)
        for k in range(1, tile):
            ids += [f"{i}~{k}" for i in m.ids]
            vecs.append(m.vectors)
            if name == "entities":
                metas += [dict(md, key=f"{md.get('key')}~{k}") for md in m.metadatas]
            else:
                metas += [dict(md, source=min(f"{md.get('source')}~{k}", f"{md.get('target')}~{k}"),
                               target=max(f"{md.get('source')}~{k}", f"{md.get('target')}~{k}")) for md in m.metadatas]
        return vmod.VectorMatrix(ids, np.ascontiguousarray(np.vstack(vecs)), metas)
    vmod.VectorStore.matrix = matrix
import million_tokens as mt
from core.workspace import Workspace
from core.retrieval.registry import query_context
from core.retrieval.registry import modes, retrieve
ws = Workspace(sys.argv[1])
qs = mt.questions(20)
out = {}
for mode in modes():
    retrieve(query_context(ws, "warm-up question about a place"), mode)
    w, c = [], []
    for q in qs:
        ctx = query_context(ws, q); t, p = time.perf_counter(), time.process_time()
        retrieve(ctx, mode); w.append((time.perf_counter() - t) * 1000); c.append((time.process_time() - p) * 1000)
    out[mode] = (round(mt.median(c), 1), round(mt.median(w), 1))
print(json.dumps({"ws": sys.argv[1], "tile": tile, "cpu_wall_ms": out}))
