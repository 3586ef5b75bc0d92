"""How many bytes a scan read in the server process may produce, estimated and then enforced.

The server reads a small scan itself (see ``auger.spark.local_scan``) when its files are small.
What counts is what the files hold, not what they weigh on disk: a megabyte of gzip may hold a
gigabyte of text. So the choice goes by :func:`auger.storage.uncompressed.uncompressed_estimate`
(gzip's trailer, a zip entry's header, a generous ratio for the other codecs), and since a file
may lie about itself
(a gzip of several members records the last one's size only), the decompressing streams charge
what they produce to the thread's :func:`budget`: past it, :class:`BudgetExceeded` ends the read
and the scan goes to Spark's tasks instead. The budget travels with the read in progress
(:mod:`auger.storage.read_scope`), not through every reader's arguments.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from auger.storage.read_scope import Budget, current, scoped

__all__ = ["BudgetExceeded", "active", "budget", "charge", "is_compressed"]

_CODEC_SUFFIXES = (".gz", ".bz2", ".zst", ".zstd", ".deflate", ".snappy", ".lz4", ".zip")


class BudgetExceeded(BaseException):
    """The read produced more bytes than its budget allows.

    A ``BaseException``, like ``KeyboardInterrupt``: the readers turn the ``Exception``s of a
    file into DATA_READ errors naming it, and this is no fault of the file's; it must reach the
    code that set the budget unchanged.
    """


@contextmanager
def budget(limit: int) -> Iterator[None]:
    """Charge the decompressed bytes this thread reads in the block against ``limit``."""
    with scoped(budget=Budget(limit)):
        yield


def active() -> bool:
    """Whether this thread's reads are being charged (a stream may then count its bytes)."""
    return current().budget is not None


def charge(n: int) -> None:
    """Count ``n`` bytes read; raises :class:`BudgetExceeded` past the budget (a no-op when
    none is set, as on Spark's executors)."""
    bound = current().budget
    if bound is None:
        return
    bound.used += n
    if bound.used > bound.limit:
        raise BudgetExceeded(f"read {bound.used:,} bytes, more than {bound.limit:,}")


def is_compressed(path: str) -> bool:
    """Whether the file's name says it is compressed (its bytes then differ from its size)."""
    return path.lower().endswith(_CODEC_SUFFIXES)
