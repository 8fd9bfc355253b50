"""python open_compare.py CODE_DIR WORKSPACE: the benchmark's graph_page_open of that code, 1 first + 3, wall and CPU."""
import sys, time, json, os
code, ws = sys.argv[1:3]
sys.path[:0] = [code, os.path.join(code, "benchmarks")]
os.chdir(code)
import million_tokens as mt
from pathlib import Path
out = []
for i in range(4):
    c, t = time.process_time(), time.perf_counter()
    mt.graph_page_open(Path(ws))
    out.append((round(time.perf_counter() - t, 3), round(time.process_time() - c, 3)))
print(json.dumps({"code": code, "ws": ws, "wall_cpu_s": out}))
