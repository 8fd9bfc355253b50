"""Roles enforced in the library (issue 20): the role order, the operator's role mapping, the table of
every public ``core.api`` function with its minimum role (and each one refusing a caller below it),
workspace restrictions, workspace names that point outside the data folder, and the decision to
refuse serving on a non-loopback address without sign-in."""
from __future__ import annotations

import inspect
import json
import os
import tomllib

import pytest

from core import api, auth
from core.auth import LOCAL_ADMIN, Principal, Role, RoleConfigError
from core.errors import PermissionDeniedError, WorkspaceBusyError, WorkspaceNameError

VIEWER = Principal("v-sub", "viewer@example.com", Role.viewer)
EDITOR = Principal("e-sub", "editor@example.com", Role.editor)
ADMIN = Principal("a-sub", "admin@example.com", Role.admin)

# Every public core.api function and its minimum role. A new function must be added here (and declare
# its role with @requires): test_every_public_api_function_declares_a_role fails otherwise.
API_ROLES = {
    # viewer: browse, query, compare, inspect, evaluate, export
    "run_modes": Role.viewer, "sample_paths": Role.viewer, "workspace_names": Role.viewer,
    "workspace_path": Role.viewer, "status": Role.viewer, "documents": Role.viewer, "chunk_count": Role.viewer, "position_gaps": Role.viewer, "source_view": Role.viewer,
    "chunks_of": Role.viewer, "chunks_by_id": Role.viewer, "all_chunk_ids": Role.viewer, "doc_roots": Role.viewer,
    "chat_model": Role.viewer, "annotation_for": Role.viewer, "annotation_list": Role.viewer,
    "export_annotations": Role.viewer, "open_workspace": Role.viewer, "session_workspace": Role.viewer,
    "generation": Role.viewer, "embedder_setting": Role.viewer, "doc_names": Role.viewer, "tree_index": Role.viewer, "readable_summary": Role.viewer,
    "mention_index": Role.viewer,
    "knowledge_graph": Role.viewer, "mention_graph": Role.viewer, "documents_table": Role.viewer,
    "dropped_records": Role.viewer, "graph_provenance": Role.viewer, "writer_active": Role.viewer,
    "refresh_vectors": Role.viewer, "evaluate": Role.viewer, "question_limit": Role.viewer, "run_judge": Role.viewer,
    "router_rows": Role.viewer,
    "estimate_judge_cost": Role.viewer, "graph_part_origins": Role.viewer, "warm_up": Role.viewer,
    "load_embedder": Role.viewer, "graph_summary": Role.viewer, "graph_selection": Role.viewer,
    "graph_node": Role.viewer, "graph_edge": Role.viewer, "mention_chunks": Role.viewer,
    "mode_names": Role.viewer, "mode_help": Role.viewer, "mode_params": Role.viewer, "stream_answer": Role.viewer,
    "question_id": Role.viewer, "graph_bytes": Role.viewer,
    # editor: + upload, index, delete documents, annotate
    "index_pending": Role.editor, "index_sources": Role.editor, "index_uploads": Role.editor,
    "index_text": Role.editor, "cancel_indexing": Role.editor, "import_lightrag": Role.editor, "delete": Role.editor, "retry": Role.editor, "resume": Role.editor,
    "reindex": Role.editor,
    "train_router": Role.editor,
    "save_annotation_marks": Role.editor, "delete_annotations": Role.editor, "import_annotations": Role.editor,
    "edit_graph": Role.editor, "graph_edits": Role.editor, "undo_graph_edit": Role.editor,
    "export_graph_edits": Role.editor, "import_graph_edits": Role.editor,
    "merge_suggestions": Role.editor, "dismiss_merge_suggestion": Role.editor,
    "evaluate_edits": Role.editor, "edit_question_diff": Role.editor,
    "junk_suggestions": Role.editor, "dismiss_junk": Role.editor, "delete_entities": Role.editor,
    # admin: + settings, create/delete workspaces
    "save_workspace_settings": Role.admin, "create_workspace": Role.admin, "delete_workspace": Role.admin,
    "import_lightrag_from_server": Role.admin, "server_import_dirs": Role.admin, "server_import_root": Role.admin,
    "store_description": Role.admin, "check_llm_connection": Role.admin,
}


def public_api_functions() -> dict[str, object]:
    """Every public function reachable as ``core.api.NAME`` (defined in one of its modules, re-exported there)."""
    return {name: obj for name, obj in vars(api).items()
            if not name.startswith("_") and inspect.isfunction(obj)
            and (obj.__module__ or "").startswith("core.api")}


