"""The import graph the architecture test checks (``tests/test_architecture.py``), built from the
source with ``ast`` so that nothing is imported.

Every import statement is an edge: at module level, inside a function (a function-level import still
ties the two modules together) and under ``if TYPE_CHECKING:`` (the type checker follows it, and a
cycle through annotations is still a cycle a reader has to untangle). ``from core import cli`` is an
edge to ``core.cli`` when that is a module; relative imports are resolved against the package.

The checks take the project root as an argument so the self-test can feed them a synthetic tree:
``import_graph`` (module -> modules it imports, inside the checked folders), ``cycles`` (strongly
connected components of more than one module), ``layer_of`` and ``upward_edges`` (edges from a layer
to a higher one, for a bottom-to-top table of layers) and ``private_writes`` (a private attribute
written from outside the class that owns it).
"""
from __future__ import annotations

import ast
from pathlib import Path
from typing import Collection, Iterable, Optional, Sequence

Layers = Sequence[tuple[str, Sequence[str]]]  # (layer name, module prefixes), bottom to top


def python_files(root: Path, folders: Iterable[str]) -> list[Path]:
    """The ``.py`` files of each folder (or the file itself) under ``root``."""
    out: list[Path] = []
    for folder in folders:
        path = root / folder
        out.extend(sorted(path.rglob("*.py")) if path.is_dir() else ([path] if path.exists() else []))
    return out


def module_name(root: Path, path: Path) -> str:
    """``core/retrieval/query.py`` -> ``core.retrieval.query``; a package's ``__init__`` is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imported_names(root: Path, path: Path, modules: Optional[Collection[str]] = None) -> set[str]:
    """Every module name imported anywhere in the file (module level, functions, ``TYPE_CHECKING``).
    ``from package import name`` gives ``package.name``, and ``package`` too unless ``modules`` (the
    known modules) shows every imported name to be a submodule (the package is then only a path)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    own = module_name(root, path)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names = [f"{base}.{alias.name}" for alias in node.names]
            found.update(names)
            if modules is None or not all(name in modules for name in names):
                found.add(base)
    return found


def import_graph(root: Path, folders: Iterable[str]) -> dict[str, set[str]]:
    """module -> the modules of ``folders`` it imports (names that are not modules there are dropped)."""
    modules = {module_name(root, p): p for p in python_files(root, folders)}
    return {name: {m for m in imported_names(root, path, modules) if m in modules and m != name}
            for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    result: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return sorted(result)


def layer_entry(module: str, layers: Layers) -> tuple[int, str]:
    """(layer index, the entry it matched): the longest prefix ``p`` of any layer with ``module == p``
    or ``module`` inside package ``p``; (-1, "") when no entry matches."""
    best = (-1, "")
    for position, (_, prefixes) in enumerate(layers):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > len(best[1]):
                best = (position, prefix)
    return best


def layer_of(module: str, layers: Layers) -> int:
    """The index (0 = bottom) of the layer ``module`` belongs to; -1 when it belongs to none."""
    return layer_entry(module, layers)[0]


def upward_edges(graph: dict[str, set[str]], layers: Layers) -> list[str]:
    """Every import from a module to one in a higher layer, as ``a (layer) -> b (layer)``."""
    names = [name for name, _ in layers]
    found = []
    for module in sorted(graph):
        own = layer_of(module, layers)
        for target in sorted(graph[module]):
            other = layer_of(target, layers)
            if own >= 0 and other > own:
                found.append(f"{module} ({names[own]}) -> {target} ({names[other]})")
    return found


def _private_targets(node: ast.AST) -> list[ast.Attribute]:
    """``x._name`` attributes an assignment statement writes (not dunders)."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        targets = [node.target]
    return [sub for target in targets for sub in ast.walk(target) if isinstance(sub, ast.Attribute)
            and sub.attr.startswith("_") and not sub.attr.startswith("__")]


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def private_writes(path: Path) -> list[str]:
    """``line: x._name`` for each private attribute written from outside the class that owns it: a
    write on anything but ``self``/``cls``, unless it happens in a method of a class that sets that
    attribute on ``self`` itself (a class filling in a copy of itself)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[str] = []

    def visit(node: ast.AST, owned: frozenset[str]) -> None:
        if isinstance(node, ast.ClassDef):
            owned = frozenset(t.attr for n in ast.walk(node) for t in _private_targets(n) if _is_self(t.value))
        for target in _private_targets(node):
            if not _is_self(target.value) and target.attr not in owned:
                found.append(f"{node.lineno}: {ast.unparse(target)}")
        for child in ast.iter_child_nodes(node):
            visit(child, owned)

    visit(tree, frozenset())
    return found
