"""Providers belong to the operator (issue 20): the allowlist and the keys, tried against fake
OpenAI-compatible servers on 127.0.0.1 that record every request's Authorization header.

The attack: a viewer (or anyone) types a base URL that points at a server they run and presses the
connection test, or the judge / the CLI / indexing calls it. Whatever URL is typed, the operator's key
must never arrive there; with sign-in on nothing at all is sent to a URL off the allowlist."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_openai import FakeOpenAI  # noqa: E402

OPERATOR_KEY = "sk-operator-0123456789"
USER_KEY = "sk-user-of-this-session"
PING = [{"role": "user", "content": "Say hello."}]


@pytest.fixture()
def servers():
    allowed, attacker = FakeOpenAI(), FakeOpenAI()
    yield allowed, attacker
    allowed.close()
    attacker.close()


@pytest.fixture(autouse=True)
def _policy_reset():
    from core import providers

    providers.reset()
    yield
    providers.reset()


def configure(allowed: FakeOpenAI, local_mode: bool):
    from core import providers

    return providers.configure({"RAGSCOPE_ALLOWED_LLM_URLS": allowed.url, "RAGSCOPE_ALLOWED_EMBEDDING_URLS": allowed.url,
                                "OPENAI_API_KEY": OPERATOR_KEY}, {}, local_mode=local_mode)


def bearer(key: str) -> str:
    return f"Bearer {key}"


def attacker_urls(allowed: FakeOpenAI, attacker: FakeOpenAI) -> list[str]:
    """What a viewer might type: the attacker's server plainly, with tricks, or under the allowed host."""
    port = attacker.server.server_address[1]
    return [attacker.url, attacker.url + "/", attacker.root, f"http://localhost:{port}/v1",
            f"http://127.0.0.1:{allowed.server.server_address[1]}@127.0.0.1:{port}/v1",
            f"HTTP://127.0.0.1:{port}/v1", f"http://127.0.0.1:{port}/v1/../v1"]


def try_every_client(url: str, key=None) -> None:
    """Call the LLM client, the connection test and the embeddings client at ``url`` (errors ignored)."""
    from core.llm.client import OpenAIChat
    from core.llm.provider import test_connection
    from core.remote_embeddings import RemoteEmbedder, test_embedding_server
    from core.settings import Settings

    settings = Settings(provider="openai", llm_base_url=url, llm_model="fake-model", embedder="openai",
                        embedding_base_url=url, embedding_model="fake-model", llm_max_retries=0,
                        embedding_max_retries=0)
    for call in (lambda: OpenAIChat(url, "fake-model", key, max_retries=0).complete(PING, stage="answer"),
                 lambda: test_connection(settings, key),
                 lambda: RemoteEmbedder(url, "fake-model", key, max_retries=0).embed(["a text"]),
                 lambda: test_embedding_server(settings, key)):
        try:
            call()
        except Exception:  # noqa: BLE001 - refusals are what we want; the server's log is the evidence
            pass


@pytest.mark.parametrize("local_mode", [False, True], ids=["signin", "local"])
def test_the_operator_key_never_reaches_a_url_off_the_allowlist(servers, local_mode):
    allowed, attacker = servers
    configure(allowed, local_mode)
    for url in attacker_urls(allowed, attacker):
        # no key, and the operator's key handed in as if it were the session's (the old ui/state did that)
        for key in (None, OPERATOR_KEY):
            try_every_client(url, key)
    assert bearer(OPERATOR_KEY) not in attacker.auths()
    if not local_mode:  # sign-in on: nothing at all is sent off the allowlist
        assert attacker.requests == []
    else:  # local mode: the user may call their own server, without the operator's key
        assert attacker.chat_requests() and attacker.auths() <= {"Bearer no-key-needed", ""}
    # the allowed server does get the operator's key, from the clients and the connection test alike
    try_every_client(allowed.url)
    sent = {r["auth"] for r in allowed.requests if r["path"] != "/props"}  # /props (server root): no key, by design
    assert sent == {bearer(OPERATOR_KEY)}
    assert {r["auth"] for r in allowed.requests if r["path"] == "/props"} <= {""}


