"""What every CLI command shares: the common and provider flags, the run's settings (flags >
environment > settings, resolved once by ``core.config``), opening the workspace, the chat model of
the flags, tqdm progress on stderr, Ctrl-C handling and JSON output."""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

from core.config import Flags, default_workspace, resolve_settings
from core.settings import Settings
from core.types import ProgressEvent
from core.workspace import Workspace

EXIT_CANCELLED = 130  # a resumable stop (Ctrl-C), like an interrupted run
EXIT_ERROR = 2  # a known error (core.errors.KNOWN_ERRORS): its message is printed
CANCELLED_MESSAGE = "cancelled; run {command} again to resume (finished LLM work is cached)"
PARAM_HELP = "override a setting for this query, e.g. --param tree_top_k=10 (repeatable)"


def common_flags() -> argparse.ArgumentParser:
    """The flags of every command (a parent parser)."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", default=str(default_workspace()),
                        help="workspace folder (default: %(default)s; RAGSCOPE_DATA_DIR / RAGSCOPE_WORKSPACE)")
    common.add_argument("--chroma-url", default=None, help="use a ChromaDB server (http://HOST:PORT) instead of the embedded store")
    common.add_argument("--store", default=None,
                        help="system of record: postgresql://USER:PASSWORD@HOST:PORT/DB shares one index between "
                             "processes (env RAGSCOPE_STORE; default: the workspace folder's SQLite file)")
    common.add_argument("--json", action="store_true", help="print JSON on stdout")
    common.add_argument("--quiet", action="store_true", help="no progress bars")
    common.add_argument("--wait", action="store_true", help="wait for another writer instead of failing")
    return common


def add_provider_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--llm-base-url", default=None, help="OpenAI-compatible base URL (env RAGSCOPE_LLM_BASE_URL)")
    parser.add_argument("--llm-model", default=None, help="chat model name (env RAGSCOPE_LLM_MODEL)")
    parser.add_argument("--offline", action="store_true", help="force the offline path even if an LLM is configured")


def add_embedding_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--embedding-base-url", default=None,
                        help="OpenAI-compatible embeddings server, e.g. http://127.0.0.1:7997 "
                             "(env RAGSCOPE_EMBEDDING_BASE_URL; selects embedder=openai)")
    parser.add_argument("--embedding-model", default=None,
                        help="embedding model name on that server (env RAGSCOPE_EMBEDDING_MODEL)")
    parser.add_argument("--embedder", default=None, choices=["local-minilm", "local-minilm-int8"],
                        help="the local embedder: all-MiniLM-L6-v2 on torch, or the same model in int8 on "
                             "onnxruntime (bash scripts/install-minilm-int8.sh makes it); default: the settings' "
                             "choice, else the model the workspace recorded, else int8 for a new workspace")


def parse_params(pairs: list[str]) -> dict[str, Any]:
    """'key=value' strings → typed overrides (validated later by the settings model)."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ValueError(f"--param expects key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out


def with_params(settings: Settings, args: argparse.Namespace) -> Settings:
    """``settings`` with the command's ``--param key=value`` overrides."""
    pairs = getattr(args, "param", None)
    return settings.with_overrides(parse_params(pairs)) if pairs else settings


def cli_settings(args: argparse.Namespace) -> Settings:
    """The run's settings: the workspace's file, the environment over it, the command's flags over both
    (--chroma-url, --embedding-base-url/--embedding-model, --llm-base-url/--llm-model/--offline)."""
    flags = Flags(chroma_url=getattr(args, "chroma_url", None),
                  embedding_base_url=getattr(args, "embedding_base_url", None),
                  embedding_model=getattr(args, "embedding_model", None),
                  embedder=getattr(args, "embedder", None), llm=hasattr(args, "offline"), llm_base_url=getattr(args, "llm_base_url", None),
                  llm_model=getattr(args, "llm_model", None), offline=bool(getattr(args, "offline", False)))
    return resolve_settings(Path(args.workspace), flags)


