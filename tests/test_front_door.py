"""The pages and ``ui/`` reach the library through its front door, ``core.api`` (issue 37).

The rule, checked by parsing imports with ``ast`` (every import statement counts: module level, inside
functions and under ``if TYPE_CHECKING:``): ``pages/``, ``ui/`` and ``app.py`` import from ``core``

* ``core.api`` itself (never one of its modules: ``core.api.querying`` is an implementation detail), for
  everything that opens, reads or changes a workspace, runs or names a mode, and for the records these
  calls take and return (``Workspace``, ``TreeNode``, ``JudgeReport``…);
* otherwise only modules that cannot reach a workspace: their imports, followed all the way, never reach
  ``core.workspace``, ``core.session``, ``core.storage`` (its port records, ``core.storage.ports`` and ``core.storage.records``, aside),
  ``core.indexing``, ``core.retrieval`` or ``core.answers``. These are settings, errors, roles, records,
  question files, token counts, provider allowlists and model clients that take no workspace.
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FRONT_DOOR = "core.api"
BEHIND_THE_DOOR = ("core.workspace", "core.session", "core.storage", "core.indexing", "core.retrieval", "core.answers")
PORT_RECORDS = {"core.storage.ports", "core.storage.records"}  # plain records and protocols: no workspace behind them


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(text: str, package: str) -> set[str]:
    """Every module named by an import statement anywhere in the text (``from a import b`` names ``a``
    and, when it is a module, ``a.b``); relative imports are resolved against ``package``."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _core_graph() -> dict[str, set[str]]:
    """core module -> the core modules it imports (all imports, ``TYPE_CHECKING`` ones included)."""
    paths = {_module_name(p): p for p in sorted((ROOT / "core").rglob("*.py"))}
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = {m for m in _imports(path.read_text(encoding="utf-8"), package) if m in paths and m != name}
    return graph


def _behind_the_door(module: str) -> bool:
    return module not in PORT_RECORDS and any(module == b or module.startswith(b + ".") for b in BEHIND_THE_DOOR)


def _reaches(graph: dict[str, set[str]], start: str) -> list[str]:
    """The modules behind the door that ``start`` reaches (itself included), sorted."""
    seen, todo = {start}, [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return sorted(m for m in seen if _behind_the_door(m))


def _violations(text: str, graph: dict[str, set[str]]) -> list[str]:
    """The core modules a page or ui file imports against the rule, each with why."""
    found = []
    for module in sorted(m for m in _imports(text, "ui") if m in graph):
        if module == FRONT_DOOR:
            continue
        if module.startswith(FRONT_DOOR + "."):
            found.append(f"{module}: a module of core.api (import core.api itself)")
        elif _behind_the_door(module):
            found.append(f"{module}: behind the front door")
        elif reached := _reaches(graph, module):
            found.append(f"{module}: reaches {', '.join(reached[:3])}")
    return found


def test_pages_and_ui_import_the_library_through_core_api() -> None:
    graph = _core_graph()
    files = sorted((ROOT / "pages").rglob("*.py")) + sorted((ROOT / "ui").rglob("*.py")) + [ROOT / "app.py"]
    bad = {str(p.relative_to(ROOT)): found for p in files
           if (found := _violations(p.read_text(encoding="utf-8"), graph))}
    assert bad == {}, f"pages/ui must go through core.api for these: {bad}"


def test_front_door_rule_catches_each_way_around() -> None:
    """The checker itself can fail: a reach into retrieval, a type-checking import of the workspace, a
    function-level import of a module that reaches storage and an import of a core.api module are each
    reported; core.api, a leaf module and the port records are not."""
    sample = """
from typing import TYPE_CHECKING
from core import api
from core.api import Workspace
from core.errors import RAGScopeError
from core.storage.records import AnnotatedQuestion
from core.retrieval.registry import modes
from core.api.querying import run_modes
if TYPE_CHECKING:
    from core.workspace import Workspace as Direct
def download(graph):
    from core.export import graph_bytes
    return graph_bytes(graph, "json")
"""
    found = _violations(sample, _core_graph())
    assert [f.split(": ")[0] for f in found] == ["core.api.querying", "core.export", "core.retrieval.registry",
                                                 "core.workspace"]
    assert found[0].endswith("a module of core.api (import core.api itself)")
    assert found[1].startswith("core.export: reaches core.")  # core.export imports core.workspace
    assert found[2].endswith("behind the front door") and found[3].endswith("behind the front door")


def test_reaching_is_followed_all_the_way() -> None:
    """A module two steps from the workspace is caught; one that reaches only the port records is not."""
    graph = {"core.leaf": {"core.storage.ports"}, "core.middle": {"core.leaf", "core.helper"},
             "core.helper": {"core.workspace"}, "core.workspace": set(), "core.storage.ports": set()}
    assert _reaches(graph, "core.leaf") == []
    assert _reaches(graph, "core.middle") == ["core.workspace"]
