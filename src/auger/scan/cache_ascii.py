"""Which string columns of a raw-file cache part hold ASCII text alone.

Spark's ``LENGTH`` counts a string's characters one byte at a time, its ``OCTET_LENGTH`` reads
the byte count the string carries; for ASCII text they are the same number. Counting costs: a
``WHERE LENGTH(s) > 1000000`` over 24 values of 8 MB among 300 k small JSON records, read from
the cache, took 0.80 s with ``LENGTH`` and 0.35 s with ``OCTET_LENGTH``. So each part lists, in
its footer metadata (:data:`ASCII_KEY`), its string columns whose values are all ASCII, and
the planner counts bytes where every part of a query's files lists the column
(:mod:`auger.sql.planning.ascii_lengths`).

Pure pyarrow, no Spark: the build tasks that write parts import it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["ASCII_KEY", "AsciiColumns", "ascii_columns"]

#: A part's footer metadata key listing its string columns of ASCII text alone
ASCII_KEY = "auger.ascii"


class AsciiColumns:
    """The string columns of one part whose values are all ASCII so far, as it is written, a
    row group at a time (a column of NULLs alone is ASCII: it has no characters)."""

    def __init__(self, schema: pa.Schema) -> None:
        self._names = [
            f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
        ]

    def add(self, group: pa.Table) -> None:
        """Check a row group's values."""
        self._names = [name for name in self._names if _ascii(group.column(name))]

    def metadata(self) -> dict[str, str]:
        """The footer metadata listing the ASCII columns (empty: none)."""
        return {ASCII_KEY: json.dumps(sorted(self._names))} if self._names else {}


def _ascii(column: pa.ChunkedArray) -> bool:
    if column.null_count == len(column):
        return True
    # NULLs are passed over; a value that is not ASCII makes the whole false
    return pc.all(pc.string_is_ascii(column)).as_py() is not False


def ascii_columns(key_values: Mapping[str, str]) -> frozenset[str]:
    """A part's string columns of ASCII text alone, from its footer metadata (none if absent
    or unreadable)."""
    raw = key_values.get(ASCII_KEY)
    if not raw:
        return frozenset()
    try:
        listed = json.loads(raw)
    except ValueError:
        return frozenset()
    return frozenset(str(n) for n in listed) if isinstance(listed, list) else frozenset()
