"""scripts/try-sign-in.sh writes a secrets file the app accepts: [auth] pointing at the local provider,
and a role map giving admin@/editor@/viewer@example.com their roles and nobody else one. The file goes to
a fresh private temporary directory, never into the repository."""
from __future__ import annotations

import os
import shutil
import stat
import subprocess
import tomllib
from pathlib import Path

import pytest

from core.auth import Role, load_role_map, signin_enabled
from core.errors import PermissionDeniedError

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "try-sign-in.sh"


@pytest.fixture()
def secrets_path(tmp_path: Path) -> Path:
    if shutil.which("bash") is None:
        pytest.skip("bash is not installed")
    env = {**os.environ, "TMPDIR": str(tmp_path), "OIDC_PORT": "9555", "APP_PORT": "8555"}
    out = subprocess.run(["bash", str(SCRIPT), "--secrets-only"], env=env, capture_output=True, text=True,
                         timeout=60, check=True)
    return Path(out.stdout.strip())


def test_secrets_file_is_private_and_outside_the_repository(secrets_path: Path, tmp_path: Path) -> None:
    assert secrets_path.is_file() and tmp_path in secrets_path.parents
    assert ROOT not in secrets_path.parents
    assert stat.S_IMODE(secrets_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(secrets_path.parent.stat().st_mode) == 0o700


def test_secrets_turn_sign_in_on_against_the_local_provider(secrets_path: Path) -> None:
    secrets = tomllib.loads(secrets_path.read_text(encoding="utf-8"))
    assert signin_enabled(secrets)
    auth = secrets["auth"]
    assert auth["redirect_uri"] == "http://127.0.0.1:8555/oauth2callback"
    assert auth["server_metadata_url"] == "http://127.0.0.1:9555/.well-known/openid-configuration"
    assert len(auth["cookie_secret"]) >= 32


def test_the_three_trial_users_get_their_roles_and_nobody_else(secrets_path: Path) -> None:
    roles = load_role_map(tomllib.loads(secrets_path.read_text(encoding="utf-8")), environ={})
    for who, role in (("admin", Role.admin), ("editor", Role.editor), ("viewer", Role.viewer)):
        assert roles.principal_for({"sub": f"{who}@example.com"}).role == role
    with pytest.raises(PermissionDeniedError):
        roles.principal_for({"sub": "someone@example.com"})


def test_unknown_option_is_refused() -> None:
    out = subprocess.run(["bash", str(SCRIPT), "--frobnicate"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2 and "unknown option" in out.stderr
