"""What travels with a read in progress on this thread: the one state in auger that is not
passed as an argument.

A scan's read goes deep: a format's reader, its decompressing stream, the file system. Two
facts about the read in progress must reach that depth, and the same readers run in Spark's
tasks, where neither applies, so threading them through every reader's signature would burden
every path for two callers:

* the byte budget of a scan read on the driver (:mod:`auger.storage.read_budget`): the
  decompressing streams charge what they produce to it;
* the sink counting the invalid records a reader skips (:func:`auger.formats.skips.recording`),
  which a scan task or driver-side scan reads back to report them to its statement.

Both live in one :class:`ReadScope`, in one ``ContextVar`` owned by this module; a thread (a
Spark task, a driver-side scan) sees only its own. A statement's own state (its diagnostics,
the scans EXPLAIN names, the scans' run-time reports, its text for error messages) is never
here: the statement's context carries it (:mod:`auger.sql.context`) and passes it down.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

__all__ = ["Budget", "ReadScope", "current", "scoped"]


@dataclass
class Budget:
    """Decompressed bytes a read may produce, and what it has produced so far."""

    limit: int
    used: int = 0


@dataclass(frozen=True)
class ReadScope:
    """The read in progress on this thread.

    Attributes:
        budget: the byte budget its streams charge, or None (not bounded).
        skipped: file -> (invalid records skipped, their first line numbers), or None when
            nobody counts them.
    """

    budget: Budget | None = None
    skipped: dict[str, tuple[int, list[int]]] | None = None


_NONE = ReadScope()
_SCOPE: ContextVar[ReadScope] = ContextVar("auger_read_scope", default=_NONE)


def current() -> ReadScope:
    """The read in progress on this thread (all None outside any)."""
    return _SCOPE.get()


@contextmanager
def scoped(**changes: Any) -> Iterator[ReadScope]:
    """The current read scope with ``changes`` (``budget=``, ``skipped=``) for the block; the
    others stay as they were."""
    token = _SCOPE.set(dataclasses.replace(_SCOPE.get(), **changes))
    try:
        yield _SCOPE.get()
    finally:
        _SCOPE.reset(token)
