"""``RowSetLoader``: the row-level writer readers hold (Drill's ``RowSetLoader``).

It is the tuple writer of the row, plus the row protocol: ``start()`` a row, write its columns,
``save()`` it, ask ``is_full()``. A row that is started but never saved is discarded, so a reader
can reject a row halfway (or at the end of a batch) by simply not saving it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from auger.resultset.exceptions import LoaderStateError
from auger.resultset.projection import ProjectionSet
from auger.resultset.writers.base import Index
from auger.resultset.writers.tuple import TupleWriter
from auger.types import ColumnMetadata, DataMode, MinorType

if TYPE_CHECKING:
    from auger.resultset.loader import ResultSetLoader

__all__ = ["RowSetLoader"]


class RowSetLoader(TupleWriter):
    """Writes rows into the loader's current batch.

    Example::

        rows = loader.writer()
        rows.start()
        rows.scalar("a").set_int(1)
        rows.save()
        rows.add_row(2, "two")
    """

    __slots__ = ("_active", "_budget", "_loader", "_open", "_save_limit", "_setters")

    def __init__(self, loader: ResultSetLoader, idx: Index, proj: ProjectionSet) -> None:
        self._loader = loader
        self._active = False
        self._open = False
        self._save_limit = 0
        self._budget = loader._budget
        self._setters: list[Callable[[Any], None]] = []
        super().__init__(ColumnMetadata("", MinorType.MAP, DataMode.REQUIRED), idx, loader, proj)

    def loader(self) -> ResultSetLoader:
        return self._loader

    def _columns_changed(self) -> None:
        self._setters = [c.set for c in self._columns]

    # ----- row protocol
    def start(self) -> bool:
        """Begin a row. Returns False, writing nothing, when the batch is full.

        Starting again without ``save()`` discards the row in progress.
        """
        if not self._active:
            raise self._loader._state_error("start a row")
        if self._open:
            self._truncate(self._idx.pos)
            self._open = False
        if self.is_full():
            return False
        self._open = True
        return True

    def save(self) -> None:
        """Keep the row just written and move to the next one."""
        if not self._active:
            raise self._loader._state_error("save a row")
        if self._idx.pos >= self._save_limit:
            raise LoaderStateError(
                "The batch is full: check is_full() after each save() and call harvest() "
                "(then start_batch()) before writing more rows"
            )
        if self._budget is not None:
            self._loader._check_budget()
        self._idx.pos += 1
        self._open = False

    def is_full(self) -> bool:
        """True when no further row fits: row limit reached, or a vector overflowed."""
        loader = self._loader
        return loader._overflowed or loader._bulk_full or self._idx.pos >= self._save_limit

    def row_count(self) -> int:
        """Rows saved in the batch being written (not counting an overflow row)."""
        loader = self._loader
        return loader._main_rows if loader._overflowed else self._idx.pos

    def add_row(self, *values: Any) -> None:
        """Write one row from values in column order (fewer values leave the rest unset).

        Maps take a dict (or a sequence in member order), arrays a list. Raises
        ``LoaderStateError`` when the batch is already full.
        """
        if not self.start():
            raise LoaderStateError(
                "The batch is full: call harvest() and start_batch() before add_row()"
            )
        setters = self._setters
        if len(values) > len(setters):
            raise LoaderStateError(
                f"add_row() got {len(values)} values for {len(setters)} columns "
                f"({', '.join(c.name for c in self._columns)})"
            )
        for setter, value in zip(setters, values):
            setter(value)
        self.save()

    # ----- bulk
    def append_arrow(self, batch: pa.RecordBatch | pa.Table) -> int:
        """Append an Arrow batch under the same limits as row writes.

        Columns are matched by name (any case); columns the loader lacks are added. Returns how
        many rows went into the current batch; the rest wait in the loader and fill the next
        batches as they are started (``loader.has_look_ahead()`` tells whether any remain).
        """
        # deferred: keeps start-up light (import auger, the CLI, Spark's workers)
        from auger.resultset.appender import append_arrow

        return append_arrow(self, batch)