def test_roles_are_ordered() -> None:
    assert Role.viewer < Role.editor < Role.admin
    assert Role.parse("Editor") is Role.editor
    with pytest.raises(RoleConfigError, match="unknown role"):
        Role.parse("root")


def test_every_public_api_function_declares_a_role() -> None:
    found = public_api_functions()
    undeclared = sorted(n for n, f in found.items() if not isinstance(getattr(f, "min_role", None), Role))
    assert undeclared == [], f"core.api functions without @requires(Role.…): {undeclared}"
    assert {n: f.min_role for n, f in found.items()} == API_ROLES  # type: ignore[attr-defined]
    assert set(api.FUNCTIONS) == set(API_ROLES) and len(api.FUNCTIONS) == len(API_ROLES)
    assert set(api.__all__) == set(API_ROLES) | set(api.RECORDS)


def test_the_front_door_reexports_records_not_functions() -> None:
    """Besides the role-checked functions, ``core.api`` names only records (classes), each resolvable
    (the lazy ones load their module on first use) and each the class of the module it names."""
    for name in api.RECORDS:
        record = getattr(api, name)
        assert inspect.isclass(record), name
    for name, (module, attribute) in api.LAZY_RECORDS.items():
        assert getattr(api, name) is getattr(__import__(module, fromlist=[attribute]), attribute)
    with pytest.raises(AttributeError, match="no attribute 'NoSuchRecord'"):
        getattr(api, "NoSuchRecord")


def test_the_table_test_catches_an_undeclared_function(monkeypatch) -> None:
    def sneaky(principal, ws):  # a public function added without @requires
        return ws

    sneaky.__module__ = "core.api"
    monkeypatch.setattr(api, "sneaky", sneaky, raising=False)
    found = public_api_functions()
    assert "sneaky" in found and getattr(found["sneaky"], "min_role", None) is None


