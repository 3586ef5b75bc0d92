"""Counted skips of invalid records, reported where a caller can read them.

Drill's ``store.json.reader.skip_invalid_records`` drops malformed records instead of failing
the query; the count must not vanish. A reader reports through :func:`report_skipped`, which

* logs a warning naming the file and the count (the ``auger.formats`` logger),
* adds the count to a process-wide tally (:func:`skipped_records`, :func:`clear_skipped`),
* calls every registered listener (``add_listener``), e.g. a session collecting query warnings.

Readers also stamp each batch's schema metadata with ``auger.skipped`` (the count so far in that
file, as decimal text), so a consumer of raw reader batches sees it without any hook.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

__all__ = [
    "SKIPPED_KEY",
    "add_listener",
    "clear_skipped",
    "remove_listener",
    "report_skipped",
    "skipped_records",
]

SKIPPED_KEY = b"auger.skipped"

_log = logging.getLogger("auger.formats")
_lock = threading.Lock()
_tally: dict[str, int] = {}
_listeners: list[Callable[[str, int], None]] = []


def report_skipped(path: str, count: int) -> None:
    """Record that ``count`` invalid records of ``path`` were skipped (no-op for 0)."""
    if count <= 0:
        return
    _log.warning("Skipped %d invalid record(s) in %s", count, path)
    with _lock:
        _tally[path] = _tally.get(path, 0) + count
        listeners = list(_listeners)
    for fn in listeners:
        fn(path, count)


def skipped_records() -> dict[str, int]:
    """File → records skipped, since the last :func:`clear_skipped` (this process)."""
    with _lock:
        return dict(_tally)


def clear_skipped() -> None:
    with _lock:
        _tally.clear()


def add_listener(fn: Callable[[str, int], None]) -> None:
    with _lock:
        _listeners.append(fn)


def remove_listener(fn: Callable[[str, int], None]) -> None:
    with _lock:
        if fn in _listeners:
            _listeners.remove(fn)
