"""The type checker passes over ``core/`` and ``ui/`` (configuration: ``mypy.ini``, ``check_untyped_defs``).

``# type: ignore`` is allowed only with an error code (``ignore-without-code`` is enabled here too)."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_mypy_passes_on_core_and_ui() -> None:
    result = subprocess.run([sys.executable, "-m", "mypy", "--enable-error-code", "ignore-without-code"],
                            cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-2000:]
    assert "Success" in result.stdout


def test_type_ignores_name_their_error_code() -> None:
    bare = []
    for path in sorted([*ROOT.joinpath("core").rglob("*.py"), *ROOT.joinpath("ui").rglob("*.py")]):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"#\s*type:\s*ignore(?!\[)", line):
                bare.append(f"{path.relative_to(ROOT)}:{number}")
    assert not bare, f"# type: ignore without an error code: {bare}"