@pytest.mark.parametrize("name", sorted(API_ROLES))
def test_each_api_function_refuses_a_caller_below_its_role(name: str) -> None:
    """Called one role below its minimum (with placeholder arguments), each function raises
    PermissionDeniedError before its body runs; the principal comes first and is required."""
    func = getattr(api, name)
    role = API_ROLES[name]
    params = list(inspect.signature(func).parameters.values())
    assert params[0].name == "principal", f"{name}: the caller's principal must be the first parameter"
    required = [p for p in params[1:] if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    placeholders = [None] * len(required)
    for lower in [r for r in Role if r < role]:
        who = Principal("low", "low@example.com", lower)
        with pytest.raises(PermissionDeniedError, match=f"only an {role.name} or above"):
            func(who, *placeholders)
    with pytest.raises(TypeError, match="Principal"):
        func("admin", *placeholders)  # not a Principal: refused, never taken for a workspace


def test_role_mapping_from_secrets_toml() -> None:
    secrets = tomllib.loads("""
[ragscope.roles]
default = "viewer"
default_workspaces = ["demo"]
[ragscope.roles.users]
"Alice@Example.com" = "admin"
"bob@example.com" = { role = "editor", workspaces = ["team", "demo"] }
"google-oauth2|42" = "editor"
"mallory@example.com" = "none"
""")
    roles = auth.load_role_map(secrets, environ={})
    alice = roles.principal_for({"sub": "x1", "email": "alice@example.com", "email_verified": True})
    assert alice.role is Role.admin and alice.workspaces is None
    bob = roles.principal_for({"sub": "x2", "email": "BOB@example.com"})
    assert bob.role is Role.editor and bob.workspaces == frozenset({"team", "demo"})
    assert bob.may_open("team") and not bob.may_open("other")
    by_subject = roles.principal_for({"sub": "google-oauth2|42"})
    assert by_subject.role is Role.editor
    stranger = roles.principal_for({"sub": "x3", "email": "someone@example.com"})
    assert stranger.role is Role.viewer and stranger.workspaces == frozenset({"demo"})
    mallory = roles.principal_for({"sub": "x4", "email": "mallory@example.com"})
    assert mallory.role is Role.viewer  # "none" drops the entry: the default applies


def test_unverified_email_is_not_trusted_and_unlisted_identities_are_refused() -> None:
    roles = auth.load_role_map(environ={auth.ROLES_ENV: json.dumps({"users": {"boss@example.com": "admin"}})})
    with pytest.raises(PermissionDeniedError, match="has no role"):
        roles.principal_for({"sub": "evil", "email": "boss@example.com", "email_verified": False})
    with pytest.raises(PermissionDeniedError, match="has no role"):
        roles.principal_for({"sub": "nobody", "email": "nobody@example.com"})
    assert roles.principal_for({"sub": "b", "email": "boss@example.com"}).role is Role.admin
    assert auth.load_role_map({}, environ={}).default is None  # no mapping: nobody gets a role


def test_environment_wins_over_secrets_and_bad_mappings_name_the_entry() -> None:
    secrets = {"ragscope": {"roles": {"users": {"a@example.com": "admin"}}}}
    env = {auth.ROLES_ENV: json.dumps({"users": {"a@example.com": "viewer"}})}
    assert auth.load_role_map(secrets, env).principal_for({"email": "a@example.com"}).role is Role.viewer
    with pytest.raises(RoleConfigError, match="not valid JSON"):
        auth.load_role_map({}, {auth.ROLES_ENV: "{users:"})
    with pytest.raises(RoleConfigError, match="users.x@example.com: unknown role 'owner'"):
        auth.parse_role_map({"users": {"x@example.com": "owner"}})
    with pytest.raises(RoleConfigError, match="unknown key"):
        auth.parse_role_map({"admins": ["x"]})


def test_signin_enabled_reads_the_auth_section(tmp_path) -> None:
    assert not auth.signin_enabled({})
    assert auth.signin_enabled({"auth": {"redirect_uri": "http://127.0.0.1:8501/oauth2callback"}})
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('[auth]\nredirect_uri = "http://x/oauth2callback"\ncookie_secret = "s"\n')
    assert auth.signin_enabled(auth.read_secrets([secrets]))
    assert not auth.signin_enabled(auth.read_secrets([tmp_path / "missing.toml"]))


@pytest.mark.parametrize("address, refused", [
    ("127.0.0.1", False), ("127.0.0.2", False), ("localhost", False), ("::1", False), ("[::1]", False),
    ("0.0.0.0", True), ("", True), (None, True), ("::", True), ("192.168.1.20", True), ("ragscope.example.com", True),
])
def test_exposure_refusal_without_signin(address, refused) -> None:
    message = auth.exposure_refusal(address, signin=False)
    assert (message is not None) is refused
    if refused:
        assert "[auth]" in message and "docs/deployment.md" in message
    assert auth.exposure_refusal(address, signin=True) is None


# --- workspaces: restrictions, names, deletion --------------------------------------------------
@pytest.fixture()
def data_dir(tmp_path, monkeypatch):
    root = tmp_path / "data"
    root.mkdir()
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(root))
    monkeypatch.delenv("RAGSCOPE_WORKSPACE", raising=False)
    return root


def test_workspace_restriction_is_enforced_by_the_library(data_dir) -> None:
    from core.workspace import Workspace

    for name in ("team", "secret"):
        api.create_workspace(ADMIN, name)
    team_only = Principal("t", "t@example.com", Role.editor, frozenset({"team"}))
    assert api.workspace_names(team_only) == ["team"]
    assert api.workspace_names(ADMIN) == ["secret", "team"]
    ws = Workspace(data_dir / "secret")
    try:
        with pytest.raises(PermissionDeniedError, match="may not open the workspace 'secret'"):
            api.status(team_only, ws)
        with pytest.raises(PermissionDeniedError):
            api.index_text(team_only, ws, "a.txt", "Some text.")
        assert api.status(ADMIN, ws)["chunks"] == 0
    finally:
        ws.close()
    with pytest.raises(PermissionDeniedError):
        api.workspace_path(team_only, "secret")


def test_only_an_admin_creates_a_workspace_by_opening_it(data_dir) -> None:
    """A viewer or editor opening a name that does not exist gets a clear refusal and no folder (a signed-in
    viewer typing names into the address made a 468 KB workspace per name); an admin's open still creates."""
    for role in (Role.viewer, Role.editor):
        who = Principal("u", "u@example.com", role)
        with pytest.raises(WorkspaceNameError, match="only an admin creates workspaces"):
            api.open_workspace(who, "typed-name")
    assert sorted(p.name for p in data_dir.iterdir()) == []
    api.open_workspace(ADMIN, "made-by-admin").close()
    assert sorted(p.name for p in data_dir.iterdir()) == ["made-by-admin"]
    viewer = Principal("v", "v@example.com", Role.viewer)
    api.open_workspace(viewer, "made-by-admin").close()  # an existing one opens for a viewer
    api.open_workspace(viewer, "default").close()  # the operator's default: a fresh deployment's first visit
    assert sorted(p.name for p in data_dir.iterdir()) == ["default", "made-by-admin"]


