"""Architecture rules, checked by parsing imports with ``ast`` (issue 14).

* ``core`` never imports streamlit, ``ui`` or ``pages``; ``ui`` never imports ``pages``.
* No import cycle in ``core/``, ``ui/``, ``pages/`` or ``app.py``, and no import from a layer to a higher
  one (``LAYERS``, bottom to top, the table docs/architecture.md draws; issue 37). The graph
  (``tests/import_graph.py``) counts every import statement: module level, inside functions (a
  function-level import still ties the two modules together) and under ``if TYPE_CHECKING:`` (a cycle
  through annotations is still a cycle). The checkers are fed a synthetic tree with each violation.
* No private attribute (``x._name``) is written from outside the class that owns it.
* No Python file in ``core/``, ``ui/``, ``pages/`` or ``app.py`` exceeds 400 lines.
* SQL runs in ``core/storage/`` only (``.execute``/``.executemany``/``.executescript`` calls); the LLM
  cache reaches its table through the cache-store port (``core.storage.llm_cache``).
* Storage backends stay behind the ports (issue 21): outside ``core/storage`` nothing imports
  ``sqlite3``, ``chromadb`` or ``psycopg``, reads networkx's private ``._adj`` / ``._node``, or reaches
  into a workspace's ``ws._cached`` / ``ws.store`` (everywhere: ``core/``, ``ui/``, ``pages/``, ``app.py``).
* ``pages/``, ``ui/`` and ``app.py`` never touch ``ws.store``, ``.save_settings(``, ``shutil.rmtree`` or
  ``sqlite3``: they go through ``core.api``, whose functions check the caller's role (issue 20).
* Nor do they call a ``Workspace`` method or read its state: through a workspace handle they read only
  its identity (``ws.path``, ``ws.name``); a workspace goes as an argument only to ``core.api`` functions
  (or to ``ui``/``pages`` helpers), never to another ``core`` function; and ``core.workspace``,
  ``core.session`` and ``core.storage`` are imported only for type checking (issue 20).
"""
from __future__ import annotations

import ast
from pathlib import Path

from import_graph import (cycles, import_graph, imported_names, layer_entry, layer_of, module_name, private_writes,
                          upward_edges)

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 400
SQL_CALLS = {"execute", "executemany", "executescript"}
SQL_ALLOWED: set[str] = set()  # the LLM cache went behind core.storage.llm_cache (issue 21)


def _files(*folders: str) -> list[Path]:
    out: list[Path] = []
    for folder in folders:
        path = ROOT / folder
        out.extend(sorted(path.rglob("*.py")) if path.is_dir() else [path])
    return out


def _module_name(path: Path) -> str:
    return module_name(ROOT, path)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(path: Path) -> set[str]:
    """Every module name imported anywhere in the file (module level, functions, ``TYPE_CHECKING``)."""
    return imported_names(ROOT, path)


def _top(name: str) -> str:
    return name.split(".")[0]


def test_core_never_imports_streamlit_ui_or_pages() -> None:
    bad = [(str(p.relative_to(ROOT)), m) for p in _files("core") for m in _imports(p)
           if _top(m) in {"streamlit", "ui", "pages", "app"}]
    assert bad == []


def test_ui_never_imports_pages() -> None:
    bad = [(str(p.relative_to(ROOT)), m) for p in _files("ui") for m in _imports(p)
           if _top(m) in {"pages", "app"}]
    assert bad == []


# The layers, bottom to top (docs/architecture.md draws the same table). A module belongs to the layer
# of its longest matching entry (the module itself or a package holding it); it imports modules of its
# own layer or of lower ones, never of a higher one. ``core`` alone is the package's ``__init__``; a
# new ``core`` module must be given a layer here (``test_every_module_has_a_layer``). A new module in
# ``core/retrieval`` is a mode unless listed lower.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("foundation", ("core", "core.errors", "core.trace", "core.types", "core.settings", "core.settings_labels",
                    "core.config", "core.tokens", "core.retry", "core.providers", "core.auth", "core.csv_safe", "core.fairness",
                    "core.citations", "core.cancellable")),
    ("text", ("core.parsing", "core.loaders", "core.chunking", "core.extraction", "core.embeddings",
              "core.remote_embeddings", "core.onnx_embeddings", "core.sentence_vectors")),
    ("storage", ("core.storage",)),
    ("workspace", ("core.workspace", "core.session")),
    ("indexing", ("core.indexing", "core.editing.replay")),
    ("retrieval: algorithms", tuple(f"core.retrieval.{m}" for m in (
        "trace_text", "spec", "keywords", "csv_cells", "context_blocks", "lightrag_context", "context_dedup",
        "token_counts", "generation_rows", "funnel", "path_flow", "tree_algorithms"))),
    ("retrieval: question", ("core.retrieval.query", "core.retrieval.query_vectors", "core.retrieval.results")),
    ("retrieval: searches", tuple(f"core.retrieval.{m}" for m in (
        "entity_linking", "anchoring", "lightrag_search", "path_seeds", "tree_terms"))),
    ("retrieval: strategies", ("core.retrieval.strategies",)),
    ("retrieval: modes", ("core.retrieval",)),
    ("retrieval: registry", ("core.retrieval.registry",)),
    ("retrieval: router", ("core.routing",)),
    ("answers and LLM", ("core.answers", "core.llm")),
    ("services", ("core.evaluation", "core.judge", "core.annotations", "core.editing", "core.importers", "core.export",
                  "core.graph_page", "core.graph_quality", "core.warmup", "core.source_view")),
    ("api", ("core.api",)),
    ("cli", ("core.cli", "core.__main__")),
    ("ui", ("ui",)),
    ("pages", ("pages", "app")),
]
CHECKED = ("core", "ui", "pages", "app.py")


