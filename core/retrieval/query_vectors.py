"""The query vectors a mode asks for, shared between the calling thread and the embedder's helper thread
string by string, for an embedder whose query vectors do not depend on what they are embedded with
(``query_vectors_alone`` with ``embed_queries_soon``: the int8 MiniLM, one session call per string).

``fetch_shared`` embeds the first asked string not started yet on the calling thread and starts the
others on the helper (``embed_queries_soon``, one future per string, in order: the rest of the asked
strings, then the question's other strings), then makes the asked strings ready: one the helper has not
started is taken back (``Future.cancel``) and embedded on the calling thread, the last first, while the
helper works from the front; one the helper has started is waited for. The other strings stay with the
helper, so they are embedded while the caller works on what it has (e.g. global mode's entity search runs
while its keywords are embedded), and a later ask takes them back the same way if the helper has not
reached them; those the helper has done are read. Without a helper thread ``embed_queries_soon`` embeds at
once, so every string is embedded at the first ask, as before.

Every string is still its own session call on the one-thread session, whichever thread runs it, so the
vectors are the ones of ``embed_queries``."""
from __future__ import annotations

from concurrent.futures import Future
from typing import Callable, MutableMapping, Sequence

import numpy as np

Soon = Callable[[Sequence[str]], "Future[np.ndarray]"]
Now = Callable[[list[str]], list[np.ndarray]]


def _queued(started: "Future[np.ndarray]") -> bool:
    """Not yet taken by the helper thread (nor finished)."""
    return not started.running() and not started.done()


def fetch_shared(cache: MutableMapping[str, np.ndarray], pending: MutableMapping[str, "Future[np.ndarray]"],
                 soon: Soon, now: Now, wanted: Sequence[str], later: Sequence[str]) -> None:
    """Put each string of ``wanted`` in ``cache`` and leave each string of ``later`` started (in
    ``pending``) or done; ``soon`` starts one string on the helper, ``now`` embeds strings here."""
    missing = [t for t in wanted if t not in cache and t not in pending]
    for text in [*missing[1:], *later]:  # the first missing string is the caller's own: no hand-off for it
        if text not in cache and text not in pending:
            pending[text] = soon([text])
    if missing:
        cache[missing[0]] = now(missing[:1])[0]
    while True:  # the calling thread takes the asked strings the helper has not started, from the back
        queued = [t for t in wanted if t not in cache and t in pending and _queued(pending[t])]
        if not queued:
            break
        text = queued[-1]
        if pending[text].cancel():  # False: the helper took it meanwhile (it is then waited for below)
            del pending[text]
            cache[text] = now([text])[0]
    for text in wanted:
        if text not in cache:
            cache[text] = pending.pop(text).result()[0]
    for text in later:  # those already done (all of them without a helper thread) are read now
        started = pending.get(text)
        if started is not None and started.done() and not started.cancelled():
            cache[text] = pending.pop(text).result()[0]
