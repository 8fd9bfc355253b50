"""One retry policy (issue 22) and LLM calls that fit (issue 23), against the fake server of
``fake_openai`` and, for the budgeting, the real llama.cpp server started with a small context.

* Retry-After is honoured; Cancel wakes a retry wait within a second (no plain sleep) in both clients;
  one ``Retryable`` class serves both.
* Timeouts are on inactivity: a stream that keeps producing is not cut off; a silent server gets one
  retry at most; a call whose stream had produced text is never retried.
* The context window is discovered (vLLM ``max_model_len``, llama.cpp ``/props``), else the setting,
  else learned from a refusal; prompts and judge prompts are trimmed with a visible marker to fit."""
from __future__ import annotations

import ast
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_openai import FakeOpenAI, fresh_fake_openai  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PING = [{"role": "user", "content": "Say hello."}]


@pytest.fixture()
def fake():
    yield from fresh_fake_openai()


def chat(fake: FakeOpenAI, **options):
    from core.llm.client import OpenAIChat

    values = dict(max_retries=4, backoff_base=0.01, backoff_max=0.05, timeout_s=1.0) | options
    return OpenAIChat(fake.url, "fake-model", **values)


# --- one retry policy --------------------------------------------------------------------------
def test_both_clients_share_one_retryable_and_never_sleep_plainly():
    for module in ("core/llm/client.py", "core/remote_embeddings.py"):
        tree = ast.parse((ROOT / module).read_text())
        classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
        assert "_Retryable" not in classes and "Retryable" not in classes, module
        calls = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        assert "time.sleep" not in calls, module
    from core import remote_embeddings, retry
    from core.llm import client

    assert client.Retryable is retry.Retryable is remote_embeddings.Retryable


def test_retry_after_is_honoured(fake):
    fake.chat, fake.retry_after = "429", "1"
    started = time.perf_counter()
    with pytest.raises(Exception, match="after 2 attempt"):
        chat(fake, max_retries=1, backoff_max=5.0).complete(PING, stage="answer")
    assert time.perf_counter() - started >= 1.0  # the backoff alone: 0.01 s (Retry-After is capped at backoff_max)
    assert len(fake.chat_requests()) == 2


@pytest.mark.parametrize("client_kind", ["llm", "embeddings"])
def test_cancel_wakes_a_retry_wait_within_a_second(fake, client_kind):
    from core.remote_embeddings import RemoteEmbedder
    from core.types import Cancelled

    if client_kind == "llm":
        fake.chat = "500"
        target = chat(fake, max_retries=10, backoff_base=30.0, backoff_max=30.0)
        call = lambda: target.complete(PING, stage="answer")  # noqa: E731
    else:
        target = RemoteEmbedder(fake.url, "fake-model", max_retries=10, backoff_base=30.0, backoff_max=30.0)
        fake.embed = "500"
        call = lambda: target.embed(["text"])  # noqa: E731
    timer = threading.Timer(0.5, target.cancel)
    timer.start()
    started = time.perf_counter()
    with pytest.raises(Cancelled):
        call()
    assert time.perf_counter() - started < 1.5  # 0.5 s until Cancel, then woken within a second


# --- timeouts on inactivity -----------------------------------------------------------------------
def test_a_stream_that_keeps_producing_is_not_timed_out(fake):
    fake.chat, fake.pieces, fake.piece_delay_s = "slow", 6, 0.4  # 2 s in all, never 1 s silent
    reply = chat(fake, timeout_s=1.0).complete(PING, stage="answer")
    assert reply.text == "".join(f"p{i} " for i in range(6)) and len(fake.chat_requests()) == 1


def test_a_silent_server_gets_one_retry_at_most(fake):
    from core.llm.client import LLMUnavailableError

    fake.chat, fake.stall_s = "stall", 1.5
    with pytest.raises(LLMUnavailableError, match="no data for 1s|no response within 1s"):
        chat(fake, timeout_s=1.0, max_retries=4).complete(PING, stage="answer")
    assert len(fake.chat_requests()) == 2


def test_a_call_whose_stream_produced_text_is_never_retried(fake):
    from core.llm.client import LLMError

    fake.chat, fake.stall_s = "stall_after_text", 1.5
    with pytest.raises(LLMError, match="not retried"):
        chat(fake, timeout_s=1.0, max_retries=4).complete(PING, stage="answer")
    assert len(fake.chat_requests()) == 1
    pieces = []
    with pytest.raises(LLMError, match="not retried"):
        for piece in chat(fake, timeout_s=1.0, max_retries=4).stream(PING, stage="answer"):
            pieces.append(piece)
    assert pieces == ["p0 ", "p1 "] and len(fake.chat_requests()) == 2


# --- the context window ---------------------------------------------------------------------------
def test_the_window_is_discovered_from_vllm_then_llama_cpp_else_the_setting(fake):
    from core.llm import client

    fake.models_extra = {"max_model_len": 2048}
    assert chat(fake).context_window() == 2048
    client._WINDOWS.clear()
    fake.models_extra, fake.props = {}, {"default_generation_settings": {"n_ctx": 1536}}
    assert chat(fake).context_window() == 1536
    client._WINDOWS.clear()
    fake.props = None
    assert chat(fake).context_window() is None
    assert chat(fake, context_tokens=3000).context_window() == 3000


