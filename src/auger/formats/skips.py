"""Counted skips of invalid records, reported where a caller can read them.

Drill's ``store.json.reader.skip_invalid_records`` drops malformed records instead of failing
the query; the count must not vanish. A reader reports through :func:`report_skipped`, which

* logs a warning naming the file and the count (the ``auger.formats`` logger),
* adds the count and the records' line numbers to the calling thread's :func:`recording` sink
  (it travels with the read in progress, :mod:`auger.storage.read_scope`), so a scan task can
  tell its statement which records of which file it dropped.

Readers also stamp each batch's schema metadata with ``auger.skipped`` (the count so far in that
file, as decimal text), so a consumer of raw reader batches sees it without any hook.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from auger.storage.read_scope import current, scoped

__all__ = [
    "SKIPPED_KEY",
    "recording",
    "report_skipped",
]

SKIPPED_KEY = b"auger.skipped"

_log = logging.getLogger("auger.formats")

#: The most line numbers a sink keeps per file (the count stays exact).
MAX_LINES = 20


def report_skipped(path: str, count: int, lines: Iterable[int] = ()) -> None:
    """Record that ``count`` invalid records of ``path`` were skipped (no-op for 0);
    ``lines``: their line numbers, where the reader knows them."""
    if count <= 0:
        return
    _log.warning("Skipped %d invalid record(s) in %s", count, path)
    sink = current().skipped
    if sink is not None:
        total, known = sink.get(path, (0, []))
        known = sorted(set(known).union(lines))[:MAX_LINES]
        sink[path] = (total + count, known)


@contextmanager
def recording() -> Iterator[dict[str, tuple[int, list[int]]]]:
    """Collect this thread's skips while the block runs: file -> (records skipped, the first
    :data:`MAX_LINES` of their line numbers). A scan runs in one thread, so each scan task (or
    driver-side scan) sees only its own skips; nested blocks each see theirs."""
    outer = current().skipped
    sink: dict[str, tuple[int, list[int]]] = {}
    try:
        with scoped(skipped=sink):
            yield sink
    finally:
        if outer is not None:  # the enclosing block counts them too
            for path, (count, lines) in sink.items():
                total, known = outer.get(path, (0, []))
                outer[path] = (total + count, sorted(set(known).union(lines))[:MAX_LINES])
