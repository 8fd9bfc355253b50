"""Pages import the project without editing ``sys.path``: ``streamlit run app.py`` puts the repository
on the path, and the tests get it from ``pytest.ini`` (``pythonpath = .``)."""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENTRY_POINTS = [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))]


def test_no_page_edits_sys_path():
    offenders = []
    for path in ENTRY_POINTS:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", "") == "sys":
                offenders.append(path.name)
    assert offenders == []


def test_every_page_compiles_and_its_imports_resolve_from_the_repository_root():
    """Each page's module-level imports resolve with only the repository root on the path (as under
    ``streamlit run app.py``), from a directory that is not the repository."""
    for path in ENTRY_POINTS:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules = sorted({n.module for n in tree.body if isinstance(n, ast.ImportFrom) and n.module}
                         | {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names})
        code = "import importlib.util, sys; missing = [m for m in sys.argv[1:] if importlib.util.find_spec(m) is None]; " \
               "print(missing); sys.exit(1 if missing else 0)"
        run = subprocess.run([sys.executable, "-c", code, *[m for m in modules if m != "__future__"]],
                             cwd="/", env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, (path.name, run.stdout, run.stderr)