def long_answer_messages(tokens: int) -> list[dict[str, str]]:
    evidence = " ".join(f"fact{i} is stated in passage {i}." for i in range(tokens // 8))
    return [{"role": "system", "content": "Answer from the context."},
            {"role": "user", "content": f"Context:\n{evidence}\n\nQuestion: which fact is last?\n\nAnswer:"}]


def test_a_prompt_too_long_for_the_reported_window_is_trimmed_with_a_marker(fake):
    from core.tokens import count_tokens

    fake.models_extra = {"max_model_len": 1024}
    reply = chat(fake, max_tokens=256).complete(long_answer_messages(5000), stage="answer")
    assert reply.text == "Hello world"
    sent = fake.chat_requests()[-1]["body"]
    content = sent["messages"][1]["content"]
    assert "tokens left out here to fit the model's 1,024-token context" in content
    assert content.rstrip().endswith("Answer:") and content.startswith("Context:")  # question and start kept
    assert sum(count_tokens(m["content"]) + 4 for m in sent["messages"]) + sent["max_tokens"] <= 1024


def test_a_refusal_naming_the_window_is_learned_and_the_prompt_refitted(fake):
    fake.chat, fake.window, fake.refuse_above = "context", 1024, 6000
    reply = chat(fake, max_tokens=128).complete(long_answer_messages(4000), stage="answer")
    assert reply.text == "Hello world" and len(fake.chat_requests()) == 2
    assert "left out here" in fake.chat_requests()[-1]["body"]["messages"][1]["content"]


def test_judge_answers_share_the_room_equally_in_both_orders():
    from core.judge.prompt import CRITERIA_SETS, judge_messages
    from core.tokens import count_tokens

    long_a, short_b = "alpha " * 3000, "beta " * 200
    criteria = CRITERIA_SETS["lightrag"]
    one = judge_messages("Q?", long_a, short_b, criteria, room=1500)
    two = judge_messages("Q?", short_b, long_a, criteria, room=1500)
    assert sum(count_tokens(m["content"]) + 4 for m in one) <= 1500
    assert one[1]["content"].count("left out here") == 1 and short_b.strip() in one[1]["content"]
    trimmed_a = one[1]["content"].split("Answer 1:\n")[1].split("\n\nAnswer 2:")[0]
    assert trimmed_a in two[1]["content"]  # the same trimmed text in the swapped order
    assert judge_messages("Q?", long_a, short_b, criteria) == judge_messages("Q?", long_a, short_b, criteria, None)


# --- the real llama.cpp server with a small context ------------------------------------------------
@pytest.fixture(scope="module")
def small_llama(tmp_path_factory):
    import importlib.util
    import subprocess
    import urllib.request

    from conftest import MODEL_NAME, free_port, model_path, require_or_skip, stop_process

    if importlib.util.find_spec("llama_cpp") is None or model_path() is None:
        require_or_skip("llm", "llama-cpp-python or its model is not installed (bash scripts/install-llm.sh)")
    port = free_port()
    log = open(tmp_path_factory.mktemp("small-llama") / "server.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model_path()), "--model_alias",
                             MODEL_NAME, "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "1024",
                             "--n_threads", "1", "--n_threads_batch", "1", "--verbose", "False"],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(url + "/models", timeout=2):
                break
        except OSError:
            time.sleep(0.3)
    else:
        stop_process(proc)
        pytest.fail("the small-context llama.cpp server did not start")
    yield url, MODEL_NAME
    stop_process(proc)


@pytest.mark.llm
@pytest.mark.slow
def test_answers_and_judge_prompts_fit_the_real_small_context_server(small_llama):
    import openai

    from core import providers
    from core.judge.prompt import CRITERIA_SETS
    from core.judge.runner import _judge_call
    from core.llm import client
    from core.llm.client import OpenAIChat

    providers.reset()
    client._WINDOWS.clear()
    client._LEARNED.clear()
    url, model = small_llama
    prompt = long_answer_messages(3000)
    raw = openai.OpenAI(api_key="none", base_url=url, max_retries=0, timeout=300)
    with pytest.raises(openai.BadRequestError):  # before: the server refuses the prompt outright
        raw.chat.completions.create(model=model, messages=prompt, max_tokens=64)
    # with the setting: fitted before sending
    budgeted = OpenAIChat(url, model, max_tokens=64, max_retries=0, timeout_s=300, context_tokens=1024)
    reply = budgeted.complete(prompt, stage="answer")
    assert reply.completion_tokens > 0 and reply.prompt_tokens + reply.completion_tokens <= 1024
    answers = {"a": "alpha fact. " * 900, "b": "beta fact. " * 700}
    judgment = _judge_call(budgeted, "Which is better?", ("a", "b"), ("a", "b"), answers,
                           CRITERIA_SETS["lightrag"], 96)
    assert judgment.first == "a"  # the call went through (a verdict may be invalid: the model is tiny)
    # without the setting (this server reports no window): the refusal names it, the prompt is refitted
    client._LEARNED.clear()  # forget what the first refusal taught (the window is kept per server and model)
    learning = OpenAIChat(url, model, max_tokens=64, max_retries=0, timeout_s=300)
    assert learning.context_window() is None
    assert learning.complete(prompt, stage="answer").completion_tokens > 0
    assert 0 < learning.context_window() <= 1024  # in cl100k units: rescaled by the server's own count
