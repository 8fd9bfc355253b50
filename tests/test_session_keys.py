"""Per-session API keys in local mode (issue 20): two browser sessions share one open workspace, each
with its own key; every request to the LLM and to the remote embedder carries the key of the session
that made it.

The sessions are two threads (the app runs each browser session's script on a thread of its own) over
one ``Workspace`` with a remote embedder and the LLM on a recording fake server. Both handles are made
before either calls anything, the order in which the old shared ``ws.api_key`` attribute leaked: the
second session's key overwrote the first's. A control runs the same scenario with that shared
attribute and shows the check catches the leak.
"""
from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Callable

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_openai import FakeOpenAI  # noqa: E402

from core import api, providers  # noqa: E402
from core.auth import LOCAL_ADMIN  # noqa: E402
from core.llm.provider import providers as llm_providers  # noqa: E402
from core.session import SessionWorkspace, session_handle, shared_workspace  # noqa: E402
from core.settings import Settings  # noqa: E402
from core.workspace import Workspace  # noqa: E402

KEYS = {"alice": "sk-alice-own-key-1111", "bob": "sk-bob-own-key-2222"}
QUESTIONS = {"alice": "Which engine did Charles Babbage design in London?",
             "bob": "Where did Grace Hopper build the first compiler?"}
TEXT = ("Ada Lovelace worked with Charles Babbage in London. Babbage designed the Analytical Engine. "
        "Grace Hopper built the first compiler at Remington Rand in Philadelphia.")


@pytest.fixture()
def fake(monkeypatch):
    for name in ("OPENAI_API_KEY", "RAGSCOPE_ALLOWED_LLM_URLS", "RAGSCOPE_ALLOWED_EMBEDDING_URLS"):
        monkeypatch.delenv(name, raising=False)
    providers.reset()
    providers.configure({}, {}, local_mode=True)  # sign-in off: each session may bring its own key
    server = FakeOpenAI()
    yield server
    server.close()
    providers.reset()


@pytest.fixture()
def shared(fake, tmp_path):
    settings = Settings(provider="openai", llm_base_url=fake.url, llm_model="fake-model", embedder="openai",
                        embedding_base_url=fake.url, embedding_model="fake-embed", llm_max_retries=0)
    ws = Workspace(tmp_path / "ws", settings=settings)
    api.index_text(LOCAL_ADMIN, session_handle(ws, "sk-indexer-key"), "notes.txt", TEXT)
    fake.reset()
    yield ws
    ws.close()


def _requests_of(fake: FakeOpenAI, who: str) -> list[dict]:
    """The recorded requests that carry ``who``'s question (embedding input or chat prompt)."""
    return [r for r in fake.requests if QUESTIONS[who] in repr(r["body"])]


def two_sessions(ws: Workspace, make: Callable[[Workspace, str], Workspace]) -> dict[str, Exception]:
    """Both sessions make their handle, then each queries with the LLM (answers on); returns errors."""
    made = threading.Barrier(2)
    errors: dict[str, Exception] = {}

    def session(who: str) -> None:
        try:
            handle = make(ws, KEYS[who])
            made.wait(30)  # both handles exist before either calls anything
            chat, _keywords = llm_providers(handle, handle.settings)
            api.run_modes(LOCAL_ADMIN, handle, QUESTIONS[who], ["naive", "local"], llm=chat)
            chat.flush()
        except Exception as exc:  # noqa: BLE001 - reported to the test thread
            errors[who] = exc

    threads = [threading.Thread(target=session, args=(who,)) for who in KEYS]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    return errors


def _keys_seen(fake: FakeOpenAI) -> dict[str, dict[str, set[str]]]:
    seen: dict[str, dict[str, set[str]]] = {}
    for who in KEYS:
        mine = _requests_of(fake, who)
        seen[who] = {kind: {r["auth"] for r in mine if r["path"].endswith(kind)}
                     for kind in ("/embeddings", "/chat/completions")}
    return seen


def test_each_session_sends_its_own_key_to_the_llm_and_the_embedder(fake, shared):
    errors = two_sessions(shared, session_handle)
    assert errors == {}
    seen = _keys_seen(fake)
    for who, key in KEYS.items():
        # both kinds of request were made for this session's question (the check is not vacuous) ...
        assert seen[who]["/embeddings"] and seen[who]["/chat/completions"], (who, seen)
        # ... and every one of them carried this session's key, never the other's
        assert seen[who] == {"/embeddings": {f"Bearer {key}"}, "/chat/completions": {f"Bearer {key}"}}, who
    assert shared.api_key is None  # the shared workspace never took a session's key


def test_the_check_catches_a_key_kept_on_the_shared_workspace(fake, shared):
    """Control: the old way (one ``ws.api_key`` attribute on the shared object) leaks a key here."""
    def old_way(ws: Workspace, key: str) -> Workspace:
        ws.api_key = key
        return ws

    assert two_sessions(shared, old_way) == {}
    seen = _keys_seen(fake)
    leaked = [who for who, key in KEYS.items()
              if any(auths - {f"Bearer {key}"} for auths in seen[who].values())]
    assert leaked, seen


def test_a_handle_shares_everything_but_the_key(shared):
    a, b = session_handle(shared, KEYS["alice"]), session_handle(shared, KEYS["bob"])
    assert isinstance(a, Workspace) and isinstance(a, SessionWorkspace)
    assert (a.api_key, b.api_key, shared.api_key) == (KEYS["alice"], KEYS["bob"], None)
    assert a.records is shared.records and a.views is b.views is shared.views  # one store, one set of views
    assert a.loaded_embedder is shared.loaded_embedder is not None  # one embedder client ...
    assert a.embedder is not b.embedder  # ... seen through one key-view per caller
    a.api_key = "sk-changed"
    assert b.api_key == KEYS["bob"] and shared.api_key is None
    a.reopen_vectors()  # a change of the shared state through one handle is the shared state's
    assert shared._views is None and b._views is None
    assert shared_workspace(session_handle(a)) is shared and shared_workspace(shared) is shared
    assert KEYS["alice"] not in repr(a) and "sk-changed" not in repr(a)