@pytest.mark.parametrize("name", ["../outside", "/etc", "a/b", "..", ".hidden", "", "x" * 65, "name with space"])
def test_malformed_or_escaping_workspace_names_are_refused(data_dir, name) -> None:
    with pytest.raises(WorkspaceNameError):
        api.workspace_path(ADMIN, name)
    with pytest.raises(WorkspaceNameError):
        api.create_workspace(ADMIN, name)
    assert sorted(p.name for p in data_dir.iterdir()) == []


def test_symlinked_workspace_leading_outside_is_refused(data_dir, tmp_path) -> None:
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep me")
    (data_dir / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(WorkspaceNameError, match="outside the data folder"):
        api.delete_workspace(ADMIN, "link")
    assert (outside / "keep.txt").read_text() == "keep me"


def test_ragscope_workspace_outside_the_data_folder_is_refused(data_dir, tmp_path, monkeypatch, capsys) -> None:
    from core import config
    from core.cli.main import main

    monkeypatch.setenv("RAGSCOPE_WORKSPACE", str(tmp_path / "elsewhere"))
    with pytest.raises(WorkspaceNameError, match="outside the data folder"):
        config.default_workspace_name()
    assert main(["status"]) == 2
    assert "RAGSCOPE_WORKSPACE" in capsys.readouterr().err
    assert not (tmp_path / "elsewhere").exists()
    monkeypatch.setenv("RAGSCOPE_WORKSPACE", str(data_dir / "inside"))
    assert config.default_workspace_name() == "inside"
    monkeypatch.setenv("RAGSCOPE_WORKSPACE", "../up")
    with pytest.raises(WorkspaceNameError, match="RAGSCOPE_WORKSPACE"):
        config.default_workspace_name()


def test_delete_workspace_needs_admin_and_removes_only_that_folder(data_dir) -> None:
    api.create_workspace(ADMIN, "a")
    api.create_workspace(ADMIN, "b")
    with pytest.raises(PermissionDeniedError):
        api.delete_workspace(EDITOR, "a")
    assert api.delete_workspace(ADMIN, "a") == (data_dir / "a").resolve()
    assert sorted(p.name for p in data_dir.iterdir()) == ["b"]
    with pytest.raises(FileNotFoundError):
        api.delete_workspace(ADMIN, "a")
    assert oct(os.stat(data_dir / "b").st_mode & 0o777) == "0o700"


@pytest.mark.slow
def test_delete_is_refused_while_indexing_runs(data_dir) -> None:
    """The issue's crash: deleting a workspace while it was indexed killed the job with 'Cannot operate on
    a closed database'. Now the delete is refused while the job holds the write lock, the job finishes
    and its document is indexed; after it, the delete goes through."""
    import threading

    from core.types import ProgressEvent
    from core.workspace import Workspace

    api.create_workspace(ADMIN, "busy")
    ws = Workspace(data_dir / "busy")
    started, release = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def progress(event: ProgressEvent) -> None:
        if not started.is_set():
            started.set()
            release.wait(60)

    def job() -> None:
        try:
            outcome["report"] = api.index_text(EDITOR, ws, "harbour.txt",
                                               "Captain Orla Venn sailed from Port Sallow to Carrow Sound in 1911.",
                                               progress)
        except Exception as exc:  # noqa: BLE001 - recorded for the assertion
            outcome["error"] = exc

    thread = threading.Thread(target=job)
    thread.start()
    try:
        assert started.wait(120), "indexing did not start"
        with pytest.raises(WorkspaceBusyError, match="busy"):
            api.delete_workspace(ADMIN, "busy", ws)
        with pytest.raises(WorkspaceBusyError, match="being written"):
            api.delete_workspace(ADMIN, "busy")  # without a handle: the raw lock is refused too
        assert (data_dir / "busy").is_dir()
    finally:
        release.set()
        thread.join(300)
    assert "error" not in outcome, outcome.get("error")
    assert outcome["report"].processed == 1  # type: ignore[union-attr]
    api.delete_workspace(ADMIN, "busy", ws)
    assert not (data_dir / "busy").exists()

