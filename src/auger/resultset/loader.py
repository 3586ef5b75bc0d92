"""``ResultSetLoader``: batches of rows bounded in rows and bytes, with the overflow row.

The loader owns the batch lifecycle (``start_batch`` → rows → ``harvest``) and the one tricky
event, *overflow*: a value that does not fit its vector while row ``n`` is being written. Then
every column sets aside positions ``< n`` as the batch to harvest and keeps what it already holds
for row ``n`` as row 0 of a look-ahead batch; the reader carries on writing the row as if nothing
happened (``tests/resultset/test_overflow.py`` walks through the cases). Columns added after that
point belong to the look-ahead batch only: they are left out of the harvested batch and appear,
as a schema change, in the next one.

Arrow batches take the same limits two ways: ``writer().append_arrow`` copies them into the
writers (to mix with rows written one by one), and :meth:`ResultSetLoader.arrow_batches` cuts a
batch that needs no writer into zero-copy slices, each within the limits.

State machine::

    NEW --start_batch--> ACTIVE --harvest--> HARVESTED --start_batch--> ACTIVE ...
    any --close--> CLOSED
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from typing import Any

import pyarrow as pa

from auger.resultset.bulk import rows_within_limits
from auger.resultset.exceptions import LoaderStateError, oversize_error
from auger.resultset.loader_options import LoaderOptions, clamp_row_limit
from auger.resultset.projection import ProjectionSet
from auger.resultset.rowset import RowSetLoader
from auger.resultset.writers.base import ColumnWriter, Index
from auger.resultset.writers.factory import make_writer
from auger.types import ColumnMetadata, DataMode, TupleSchema

__all__ = ["ResultSetLoader"]


class _State(enum.Enum):
    NEW = "before the first batch"
    ACTIVE = "while a batch is being written"
    HARVESTED = "after harvest() and before start_batch()"
    CLOSED = "after close()"


class ResultSetLoader:
    """Builds a stream of ``pyarrow.RecordBatch``es through typed column writers.

    Args:
        options: limits, starting schema, projection (``LoaderOptions``); keyword arguments
            build one when ``options`` is omitted.
    """

    def __init__(self, options: LoaderOptions | None = None, **kwargs: Any) -> None:
        if options is None:
            options = LoaderOptions(**kwargs)
        elif kwargs:
            raise TypeError("pass either a LoaderOptions or keyword options, not both")
        self._options = options
        self.vector_limit: int = options.vector_size_limit
        self._budget: int | None = options.batch_size_limit
        self._row_limit = options.row_limit
        self._limit = options.limit
        self._projection = ProjectionSet.parse(options.projection)
        self._state = _State.NEW
        self._row = Index(0)
        self._overflowed = False
        self._bulk_full = False
        self._pending: pa.RecordBatch | None = None
        self._main_rows = 0
        self._version = 0
        self._reported_version = 0
        self._late: list[ColumnWriter] = []
        self._harvested_rows = 0
        self._harvested_batches = 0
        self._writer = RowSetLoader(self, self._row, self._projection)
        for column in options.schema_columns():
            self._writer.add_column(column)
        self._reported_version = self._version

    # ----- hooks used by the writers (LoaderHooks)
    def overflow(self, writer: ColumnWriter | None) -> None:
        """A write does not fit: move the row in progress to the look-ahead batch."""
        self._overflow(writer, self.vector_limit)

    def _overflow(self, writer: ColumnWriter | None, limit: int) -> None:
        pos = self._row.pos
        name = writer.name if writer is not None else "(whole row)"
        if self._overflowed or self._bulk_full:
            if pos == 0 and self._overflowed:
                raise oversize_error(limit, name)
            raise LoaderStateError(
                "The batch is full: check is_full() after each save() and call harvest() "
                "before writing more rows"
            )
        if pos == 0:
            raise oversize_error(limit, name)
        self._overflowed = True
        self._main_rows = pos
        for column in self._writer._harvest_members():
            column._split(pos)
        self._row.pos = 0
        self._writer._save_limit = 1

    def column_added(self, writer: ColumnWriter) -> None:
        self._version += 1
        if self._overflowed:
            writer._late = True
            self._late.append(writer)
        else:
            self._reported_version = self._version

    def make_writer(
        self, meta: ColumnMetadata, idx: Index, proj: ProjectionSet, projected: bool
    ) -> ColumnWriter:
        return make_writer(meta, idx, self, proj, projected)

    def rows_in_batch(self) -> int:
        return self._row.pos

    def _check_budget(self) -> None:
        """At ``save()``: if the batch is over its byte budget, the row just written overflows."""
        assert self._budget is not None
        used = sum(c._nbytes() for c in self._writer._columns)
        if used > self._budget:
            self._overflow(None, self._budget)

    def _state_error(self, action: str) -> LoaderStateError:
        hint = {
            _State.NEW: "call start_batch() first",
            _State.HARVESTED: "call start_batch() to begin the next batch",
            _State.CLOSED: "the loader is closed",
            _State.ACTIVE: "",
        }[self._state]
        return LoaderStateError(f"Cannot {action} {self._state.value}: {hint}")

    # ----- public API
    def writer(self) -> RowSetLoader:
        """The row writer (the same object for the loader's whole life)."""
        if self._state is _State.CLOSED:
            raise self._state_error("get the writer")
        return self._writer

    def start_batch(self) -> bool:
        """Begin a batch; it starts with the overflow row or pending bulk rows, if any.

        Returns False (starting nothing) once a total ``limit`` has been reached.
        """
        if self._state in (_State.ACTIVE, _State.CLOSED):
            raise self._state_error("start a batch")
        if self.at_limit() and self._state is not _State.NEW:
            return False
        batch_limit = self._row_limit
        if self._limit is not None:
            batch_limit = min(batch_limit, max(0, self._limit - self._harvested_rows))
        self._state = _State.ACTIVE
        self._writer._active = True
        self._writer._save_limit = batch_limit
        self._bulk_full = False
        self._reported_version = self._version
        pending, self._pending = self._pending, None
        if pending is not None:
            self._writer.append_arrow(pending)
        return True

    def harvest(self) -> pa.RecordBatch:
        """Finish the batch and return it; an overflow row stays behind for the next batch."""
        if self._state is not _State.ACTIVE:
            raise self._state_error("harvest")
        rows = self._writer
        if rows._open:
            rows._truncate(self._row.pos)
            rows._open = False
        held = self._overflowed
        n = self._main_rows if held else self._row.pos
        arrays: list[pa.Array] = []
        fields: list[pa.Field] = []
        for column in rows._harvest_members():
            if held and column._late:
                continue
            arr = column._harvest(n, held)
            arrays.append(arr)
            nullable = column.metadata.mode is DataMode.OPTIONAL
            fields.append(pa.field(column.name, arr.type, nullable=nullable))
        if held:
            for writer in self._late:
                for node in writer._late_writers():
                    node._late = False
            self._late = []
            self._overflowed = False
            self._main_rows = 0
        else:
            self._row.pos = 0
        self._state = _State.HARVESTED
        rows._active = False
        self._harvested_rows += n
        if n:
            self._harvested_batches += 1
        return _record_batch(arrays, fields, n)

    def arrow_batches(self, batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
        """A whole Arrow batch as finished batches, without copying a value.

        Each is a zero-copy slice of ``batch`` within the row limit, with no buffer over the
        vector size limit and all within the batch budget; together they stop at the total
        ``limit``. Each counts as a harvested batch. This is the bulk path for batches no writer
        needs to touch (a scan's reader batches, already in their output types); rows written
        through the writers go through ``start_batch`` and ``harvest``. A single row larger
        than the limits goes out alone: its values are in memory already, and no copy could
        make it smaller.
        """
        if self._state in (_State.ACTIVE, _State.CLOSED):
            raise self._state_error("hand over a whole Arrow batch")
        if self.has_look_ahead():
            raise LoaderStateError(
                "Rows of an earlier batch are still waiting: start_batch() and harvest() until "
                "has_look_ahead() is False before handing over a whole Arrow batch"
            )
        start, total = 0, batch.num_rows
        while start < total:
            rows = self._row_limit
            if self._limit is not None:
                rows = min(rows, self._limit - self._harvested_rows)
                if rows <= 0:
                    return
            rest = batch.slice(start) if start else batch
            n = max(1, rows_within_limits(rest, rows, self.vector_limit, self._budget))
            start += n
            self._harvested_rows += n
            self._harvested_batches += 1
            self._state = _State.HARVESTED
            yield rest if n == rest.num_rows else rest.slice(0, n)

    def close(self) -> None:
        """Release every buffer, including an unharvested overflow row. Closing twice is fine."""
        if self._state is _State.CLOSED:
            return
        self._state = _State.CLOSED
        self._writer._active = False
        self._pending = None
        self._overflowed = False
        self._bulk_full = False
        self._row.pos = 0
        for column in self._writer._columns:
            column._truncate(0)
            if hasattr(column, "_held"):
                column._held = None

    # ----- introspection
    @property
    def schema_version(self) -> int:
        """Counts columns (and map members) added; columns added during an overflow row count
        from the next batch on."""
        return self._reported_version

    @property
    def options(self) -> LoaderOptions:
        return self._options

    @property
    def target_row_count(self) -> int:
        return self._row_limit

    @property
    def target_vector_size(self) -> int:
        return self.vector_limit

    def set_target_row_count(self, count: int) -> None:
        """Change the row limit from the next batch on (clamped into ``[1, 65536]``)."""
        self._row_limit = clamp_row_limit(count)

    def row_count(self) -> int:
        return self._writer.row_count()

    @property
    def batch_count(self) -> int:
        """Batches that received at least one row (including the one being written)."""
        current = 1 if self._state is _State.ACTIVE and self._writer.row_count() > 0 else 0
        return self._harvested_batches + current

    @property
    def total_row_count(self) -> int:
        """Rows saved so far, harvested or not, including an overflow row."""
        pending = self._row.pos
        if self._overflowed:
            pending += self._main_rows
        if self._state is not _State.ACTIVE and not self._overflowed:
            pending = self._row.pos
        return self._harvested_rows + pending

    def has_look_ahead(self) -> bool:
        """True when rows wait for the next batch (an overflow row, or pending bulk rows)."""
        if self._pending is not None:
            return True
        if self._state is _State.HARVESTED:
            return self._row.pos > 0
        return self._overflowed

    def at_limit(self) -> bool:
        """True once a total ``limit`` of rows has been delivered."""
        return self._limit is not None and self._harvested_rows >= self._limit

    def is_projection_empty(self) -> bool:
        """True when no column the reader writes (or could write) is projected."""
        if self._projection.is_empty():
            return True
        return not any(c.is_projected() for c in self._writer._columns) and (
            not self._projection.is_all()
        )

    def output_schema(self) -> TupleSchema:
        """The projected columns, as the next harvested batch will have them."""
        return TupleSchema(c.metadata for c in self._writer._harvest_members())

    def __enter__(self) -> ResultSetLoader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _record_batch(arrays: list[pa.Array], fields: list[pa.Field], n: int) -> pa.RecordBatch:
    if not arrays:
        empty = pa.Array.from_buffers(pa.struct([]), n, [None], children=[])
        return pa.RecordBatch.from_struct_array(empty)
    return pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
