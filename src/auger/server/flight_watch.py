"""Notice at once that the client of a streaming Flight SQL answer went away or cancelled.

A DoGet stream learns that its client is gone only when it next writes, and it writes only
once Spark has produced the next batch: for a long aggregate or a slow partition that is when
the work is done. So while a stream runs, a thread of its own polls the call's state (gRPC's
``IsCancelled``: the client cancelled the call, its deadline passed, or its connection
dropped) and, the moment it turns, runs the stream's ``on_gone`` (cancel the statement's
query, which cancels its Spark job group).

The call's context is valid only while the call lasts, so the polling must stop before the
call ends: the stream stops it when it finishes, and the call's middleware stops it in
``call_completed`` whatever way the stream was left.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["ClientWatch"]

#: Seconds between two looks at the call's state.
POLL_INTERVAL = 0.2


class ClientWatch:
    """Runs ``on_gone`` once when the call of ``context`` is cancelled, until :meth:`stop`."""

    def __init__(
        self,
        context: Any,
        on_gone: Callable[[], object],
        name: str = "auger-flight-watch",
        interval: float = POLL_INTERVAL,
    ) -> None:
        self._context = context
        self._on_gone = on_gone
        self._interval = interval
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> ClientWatch:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop watching, and return only once the call's context is no longer used."""
        self._done.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()

    def _run(self) -> None:
        while not self._done.wait(self._interval):
            if self._context.is_cancelled():
                self._on_gone()
                return
