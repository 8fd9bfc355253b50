"""The judge's protocol against the real local llama.cpp server (SmolLM2-135M) and through the
fault-injecting proxy of test_llm_faults.

The tiny model's verdicts are noise; what is checked is the protocol: every pair asked in both orders,
the counts add up, unreadable verdicts are counted invalid with the reply kept, the cost estimate
before and the usage after, a re-run served from the cache (no request reaches the server), a
cancelled run resumed without paying twice (library and CLI Ctrl-C), retries on timeouts, 500s and
malformed bodies, malformed verdicts from a reply the proxy scripts, and a server that stays down.
The numbers printed are the judge's measured cost per question and per pair (busy machine).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import MODEL_NAME, ROOT, llm_settings
from core.evaluation.questions import Question
from test_llm_faults import proxy  # noqa: F401 - the fault-injecting proxy fixture

pytestmark = [pytest.mark.llm, pytest.mark.slow]

MODES = ["naive", "local", "tree"]
QUESTIONS = [Question("j1", "Who founded the Velmora Marine Institute?", None),
             Question("j2", "What did the Great Velmora Flood destroy?", None)]


def judge_settings(url: str, **overrides):
    # contexts and answers small enough for the model's 4096-token window and for speed
    values = dict(max_total_tokens=1200, llm_max_tokens=60, llm_concurrency=1) | overrides
    return llm_settings(url, **values)


def fresh_chat(ws, cancel: threading.Event | None = None, **client):
    """A new client over the workspace cache, as a new process would build it."""
    from core.llm.provider import chat_from_settings

    return chat_from_settings(ws.settings, None, ws.store.conn, cancel_event=cancel, **client)


def cached_replies(ws) -> int:
    import sqlite3

    with sqlite3.connect(ws.store.path, timeout=30) as conn:
        return int(conn.execute("SELECT count(*) FROM llm_cache").fetchone()[0])


def attempts(chat) -> int:
    return chat.inner.inner.attempts


@pytest.fixture()
def judge_ws(sample_ws_copy, llm_server):
    sample_ws_copy.settings = judge_settings(llm_server)
    return sample_ws_copy


def test_protocol_usage_estimate_and_cache(judge_ws):
    from core.judge.prompt import INVALID
    from core.judge.runner import estimate_cost, run_judge

    ws = judge_ws
    chat = fresh_chat(ws)
    estimate = estimate_cost(ws, QUESTIONS, MODES, chat)
    assert attempts(chat) == 0 and estimate["cached"] == 0
    assert estimate["by_stage"]["judge"]["calls"] == 2 * 3 * len(QUESTIONS)
    started = time.perf_counter()
    report = run_judge(ws, QUESTIONS, MODES, chat)
    seconds = time.perf_counter() - started
    assert not report.cancelled and [q.qid for q in report.questions] == ["j1", "j2"]
    identical = 0
    for q in report.questions:
        assert set(q.answers) == set(MODES) and all(q.answers.values())
        assert sorted((j.first, j.second) for j in q.judgments) == sorted(
            (a, b) for a in MODES for b in MODES if a != b)  # every pair, in both orders
        for j in q.judgments:
            identical += j.note.startswith("identical")
            assert set(j.verdicts) == set(report.criteria)
            assert set(j.verdicts.values()) <= {j.first, j.second, "tie", INVALID}
            if INVALID in j.verdicts.values():
                assert j.note and j.raw  # shown, never guessed
    for by_criterion in report.pairs().values():
        for counts in by_criterion.values():
            assert sum(counts.values()) == 2 * len(QUESTIONS)
    usage = report.usage
    by_stage = usage["by_stage"]
    assert by_stage["judge"]["calls"] == 2 * 3 * len(QUESTIONS) - identical
    assert by_stage["answer"]["calls"] + by_stage["answer"]["cached"] == 3 * len(QUESTIONS)
    assert by_stage["keywords"]["calls"] == len(QUESTIONS)
    assert attempts(chat) == usage["calls"] and usage["cached"] == by_stage["answer"]["cached"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    judge = by_stage["judge"]
    pairs = len(report.pair_keys())
    print(f"\njudge cost (SmolLM2-135M, llama.cpp 1 thread, busy machine): {len(QUESTIONS)} questions x {pairs} "
          f"pairs in {seconds:.1f}s; per question {usage['calls'] / len(QUESTIONS):.1f} calls, "
          f"{(usage['prompt_tokens'] + usage['completion_tokens']) / len(QUESTIONS):.0f} tokens, "
          f"{seconds / len(QUESTIONS):.1f}s; per pair and question (2 judge calls) "
          f"{(judge['prompt_tokens'] + judge['completion_tokens']) / (len(QUESTIONS) * pairs):.0f} tokens, "
          f"{judge['seconds'] / (len(QUESTIONS) * pairs):.1f}s; estimate {estimate['calls']} calls, "
          f"~{estimate['prompt_tokens']} prompt + ~{estimate['completion_tokens']} completion tokens; measured "
          f"{usage['calls']} calls, {usage['prompt_tokens']} + {usage['completion_tokens']}; "
          f"{report.invalid_count()} invalid verdicts; consistency {report.consistency()}")
    # a new process re-running the same judge pays nothing, and its estimate says so beforehand
    again_chat = fresh_chat(ws)
    assert estimate_cost(ws, QUESTIONS, MODES, again_chat)["calls"] == 0
    again = run_judge(ws, QUESTIONS, MODES, again_chat)
    assert attempts(again_chat) == 0, "no request reached the server"
    assert again.usage["calls"] == 0 and again.usage["cached"] == usage["calls"] + usage["cached"]
    assert again.pairs() == report.pairs()
    assert [[j.verdicts for j in q.judgments] for q in again.questions] == \
        [[j.verdicts for j in q.judgments] for q in report.questions]


def test_cancel_then_resume_pays_each_call_once(judge_ws):
    from core.judge.runner import run_judge

    ws = judge_ws
    modes = ["naive", "local"]
    cancel = threading.Event()
    chat = fresh_chat(ws, cancel)

    def progress(event) -> None:
        if event.done >= 3:  # both answers and the first verdict of the first question are in
            cancel.set()

    cut = run_judge(ws, QUESTIONS, modes, chat, criteria="pathrag", progress=progress)
    assert cut.cancelled and len(cut.questions) < len(QUESTIONS)
    paid = cut.usage["calls"]
    assert paid >= 1 + 2 + 1 and attempts(chat) == paid
    resumed_chat = fresh_chat(ws)
    full = run_judge(ws, QUESTIONS, modes, resumed_chat, criteria="pathrag")
    assert not full.cancelled and len(full.questions) == len(QUESTIONS)
    assert full.usage["cached"] == paid, "every call of the cancelled run was reused"
    assert attempts(resumed_chat) == full.usage["calls"]
    needed = full.usage["calls"] + full.usage["cached"]
    identical = sum(j.note.startswith("identical") for q in full.questions for j in q.judgments)
    assert needed == len(QUESTIONS) * (1 + 2 + 2) - identical


def test_cli_json_then_ctrl_c_and_resume(judge_ws, llm_server, tmp_path):
    ws = judge_ws
    ws.save_settings(ws.settings.with_overrides({"provider": "offline"}))  # the flags turn the LLM on
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps({"question": q.question}) + "\n" for q in QUESTIONS))
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", ANONYMIZED_TELEMETRY="False")
    base = [sys.executable, "-m", "core", "judge", "--workspace", str(ws.path), "--questions", str(questions),
            "--modes", "naive,local", "--llm-base-url", llm_server, "--llm-model", MODEL_NAME, "--json"]
    proc = subprocess.Popen(base, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stderr.readline, "")), daemon=True)
    reader.start()
    deadline = time.monotonic() + 600
    while cached_replies(ws) < 2 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)  # Ctrl-C once the keyword call and a first answer are in the cache
    assert proc.poll() is None, "".join(lines)[-2000:]
    proc.send_signal(signal.SIGINT)
    out, rest = proc.communicate(timeout=600)  # communicate() may read the last stderr lines itself
    reader.join(timeout=10)
    lines.append(rest or "")
    assert proc.returncode == 130, "".join(lines)[-2000:]
    partial = json.loads(out)
    assert partial["cancelled"] is True and "run judge again to resume" in "".join(lines)
    assert any(line.startswith("estimate: ") and "LLM call(s) to make" in line for line in lines)
    run = subprocess.run(base + ["--quiet"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-2000:]
    data = json.loads(run.stdout)
    assert set(data["pairs"]) == {"naive|local"}
    for counts in data["pairs"]["naive|local"].values():
        assert set(counts) == {"naive", "local", "tie", "invalid"} and sum(counts.values()) == 2 * len(QUESTIONS)
    assert [q["qid"] for q in data["questions"]] == ["q1", "q2"]  # question files may carry only "question"
    assert data["usage"]["cached"] >= partial["usage"]["calls"] >= 1  # the interrupted run's calls were reused
    assert data["estimate"]["cached"] == data["usage"]["cached"]
    assert "measured:" in run.stderr


def test_faults_retries_invalid_verdicts_and_a_dead_server(proxy, sample_ws_copy):  # noqa: F811
    from core.judge.prompt import INVALID
    from core.judge.runner import run_judge
    from core.llm.client import LLMUnavailableError

    ws = sample_ws_copy
    ws.settings = judge_settings(proxy.url, llm_max_retries=5, llm_timeout_s=60)
    one, modes = QUESTIONS[:1], ["naive", "local"]

    def chat():
        return fresh_chat(ws, backoff_base=0.01, backoff_max=0.05)

    proxy.reset()
    warm = run_judge(ws, one, modes, chat(), criteria="overall")  # keywords and answers now cached
    assert warm.usage["by_stage"]["judge"]["calls"] == 2
    # transient faults on the first judge call: retried, and the run finishes (new judge keys: max tokens)
    proxy.reset(plan=["500", "429", "nonjson", "truncated", "timeout"])
    client = chat()
    report = run_judge(ws, one, modes, client, criteria="overall", judge_max_tokens=90)
    assert proxy.faults_served == ["500", "429", "nonjson", "truncated", "timeout"]
    assert client.inner.inner.retries == 5 and proxy.chat_requests == 5 + 2
    assert report.usage["calls"] == 2 and report.usage["cached"] == 1 + 2
    # replies that hold no readable verdict: every verdict invalid, the reply kept
    for reply, note in (("reply:Both answers look fine to me.", "holds no JSON object"),
                        ('reply:{"overall": {"winner": "maybe", "reason": "unsure"}}', "no winner among")):
        proxy.reset(always=reply)
        report = run_judge(ws, one, modes, chat(), criteria="overall", judge_max_tokens=91 + len(note))
        judgments = report.questions[0].judgments
        assert [j.verdicts for j in judgments] == [{"overall": INVALID}] * 2
        assert all(note in j.note and j.raw == reply[6:] for j in judgments)
        assert report.invalid_count() == 2 and report.pairs()["naive|local"]["overall"]["invalid"] == 2
    # a server that keeps failing ends the run with a clear error after bounded retries
    ws.settings = judge_settings(proxy.url, llm_max_retries=1, llm_timeout_s=60)
    proxy.reset(always="500")
    with pytest.raises(LLMUnavailableError, match=r"after 2 attempt\(s\): HTTP 500"):
        run_judge(ws, one, modes, chat(), criteria="overall", judge_max_tokens=120)
    # two attempts per call; the second judge call may have started before the first one failed
    assert proxy.chat_requests in (2, 4)
    proxy.reset()  # healthy again: the run resumes from the cached keywords and answers
    report = run_judge(ws, one, modes, chat(), criteria="overall", judge_max_tokens=120)
    assert report.usage["calls"] == 2 and report.usage["cached"] == 3


def test_evaluate_page_estimates_runs_and_shows_the_judge(sample_workspace_dir, tmp_path, monkeypatch, llm_server):
    import shutil

    from streamlit.testing.v1 import AppTest

    from core.config import load_settings
    from core.settings import save_settings

    folder = tmp_path / "workspaces"
    shutil.copytree(sample_workspace_dir, folder / "sample")
    save_settings(folder / "sample", load_settings(folder / "sample").model_copy(
        update={"max_total_tokens": 1200, "llm_max_tokens": 60, "llm_concurrency": 1}))
    monkeypatch.setenv("RAGSCOPE_DATA_DIR", str(folder))
    monkeypatch.setenv("RAGSCOPE_LLM_BASE_URL", llm_server)
    monkeypatch.setenv("RAGSCOPE_LLM_MODEL", MODEL_NAME)
    at = AppTest.from_file(str(ROOT / "pages" / "evaluate.py"), default_timeout=900)
    at.session_state["workspace_name"] = "sample"
    at.run()
    at.multiselect(key="judge_modes").set_value(["naive", "local"])
    at.number_input(key="judge_count").set_value(1).run()
    assert at.button(key="judge_run").disabled  # the estimate comes first
    at.button(key="judge_estimate").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any(t.value.startswith("Estimate: 5 LLM call(s) to make and 0 cached") for t in at.text), \
        [t.value for t in at.text]
    at.button(key="judge_run").click().run()
    job = at.session_state["judge_job"]
    assert job.join(timeout=900) and job.state == "done", job.error_traceback
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    report = at.session_state["judge_last"]["report"]
    assert [len(q.judgments) for q in report.questions] == [2]
    heatmaps = [c for c in at.get("plotly_chart") if "win rate of" in c.proto.spec]
    assert len(heatmaps) == 4  # one per LightRAG criterion
    cost = next(d.value for d in at.dataframe if "prompt tokens" in d.value.columns)
    assert list(cost[""]) == ["estimate (before)", "measured (after)"]
    assert int(cost["calls"].iloc[0]) == 5 and int(cost["calls"].iloc[1]) == report.usage["calls"] <= 5
    texts = [t.value for t in at.text]
    assert all(report.questions[0].answers[m] in texts for m in ("naive", "local"))  # side by side
