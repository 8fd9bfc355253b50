"""The Settings page's provider section against recording fake servers (issue 20): a URL typed on the
page and the *Test connection* button never carry the operator's key off the allowlist, the remote
server's error text is not shown, and with sign-in on the base URLs are a choice among the allowed ones
(no free text, no key field)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_openai import FakeOpenAI  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OPERATOR_KEY = "sk-operator-page-test-42"


@pytest.fixture()
def servers(tmp_path, monkeypatch):
    from core import providers

    allowed, attacker = FakeOpenAI(), FakeOpenAI()
    folder = tmp_path / "workspaces"
    folder.mkdir()
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(folder))
    for name in ("RAGSCOPE_WORKSPACE", "RAGSCOPE_LLM_BASE_URL", "RAGSCOPE_LLM_MODEL", "RAGSCOPE_EMBEDDING_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)
    monkeypatch.setenv("RAGSCOPE_ALLOWED_LLM_URLS", allowed.url)
    monkeypatch.setenv("RAGSCOPE_ALLOWED_EMBEDDING_URLS", allowed.url)
    providers.reset()
    import ui.state

    ui.state._PROVIDERS.clear()
    yield allowed, attacker
    ui.state._PROVIDERS.clear()
    providers.reset()
    allowed.close()
    attacker.close()


def settings_page(secrets: dict | None = None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    for name, value in (secrets or {}).items():
        at.secrets[name] = value
    at.run()
    at.switch_page("pages/settings.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_a_url_typed_on_the_page_and_the_connection_test_never_get_the_operator_key(servers):
    allowed, attacker = servers
    attacker.chat = "error400"
    at = settings_page()
    at.selectbox(key="set::default::provider").set_value("openai").run()  # the chat fields open
    at.text_input(key="set::default::llm_model").input("fake-model").run()  # a valid form: the buttons open
    at.text_input(key="set::default::llm_base_url").input(attacker.url)
    at.button(key="settings_test").click().run()
    assert not at.exception
    assert attacker.chat_requests(), "local mode: the user's own server is called…"
    assert f"Bearer {OPERATOR_KEY}" not in attacker.auths()  # …but never with the operator's key
    shown = " ".join(e.value for e in at.error) + " ".join(s.value for s in at.success)
    assert "HTTP 400" in shown and "SECRET-UPSTREAM-DETAIL" not in shown and "img" not in shown
    at.text_input(key="set::default::llm_base_url").input(allowed.url)
    allowed.chat = "ok"
    at.button(key="settings_test").click().run()
    assert allowed.auths() == {f"Bearer {OPERATOR_KEY}"} and any("connected" in s.value for s in at.success)


def test_not_a_url_is_refused_on_save_with_a_clear_message(servers):
    at = settings_page()
    at.selectbox(key="set::default::provider").set_value("openai").run()  # the chat fields open
    at.text_input(key="set::default::llm_model").input("fake-model").run()  # a valid form: the buttons open
    at.text_input(key="set::default::llm_base_url").input("localhost:8080")
    at.button(key="settings_save").click().run()
    assert not at.exception
    # the settings validator (core.settings) refuses it before the provider check is reached
    shown = [e.value.replace("\\", "") for e in at.error]
    assert any("not a URL: give http(s)://host[:port]/v1" in text for text in shown), shown
    assert any(text.startswith("Not saved") for text in shown), shown


def test_with_signin_the_urls_are_chosen_among_the_allowed_and_there_is_no_key_field(servers, monkeypatch):
    import ui.state
    from core import providers

    allowed, attacker = servers
    monkeypatch.setattr(ui.state, "signin_enabled", lambda: True)  # the operator's [auth], as the page sees it
    at = settings_page()
    assert providers.policy().local_mode is False
    at.selectbox(key="set::default::provider").set_value("openai").run()
    url_choice = at.selectbox(key="set::default::llm_base_url")
    assert list(url_choice.options) == [allowed.url]  # no free text: only what the operator allowed
    assert not [t for t in at.text_input if t.key == "settings_api_key_input"]
    assert not [t for t in at.text_input if t.key == "set::default::llm_base_url"]
    # a URL written into settings.json by hand (or saved before) is refused by the clients themselves
    from core.llm.provider import test_connection
    from core.settings import Settings

    ok, message = test_connection(Settings(provider="openai", llm_base_url=attacker.url, llm_model="fake-model"))
    assert not ok and "not one the operator allowed" in message and attacker.requests == []
