"""Issue 38, item 5: the role mapping keys an OIDC identity on its issuer and subject. A subject is
unique only within its provider: with two providers configured, the same ``sub`` from the other issuer
must not get the listed identity's role (main matched the bare ``sub`` claim, whoever issued it)."""
from __future__ import annotations

import json

import pytest

from core import auth
from core.auth import Role
from core.errors import PermissionDeniedError

A, B = "https://login.a.example", "https://login.b.example"


def _roles(users: dict, default: str = "none") -> auth.RoleMap:
    return auth.load_role_map(environ={auth.ROLES_ENV: json.dumps({"default": default, "users": users})})


def test_the_same_subject_from_another_issuer_is_another_identity():
    roles = _roles({f"{A}#42": "admin"})
    admin = roles.principal_for({"iss": A, "sub": "42"})
    assert admin.role is Role.admin and admin.subject == f"{A}#42"
    with pytest.raises(PermissionDeniedError, match="has no role"):
        roles.principal_for({"iss": B, "sub": "42"})
    assert _roles({f"{A}#42": "admin"}, default="viewer").principal_for({"iss": B, "sub": "42"}).role is Role.viewer


def test_a_bare_subject_key_matches_only_an_identity_without_an_issuer():
    roles = _roles({"42": "editor"})
    assert roles.principal_for({"sub": "42"}).role is Role.editor
    with pytest.raises(PermissionDeniedError):
        roles.principal_for({"iss": B, "sub": "42"})


def test_a_subject_is_matched_exactly_and_e_mail_still_matches():
    roles = _roles({f"{A}#Alice@Corp": "admin", "bob@example.com": "editor"})
    assert roles.principal_for({"iss": A, "sub": "Alice@Corp"}).role is Role.admin
    with pytest.raises(PermissionDeniedError):
        roles.principal_for({"iss": A, "sub": "alice@corp"})
    assert roles.principal_for({"iss": B, "sub": "7", "email": "Bob@example.com"}).role is Role.editor
    assert auth.identity_key({"iss": A, "sub": "1"}) == f"{A}#1" and auth.identity_key({"iss": A}) == ""