def test_with_signin_a_url_off_the_allowlist_is_refused_with_a_clear_message(servers):
    from core.errors import ProviderNotAllowedError
    from core.llm.client import OpenAIChat
    from core.llm.provider import test_connection
    from core.settings import Settings

    allowed, attacker = servers
    configure(allowed, local_mode=False)
    with pytest.raises(ProviderNotAllowedError, match="RAGSCOPE_ALLOWED_LLM_URLS"):
        OpenAIChat(attacker.url, "fake-model")
    ok, message = test_connection(Settings(provider="openai", llm_base_url=attacker.url, llm_model="fake-model"))
    assert not ok and "not one the operator allowed" in message and allowed.url in message
    assert attacker.requests == []


def test_in_local_mode_the_users_own_key_goes_where_the_user_says(servers):
    from core.llm.client import OpenAIChat

    allowed, attacker = servers
    configure(allowed, local_mode=True)
    OpenAIChat(attacker.url, "fake-model", USER_KEY, max_retries=0).complete(PING, stage="answer")
    assert {r["auth"] for r in attacker.chat_requests()} == {bearer(USER_KEY)}


@pytest.mark.parametrize("typed", ["localhost:8080", "ftp://127.0.0.1/v1", "javascript:alert(1)", "127.0.0.1:8080/v1",
                                   "http://", "http://user:pw@127.0.0.1:8080/v1", "http://127.0.0.1:99999/v1"])
def test_not_a_url_is_a_clear_error_not_a_network_error(typed):
    from core.errors import ProviderNotAllowedError
    from core.llm.client import OpenAIChat
    from core.remote_embeddings import RemoteEmbedder

    with pytest.raises(ProviderNotAllowedError, match="URL"):
        OpenAIChat(typed, "fake-model")
    with pytest.raises(ProviderNotAllowedError, match="URL"):
        RemoteEmbedder(typed, "fake-model")


def test_allowlist_matching_is_by_scheme_host_port_and_path_prefix():
    from core import providers

    providers.configure({"RAGSCOPE_ALLOWED_LLM_URLS": "http://gpu:8000/v1 GPU_KEY, https://API.example.com/",
                         "GPU_KEY": "k-gpu", "OPENAI_API_KEY": OPERATOR_KEY}, {}, local_mode=False)
    assert providers.is_allowed("http://gpu:8000/v1/", "llm")
    assert providers.is_allowed("http://GPU:8000/v1/chat", "llm")
    assert providers.is_allowed("https://api.example.com:443/v1", "llm")
    for url in ("http://gpu:8000/v10", "http://gpu:8001/v1", "https://gpu:8000/v1", "http://gpu:8000/",
                "http://gpu:8000/v1/../admin", "http://gpu.evil:8000/v1", "https://api.openai.com/v1"):
        assert not providers.is_allowed(url, "llm"), url
    assert providers.key_for("http://gpu:8000/v1", "llm") == "k-gpu"  # the entry's own key
    assert providers.key_for("https://api.example.com/v1", "llm") == OPERATOR_KEY
    assert not providers.is_allowed("http://gpu:8000/v1", "embeddings")  # lists are per kind
    # secrets win over the environment; the operator's chosen server is allowed too
    policy = providers.policy_from({"OPENAI_API_KEY": "env"}, {"OPENAI_API_KEY": "secret",
                                                               "RAGSCOPE_LLM_BASE_URL": "http://llm:8080/v1"})
    assert policy.keys["OPENAI_API_KEY"] == "secret"
    assert [p.url for p in policy.allowed("llm")] == ["http://llm:8080/v1", "https://api.openai.com/v1"]


def test_remote_error_bodies_are_not_echoed(servers):
    from core.errors import RAGScopeError
    from core.llm.client import OpenAIChat
    from core.llm.provider import test_connection
    from core.remote_embeddings import RemoteEmbedder
    from core.settings import Settings

    allowed, _ = servers
    configure(allowed, local_mode=True)
    messages = []
    for mode in ("error400", "500", "429"):
        allowed.chat = mode
        allowed.retry_after = "0"
        with pytest.raises(RAGScopeError) as info:
            OpenAIChat(allowed.url, "fake-model", max_retries=1, backoff_base=0.01).complete(PING, stage="answer")
        messages.append(str(info.value))
    messages.append(test_connection(Settings(provider="openai", llm_base_url=allowed.url, llm_model="fake-model"))[1])
    embedder = RemoteEmbedder(allowed.url, "fake-model", max_retries=0)
    allowed.embed = "error400"
    with pytest.raises(RAGScopeError) as info:
        embedder.embed(["x"])
    messages.append(str(info.value))
    for message in messages:
        assert "SECRET-UPSTREAM-DETAIL" not in message and "<img" not in message, message
        assert "HTTP" in message  # the status code is kept: the message is a summary, not silence
    embedder.close()


