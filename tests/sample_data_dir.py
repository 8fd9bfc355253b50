"""A data folder for an in-process app test: a copy of the built sample workspace under ``name``, the
environment pointed at it and cleared of the variables that would choose another workspace or an LLM."""
from __future__ import annotations

import shutil
from pathlib import Path

CLEARED = ("RAGSCOPE_WORKSPACE", "RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "RAGSCOPE_ROLES")


def sample_data_dir(tmp_path: Path, monkeypatch, sample_workspace_dir: Path, name: str = "default") -> Path:
    """``tmp_path/workspaces`` holding the sample workspace as ``name``; RAGSCOPE_DATA_DIR set to it."""
    folder = tmp_path / "workspaces"
    folder.mkdir()
    shutil.copytree(sample_workspace_dir, folder / name)
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(folder))
    for variable in CLEARED:
        monkeypatch.delenv(variable, raising=False)
    return folder
