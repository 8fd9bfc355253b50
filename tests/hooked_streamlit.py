"""``streamlit`` with a test hook installed in the server process (tests/test_browser_sessions.py).

Used as ``python tests/hooked_streamlit.py run app.py ...`` (the arguments of the ``streamlit`` command).
With ``RAGSCOPE_TEST_HOOK_DIR=D`` in the environment, while the file ``D/armed`` exists an indexing
batch writes its graph vectors and rows (inside its unit of work, nothing committed), touches
``D/inside``, waits for ``D/release`` (at most 10 minutes) and then fails, so the batch rolls back —
the same pause-then-fail as tests/test_session_isolation.py, in the app's own process. Never used by
the app itself.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


class HookFailure(RuntimeError):
    """The failure the hook makes (its message names it, so the page's reason shows where it came from)."""


def install(hook_dir: Path) -> None:
    import core.indexing.batch as batch

    original = batch.upsert_graph_vectors

    def pause_then_fail(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        if (hook_dir / "armed").exists():
            (hook_dir / "inside").touch()
            deadline = time.time() + 600
            while not (hook_dir / "release").exists() and time.time() < deadline:
                time.sleep(0.2)
            raise HookFailure("made to fail by the test hook after its rows were written")
        return result

    batch.upsert_graph_vectors = pause_then_fail


def main() -> None:
    hook = os.environ.get("RAGSCOPE_TEST_HOOK_DIR")
    if hook:
        install(Path(hook))
    from streamlit.web import cli

    sys.argv = ["streamlit", *sys.argv[1:]]
    cli.main(prog_name="streamlit")


if __name__ == "__main__":
    main()