def test_the_cache_key_names_the_server_and_old_rows_are_dropped(servers, tmp_path):
    from core.llm.cache import CachedChat, cache_key
    from core.llm.client import OpenAIChat
    from core.workspace import Workspace

    allowed, attacker = servers
    configure(allowed, local_mode=True)
    ws = Workspace(tmp_path / "ws")
    conn = ws.store.conn
    conn.execute("INSERT INTO llm_cache(key, response, prompt_tokens, completion_tokens, created_at) "
                 "VALUES (?, 'replayed from an unknown server', 1, 1, 0)", ("0" * 64,))
    conn.commit()
    mine = CachedChat(OpenAIChat(allowed.url, "fake-model", max_retries=0), conn)
    theirs = CachedChat(OpenAIChat(attacker.url, "fake-model", max_retries=0), conn)
    assert mine.key_for(PING) != theirs.key_for(PING) and mine.key_for(PING).startswith("v2:")
    assert conn.execute("SELECT count(*) FROM llm_cache WHERE key = ?", ("0" * 64,)).fetchone()[0] == 0
    theirs.complete(PING, stage="answer")  # a reply from the other server...
    allowed.reset()
    reply = mine.complete(PING, stage="answer")  # ...is not replayed for this one
    assert not reply.cached and len(allowed.chat_requests()) == 1
    assert mine.complete(PING, stage="answer").cached  # and this server's own reply is cached
    assert cache_key("m", PING, {"base_url": "a"}) != cache_key("m", PING, {"base_url": "b"})
    ws.close()


def test_two_sessions_with_different_keys_never_use_each_others(servers, tmp_path):
    """One workspace shared by two browser sessions (as the app's cached workspace is): the remote
    embedder built with the first session's key must not carry it into the second session's queries."""
    import threading

    from core.llm.provider import chat_from_settings
    from core.settings import Settings
    from core.workspace import Workspace

    allowed, _ = servers
    configure(allowed, local_mode=True)
    settings = Settings(embedder="openai", embedding_base_url=allowed.url, embedding_model="fake-model",
                        provider="openai", llm_base_url=allowed.url, llm_model="fake-model")
    ws = Workspace(tmp_path / "shared", settings=settings)
    seen: list[tuple[str, str]] = []
    for session_key in ("sk-session-A", "sk-session-B", "sk-session-A", None):
        allowed.reset()
        ws.api_key = session_key  # what ui.state.workspace() does for the session running now
        ws.embedder.embed([f"query of {session_key}"])
        chat_from_settings(settings, session_key).complete(PING, stage="answer")
        seen.append((str(session_key), "|".join(sorted(allowed.auths()))))
    assert seen == [("sk-session-A", bearer("sk-session-A")), ("sk-session-B", bearer("sk-session-B")),
                    ("sk-session-A", bearer("sk-session-A")), ("None", bearer(OPERATOR_KEY))]
    # concurrently: each session's view of the shared embedder sends its own key only
    allowed.reset()
    base = ws.embedder
    views = {k: base.for_key(k) for k in ("sk-session-A", "sk-session-B")}
    errors: list[str] = []

    def run(key: str) -> None:
        for i in range(5):
            views[key].embed([f"{key} {i}"])

    threads = [threading.Thread(target=run, args=(k,)) for k in views]
    [t.start() for t in threads]
    [t.join() for t in threads]
    for request in allowed.requests:
        text = " ".join(request["body"]["input"])
        owner = "sk-session-A" if "sk-session-A" in text else "sk-session-B"
        if request["auth"] != bearer(owner):
            errors.append(f"{text!r} went with {request['auth']}")
    assert not errors and len(allowed.requests) == 10
    ws.close()