def open_workspace(args: argparse.Namespace, read_only: bool = False) -> Workspace:
    """The command's workspace. ``read_only`` (status, docs, export, graph-quality, annotations list):
    the recorded embedder is not checked against the configured one, since nothing is embedded or
    searched (a workspace indexed through an embeddings server opens without that server configured)."""
    store = getattr(args, "store", None)
    if store:  # the whole run (and what it opens again, e.g. a re-embed) uses this store
        os.environ["RAGSCOPE_STORE"] = store
    return Workspace(Path(args.workspace), settings=cli_settings(args), check_embedder=not read_only)


def providers(ws: Workspace, args: argparse.Namespace, settings: Optional[Settings] = None,
              cancel_event: Optional[threading.Event] = None) -> tuple[Any, Any]:
    """(chat model or None, keyword extractor or None) of the run's settings (``ws.settings`` unless
    given); ``--offline`` forces (None, None). ``cancel_event`` becomes the client's cancellation."""
    from core.llm.provider import providers as build

    if getattr(args, "offline", False):
        return None, None
    return build(ws, settings or ws.settings, cancel_event)


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


class StderrProgress:
    """Render progress events as one tqdm bar per step on stderr."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.bars: dict[str, Any] = {}
        self.docs = (0, 0)  # documents indexed of the run's total (the last 'index' event)

    def __call__(self, event: ProgressEvent) -> None:
        if event.step == "repair":  # a notice, not a bar: say what reconciliation repaired (even with --quiet)
            print(event.message, file=sys.stderr)
            return
        if not self.enabled or (event.step not in ("register", "index") and event.fraction is None):
            return
        from tqdm import tqdm

        if event.fraction is not None:  # indexing: the whole run's weighted fraction (moves inside a batch)
            self._overall(event, tqdm)
            return
        bar = self.bars.get(event.step)
        if bar is None:
            bar = self.bars[event.step] = tqdm(total=max(event.total, 1), desc=event.step, unit="doc",
                                               file=sys.stderr, leave=True, dynamic_ncols=True)
        bar.total = max(event.total, 1)
        bar.n = event.done
        if event.message:
            bar.set_postfix_str(event.message[:40])
        bar.refresh()

    def _overall(self, event: ProgressEvent, tqdm: Any) -> None:
        """The 'index' bar in per cent of the run, with documents indexed, the batch and the time left."""
        if event.step == "index":
            self.docs = (event.done, event.total)
        bar = self.bars.get("index")
        if bar is None:
            bar = self.bars["index"] = tqdm(total=100, desc="index", unit="%", file=sys.stderr, leave=True,
                                            dynamic_ncols=True, bar_format="index: {percentage:3.0f}%|{bar}| {desc}")
        bar.n = round(100 * (event.fraction or 0.0), 1)
        done, total = self.docs
        parts = [f"{done}/{total} docs"]
        if event.batches > 1:
            parts.append(f"batch {event.batch} of {event.batches}")
        if event.step != "index":
            parts.append(event.step)
        if event.eta_text():
            parts.append(event.eta_text())
        bar.set_description_str(", ".join(parts), refresh=False)
        bar.refresh()

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()


@contextmanager
def graceful_interrupts(cancel: threading.Event) -> Iterator[None]:
    """The first Ctrl-C (or SIGTERM) sets ``cancel``: LLM calls in flight finish (and are cached), no
    new call starts, and the batch's documents go back to 'pending'. A second Ctrl-C stops at once."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    signals = (signal.SIGINT, signal.SIGTERM)
    previous = {sig: signal.getsignal(sig) for sig in signals}

    def handler(signum: int, _frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        cancel.set()
        print("cancelling at the next safe point (LLM calls in flight finish and are cached; Ctrl-C again to stop at "
              "once)…", file=sys.stderr)

    for sig in signals:
        signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
