"""Time the Knowledge graph page's first run in a fresh process: python page_open.py CODE_DIR DATA_DIR WS [mention]"""
import os, sys, time, resource, json
code, data, name = sys.argv[1:4]
mention = len(sys.argv) > 4 and sys.argv[4] == "mention"
os.environ["RAGSCOPE_DATA_DIR"] = data
os.environ.pop("RAGSCOPE_WORKSPACE", None)
sys.path.insert(0, code)
os.chdir(code)
from streamlit.testing.v1 import AppTest
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime
at = AppTest.from_file(os.path.join(code, "pages/knowledge_graph.py"), default_timeout=600)
at.session_state["workspace_name"] = name
if mention:
    at.session_state["kg_mention"] = True
c0, t0 = cpu(), time.perf_counter()
at.run()
wall, cp = time.perf_counter() - t0, cpu() - c0
assert not at.exception, [e.value for e in at.exception]
caps = [c.value for c in at.caption if c.value.startswith("Showing")]
print(json.dumps({"code": code, "ws": name, "mention": mention, "wall_s": round(wall, 3), "cpu_s": round(cp, 3), "caption": caps[0][:40] if caps else None}))