def test_no_import_cycles() -> None:
    """No cycle among the modules of ``core/``, ``ui/``, ``pages/`` and ``app.py``, counting every
    import: module level, function level and ``TYPE_CHECKING``."""
    found = cycles(import_graph(ROOT, CHECKED))
    assert found == [], f"import cycles (each a strongly connected group of modules): {found}"


def test_no_import_points_up_a_layer() -> None:
    found = upward_edges(import_graph(ROOT, CHECKED), LAYERS)
    assert found == [], "imports from a layer to a higher one:\n" + "\n".join(found)


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(m for m in import_graph(ROOT, CHECKED)
                      if layer_of(m, LAYERS) < 0 or (m != "core" and layer_entry(m, LAYERS)[1] == "core"))
    assert unplaced == [], f"give these modules a layer in LAYERS (and docs/architecture.md): {unplaced}"


def test_the_docs_name_the_same_layers() -> None:
    """docs/architecture.md's layer table (``| number | layer | …``, drawn top down) has one row per
    layer, numbered from the bottom as ``LAYERS`` lists them."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    rows = sorted((int(cells[1]), cells[2]) for line in text.splitlines()
                  if len(cells := [c.strip() for c in line.split("|")]) > 3 and cells[1].isdigit())
    assert rows == [(number, name) for number, (name, _) in enumerate(LAYERS, 1)]


def test_no_private_field_is_written_from_outside() -> None:
    """``ctx._names = …`` in another module is how the per-question cache leaked before (issue 37)."""
    found = {str(p.relative_to(ROOT)): w for p in _files(*CHECKED) if (w := private_writes(p))}
    assert found == {}


# The checkers themselves can fail: a synthetic tree with one violation of each kind.
SYNTHETIC = {
    "core/__init__.py": "",
    "core/low.py": "from core import high  # an upward edge, no cycle\n",
    "core/high.py": "X = 1\n",
    "core/typed_a.py": "from core.typed_b import B\nA = 1\n",
    "core/typed_b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from core.typed_a import A\nB = 1\n",
    "core/late_a.py": "import core.late_b\n",
    "core/late_b.py": "def f():\n    from . import late_a\n    return late_a\n",
    "core/clean.py": "import os\nfrom core import high\n",
    "core/pkg/__init__.py": "",
    "core/pkg/leaf.py": "from core.pkg import sub  # a path to a submodule: no edge to the package\n",
    "core/pkg/sub.py": "",
    "ui/__init__.py": "",
    "ui/left.py": "from ui.right import R\nL = 1\n",
    "ui/right.py": "def r():\n    from ui import left\nR = 1\n",
    "ui/alone.py": "from core import clean\n",
    "core/peek.py": "def link(ctx):\n    ctx._names = []\n\n\nclass Own:\n    def __init__(self):\n"
                    "        self._cache = {}\n\n    def copy(self, other):\n        other._cache = {}\n"
                    "        other._secret = 1\n",
}
SYNTHETIC_LAYERS = [("bottom", ("core", "core.low", "core.clean", "core.peek")), ("top", ("core.high",)),
                    ("ui", ("ui",))]


def test_the_checker_catches_each_kind_of_violation(tmp_path: Path) -> None:
    for rel, text in SYNTHETIC.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    graph = import_graph(tmp_path, ("core", "ui"))
    assert cycles(graph) == [["core.late_a", "core.late_b"],  # through a function-level relative import
                             ["core.typed_a", "core.typed_b"],  # through a TYPE_CHECKING import
                             ["ui.left", "ui.right"]]  # in ui, through a function-level import
    assert upward_edges(graph, SYNTHETIC_LAYERS) == ["core.clean (bottom) -> core.high (top)",
                                                     "core.low (bottom) -> core.high (top)"]
    assert graph["core.pkg.leaf"] == {"core.pkg.sub"} and graph["ui.alone"] == {"core.clean"}
    assert layer_of("ui.alone", SYNTHETIC_LAYERS) == 2 and layer_of("elsewhere", SYNTHETIC_LAYERS) == -1
    assert private_writes(tmp_path / "core" / "peek.py") == ["2: ctx._names", "11: other._secret"]
    assert cycles({"a": {"b"}, "b": {"c", "a"}, "c": set(), "d": {"d"}}) == [["a", "b"]]


def test_no_file_over_400_lines() -> None:
    long = {str(p.relative_to(ROOT)): n for p in _files("core", "ui", "pages", "app.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def _sql_calls(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr in SQL_CALLS]


def test_sql_only_in_storage() -> None:
    outside = {rel: lines for p in _files("core", "ui", "pages", "app.py")
               if not (rel := str(p.relative_to(ROOT))).startswith("core/storage/") and rel not in SQL_ALLOWED
               and (lines := _sql_calls(p))}
    assert outside == {}


# pages/ and ui/ read and write only through core.api (issue 20): no direct store access, settings
# writes, folder removal or SQLite. The checker is the text of each file (comments stripped), so an
# alias or an attribute chain cannot hide the call.
UI_FORBIDDEN = {".store.": "the workspace's store", ".store)": "the workspace's store",
                ".save_settings(": "saving settings", "shutil.rmtree": "removing folders", "rmtree(": "removing folders",
                "sqlite3": "SQLite", "import shutil": "removing folders"}


def _ui_violations(text: str) -> list[str]:
    code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    return sorted({why for needle, why in UI_FORBIDDEN.items() if needle in code})


def test_pages_and_ui_go_through_core_api() -> None:
    bad = {rel: found for p in _files("pages", "ui", "app.py")
           if (found := _ui_violations(p.read_text(encoding="utf-8"))) and (rel := str(p.relative_to(ROOT)))}
    assert bad == {}, f"pages/ui must call core.api instead of: {bad}"


def test_ui_rule_catches_a_direct_store_read() -> None:
    assert _ui_violations("names = {d.doc_id for d in ws.store.documents()}") == ["the workspace's store"]
    assert _ui_violations("ws.save_settings(candidate)") == ["saving settings"]
    assert _ui_violations("import shutil\nshutil.rmtree(path)") == ["removing folders"]
    assert _ui_violations("import sqlite3") == ["SQLite"]
    assert _ui_violations("api.save_workspace_settings(who, name, s)  # not ws.save_settings(") == []
BACKEND_MODULES = {"sqlite3", "chromadb", "psycopg", "psycopg2", "sqlalchemy"}
PRIVATE_GRAPH = {"_adj", "_node"}
WORKSPACE_INTERNALS = {"_cached", "store"}


def _names_workspace(node: ast.AST) -> bool:
    """``ws``, ``_ws``, ``self.ws``, ``ctx.ws``…: an expression that names a workspace."""
    if isinstance(node, ast.Name):
        return node.id in {"ws", "_ws", "workspace"}
    return isinstance(node, ast.Attribute) and node.attr in {"ws", "_ws", "workspace"}


def _storage_leaks(path: Path, workspace_rule: bool = True) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and not n.level}
    found = [f"import {m}" for m in sorted(modules) if _top(m) in BACKEND_MODULES]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            if node.attr in PRIVATE_GRAPH:
                found.append(f"{node.lineno}: .{node.attr}")
            elif workspace_rule and node.attr in WORKSPACE_INTERNALS and _names_workspace(node.value):
                found.append(f"{node.lineno}: ws.{node.attr}")
    return found


# Files not yet on the ports (the list only shrinks; the LightRAG importer went behind
# ``core.storage.import_writes``).
STORAGE_RULE_PENDING: set[str] = set()


def test_storage_backends_stay_behind_the_ports() -> None:
    leaks = {}
    for p in _files("core", "ui", "pages", "app.py"):
        rel = str(p.relative_to(ROOT))
        if rel.startswith("core/storage/") or rel in STORAGE_RULE_PENDING:
            continue
        if found := _storage_leaks(p):
            leaks[rel] = found
    assert leaks == {}


def test_storage_leak_finder_finds_each_kind(tmp_path) -> None:
    """The checker itself can fail: each forbidden form is reported."""
    sample = tmp_path / "leaky.py"
    sample.write_text("import sqlite3\nfrom chromadb import Client\nimport psycopg\n"
                      "def f(ws, graph, ctx):\n    graph._adj\n    graph._node\n    ws._cached('x', None)\n"
                      "    ws.store.conn\n    ctx.ws.store\n    other.store\n", encoding="utf-8")
    found = _storage_leaks(sample)
    assert [f for f in found if f.startswith("import")] == ["import chromadb", "import psycopg", "import sqlite3"]
    assert sorted(f.split(": ")[1] for f in found if ": " in f) == ["._adj", "._node", "ws._cached", "ws.store",
                                                                    "ws.store"]  # not other.store


# pages/ and ui/ reach a workspace only through core.api (issue 20). A workspace handle is a name
# ``ws`` / ``_ws`` / ``workspace`` (also as an attribute: ``self.ws``, ``job.ws``) or the result of
# ``workspace()`` / ``indexed_workspace()``; through it only its identity may be read.
UI_WORKSPACE_ATTRS = {"path", "name"}
UI_WORKSPACE_CALLS = {"workspace", "indexed_workspace"}
UI_CORE_MODULES_TYPING_ONLY = ("core.workspace", "core.session", "core.storage")


def _is_handle(node: ast.AST) -> bool:
    if _names_workspace(node):
        return True
    if isinstance(node, ast.Call):
        func = node.func
        return (isinstance(func, ast.Name) and func.id in UI_WORKSPACE_CALLS) or (
            isinstance(func, ast.Attribute) and func.attr in UI_WORKSPACE_CALLS)
    return False


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node except those under ``if TYPE_CHECKING:`` (imports there never run)."""
    found: list[ast.AST] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _imported_modules(nodes: list[ast.AST]) -> dict[str, str]:
    """Local name -> the module it comes from (``from core.x import f`` -> f: core.x; ``from core import
    api`` -> api: core.api; ``import core.x as m`` -> m: core.x)."""
    names: dict[str, str] = {}
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = (f"{node.module}.{alias.name}" if node.module == "core"
                                                     else node.module)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
    return names


def _callee_root(func: ast.AST) -> str:
    while isinstance(func, ast.Attribute):
        func = func.value
    return func.id if isinstance(func, ast.Name) else ""


def _workspace_bypasses(text: str) -> list[str]:
    """Where a page or ui module reaches a workspace other than through core.api."""
    nodes = _runtime_nodes(ast.parse(text))
    imported = _imported_modules(nodes)
    found = [f"import {m}" for m in sorted(set(imported.values()))
             if m.startswith(UI_CORE_MODULES_TYPING_ONLY)]
    for node in nodes:
        if isinstance(node, ast.Attribute) and node.attr not in UI_WORKSPACE_ATTRS and _is_handle(node.value):
            found.append(f"{node.lineno}: ws.{node.attr}")
        elif isinstance(node, ast.Call):
            module = imported.get(_callee_root(node.func), "")
            args = list(node.args) + [k.value for k in node.keywords]
            if module.startswith("core") and not module.startswith("core.api") and any(_is_handle(a) for a in args):
                found.append(f"{node.lineno}: {ast.unparse(node.func)}(ws) from {module}")
    return found


def test_pages_and_ui_reach_a_workspace_only_through_core_api() -> None:
    bad = {rel: found for p in _files("pages", "ui", "app.py")
           if (found := _workspace_bypasses(p.read_text(encoding="utf-8"))) and (rel := str(p.relative_to(ROOT)))}
    assert bad == {}, f"pages/ui must reach a workspace through core.api: {bad}"


def test_workspace_rule_catches_each_bypass() -> None:
    """The checker itself can fail: each way around core.api is reported, the api and identity are not."""
    sample = """
from typing import TYPE_CHECKING
from core import api
from core.evaluation.runner import evaluate
import core.judge.runner as judge
from ui import state
from core.workspace import Workspace
if TYPE_CHECKING:
    from core.session import SessionWorkspace
def page(ws, job):
    ws.generation()
    names = ws.doc_names()
    job.ws.status()
    state.workspace().knowledge_graph()
    evaluate(ws, [], ["naive"])
    judge.run_judge(questions=[], ws=ws)
    api.generation(state.principal(), ws)
    str(ws.path), ws.name
    state.generation(ws)
"""
    assert _workspace_bypasses(sample) == [
        "import core.workspace", "11: ws.generation", "12: ws.doc_names", "13: ws.status", "14: ws.knowledge_graph",
        "15: evaluate(ws) from core.evaluation.runner", "16: judge.run_judge(ws) from core.judge.runner"]
