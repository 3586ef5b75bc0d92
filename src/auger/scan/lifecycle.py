"""The reader lifecycle: format readers that write rows through a result set loader.

The plugin API it serves is described in ``docs/plugins.md``.

A :class:`FormatReader` is opened with a :class:`SchemaNegotiator`, which tells it the file, the
projection and the input schema (typed where the scan knows types) and builds its
``ResultSetLoader``. The reader may declare its schema up front (``set_table_schema``: an *early*
schema, as Parquet can) or add columns as it finds them (a *late* schema, as JSON does). Each
``next()`` writes one batch; the :class:`ReaderLifecycle` harvests it and runs it through the
scan's tracker, adding implicit, partition and missing columns and ordering the output.

The reader never sees any of that: it writes every column it finds (unprojected ones go to dummy
writers), checks ``is_full()`` and returns. Row limits, the vector-size overflow row, a pushed-down
``LIMIT`` and a reader that declares a schema but has no rows are all the lifecycle's business:

* a reader whose ``open`` returns False (nothing at all, not even a schema) is skipped;
* a reader that gives a schema but no rows yields one 0-row batch on its first ``next`` (the scan
  then knows its schema: an *empty* result, not a *null* one);
* a row that overflowed into the look-ahead batch is delivered even when the reader reported
  end-of-file in the same call;
* once a total row limit is reached no further batch is started and no further reader opened.

Errors raised by a reader in ``open``, ``next`` or ``close`` come out as ``UserError``s carrying
the reader's own context lines, the file and the scan's context.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

import pyarrow as pa

from auger.errors import ErrorKind, UserError
from auger.projection import RequestedTuple, quoted
from auger.resultset import DEFAULT_VECTOR_SIZE_LIMIT, LoaderOptions, ResultSetLoader
from auger.scan.conflicts import ErrorContext
from auger.scan.file_scan import ArrowFileScan, FrozenScan
from auger.scan.filter import PROJECT_ALL
from auger.scan.implicit import FileDescrip, ImplicitColumns
from auger.scan.schema import ScanColumn, ScanTuple
from auger.scan.tracker import ProjectionType, ScanSchemaTracker
from auger.types import ColumnMetadata, MinorType, TupleSchema
from auger.types.schema_text import parse_schema

__all__ = [
    "FormatReader",
    "ReaderLifecycle",
    "ScanLifecycle",
    "SchemaNegotiator",
    "loader_projection",
    "quote_name",
]

log = logging.getLogger(__name__)

T = TypeVar("T")


class FormatReader(ABC):
    """One reader per file: ``open`` it, call ``next`` until it returns False, ``close`` it.

    Example (a reader of one column, two rows)::

        class TwoRows(FormatReader):
            def open(self, negotiator):
                negotiator.set_table_schema("a INT", complete=True)
                self.rows = negotiator.build().writer()
                self.done = False
                return True

            def next(self):
                if self.done:
                    return False
                self.rows.add_row(1)
                self.rows.add_row(2)
                self.done = True
                return True
    """

    @abstractmethod
    def open(self, negotiator: SchemaNegotiator) -> bool:
        """Prepare to read; return False if the file has nothing (not even a schema)."""

    @abstractmethod
    def next(self) -> bool:
        """Write one batch through the loader (stop when ``is_full()``); return False once the
        file is exhausted (the rows written by this call still count)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources; called once, whatever happened."""


def quote_name(name: str) -> str:
    """A column name as a projection path element (backticks where a dot or bracket would be
    read as structure)."""
    if any(ch in name for ch in ".[]`* ") or name != name.strip():
        return quoted(name)
    return name


def _paths(col: ScanColumn, prefix: str) -> list[str]:
    path = prefix + quote_name(col.name)
    if col.members is not None and not col.members.open:
        return [p for m in col.members.columns() for p in _paths(m, path + ".")] or [path]
    proj = col.projection
    members = proj.members if proj is not None else None
    if col.is_dynamic and members is not None and not members.is_project_all():
        return [path + "." + quote_name(m.name) for m in members] or [path]
    return [path]


def loader_projection(tracker: ScanSchemaTracker) -> list[str] | None:
    """The projection, as column paths, for a reader's result set loader (``None``: all)."""
    if tracker.projection_type is ProjectionType.NONE:
        return []
    schema: ScanTuple = tracker.internal_schema()
    if tracker.projection_filter() is PROJECT_ALL or schema.open:
        return None
    return [p for sc in schema.columns() if not sc.is_implicit for p in _paths(sc, "")]


class SchemaNegotiator:
    """What a reader learns about its scan, and how it declares its schema.

    Attributes:
        file: the file being read (``fqn``, ``filename``, ``path``...).
        split: the planned split (byte range, row groups) when the scan has one, else ``None``.
        options: the session options a reader may honour (``store.json.*``...).
        projection: the project list, parsed (``projection.get("a")``).
        input_schema: the columns the scan wants from the reader, typed where known (LATE where
            the reader chooses the type).
    """

    def __init__(
        self,
        lifecycle: ScanLifecycle,
        file: FileDescrip,
        context: ErrorContext,
        limit: int | None,
        *,
        split: Any = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self._lifecycle = lifecycle
        self.file = file
        self.split = split
        self.options: Mapping[str, Any] = options or {}
        tracker = lifecycle.tracker
        self.projection: RequestedTuple = tracker.projection()
        self.input_schema: TupleSchema = tracker.reader_input_schema()
        self._context = context
        self._limit = limit
        self.table_schema: TupleSchema | None = None
        self.schema_complete = False
        self.loader: ResultSetLoader | None = None

    @property
    def error_context(self) -> ErrorContext:
        """The context every error about this file carries (file, then scan lines)."""
        return self._context

    def add_context(self, line: str) -> None:
        """Add a line (``"Line: 12"``, ``"Reader: regex"``) to every error about this file."""
        self._context.lines.insert(0, line)

    def is_projected(self, name: str) -> bool:
        """Does the scan want column ``name``? (Readers may skip work for others.)"""
        return self._lifecycle.tracker.projection_filter().is_projected(name)

    def set_table_schema(self, schema: TupleSchema | str, complete: bool = False) -> None:
        """Declare the columns the reader will write, before reading (an early schema).

        ``complete`` says the reader will add no further columns.
        """
        self.table_schema = parse_schema(schema) if isinstance(schema, str) else schema
        self.schema_complete = complete

    def build(self) -> ResultSetLoader:
        """The reader's result set loader (built once; later calls return the same one)."""
        if self.loader is None:
            lc = self._lifecycle
            self.loader = ResultSetLoader(
                LoaderOptions(
                    row_limit=lc.row_limit,
                    vector_size_limit=lc.vector_size_limit,
                    schema=self.table_schema,
                    projection=loader_projection(lc.tracker),
                    limit=self._limit,
                )
            )
        return self.loader


class ReaderLifecycle:
    """One reader of a scan, driven step by step (``open``, ``next``, ``close``).

    ``next()`` returns the next *output* batch (scan schema, implicit and missing columns
    included) or ``None`` once the reader is done. Most callers use
    :meth:`ScanLifecycle.read_file`, which runs the whole sequence.
    """

    def __init__(
        self,
        scan: ScanLifecycle,
        file: FileDescrip,
        reader: FormatReader,
        *,
        split: Any = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        self.scan = scan
        self.file = file
        self.reader = reader
        self.context = ErrorContext(f"File: {file.fqn}", parent=scan.context)
        remaining = None if scan.limit is None else max(0, scan.limit - scan.rows_out)
        self.negotiator = SchemaNegotiator(
            scan, file, self.context, remaining, split=split, options=options
        )
        self.batches = 0  # output batches delivered
        self._opened = False
        self._eof = False  # the reader said it has no more
        self._done = False  # nothing more will come out
        self._closed = False

    @property
    def loader(self) -> ResultSetLoader | None:
        return self.negotiator.loader

    def open(self) -> bool:
        """Open the reader; False if it has nothing. An early schema is applied here, so a type
        conflict with the scan surfaces now."""
        neg = self.negotiator
        ok = _guard(self.context, "open", lambda: self.reader.open(neg))
        self._opened = bool(ok)
        if not ok:
            self._done = True
            return False
        if neg.table_schema is not None:
            self.scan.tracker.apply_early_reader_schema(
                self.scan.converted(neg.table_schema), self.context
            )
        neg.build()
        return True

    def next(self) -> pa.RecordBatch | None:
        """The next output batch with rows; or, on the first call, a 0-row batch if the reader
        gave a schema but no rows; ``None`` when the reader is done."""
        loader = self.loader
        if self._done or loader is None:
            return None
        while True:
            if self._eof and not loader.has_look_ahead():
                self._done = True
                break
            if not loader.start_batch():
                self._done = True  # the scan's LIMIT is reached
                break
            if not self._eof:
                self._eof = not _guard(self.context, "next", self.reader.next)
            raw = loader.harvest()
            first = self.batches == 0
            if raw.num_rows > 0 or (first and self._has_schema(raw)):
                return self._deliver(raw)
            if loader.at_limit():
                self._done = True
                break
        return None

    def _has_schema(self, raw: pa.RecordBatch) -> bool:
        neg = self.negotiator
        if neg.table_schema is not None or raw.num_columns > 0:
            return True
        return self.loader is not None and self.loader.writer().size() > 0

    def _deliver(self, raw: pa.RecordBatch) -> pa.RecordBatch:
        out = self.scan.file_scan.scan_batch(self.file, raw, self.context)
        if self.loader is not None:
            self.scan.note_dropped(self.loader.writer().schema().names(), out, self.context)
        self.batches += 1
        self.scan.rows_out += out.num_rows
        if self.loader is not None and self.loader.at_limit():
            self._done = True
        return out

    def close(self, failed: bool = False) -> None:
        """Close the reader (once). A close failure after an earlier error is only logged."""
        if self._closed:
            return
        self._closed = True
        try:
            _guard(self.context, "close", self.reader.close)
        except UserError:
            if not failed:
                raise
            log.warning("reader close failed after an earlier error", exc_info=True)
        finally:
            if self.loader is not None:
                self.loader.close()


class ScanLifecycle:
    """Runs readers, one per file, and yields the scan's output batches.

    Args:
        tracker: the scan's tracker (implicit columns already resolved).
        implicit: the resolved implicit columns.
        row_limit: rows per batch.
        limit: total rows for the whole scan (``LIMIT`` push-down), or ``None``.
        null_type: the type for missing columns nobody typed (default nullable INT).
        error_context: scan-level context lines.
        convert: columns whose reader values are converted to the given type (a provided
            schema's promise); other type differences are conflicts.
        vector_size_limit: the loader's per-vector byte limit (overflow threshold).
    """

    def __init__(
        self,
        tracker: ScanSchemaTracker,
        implicit: ImplicitColumns | None = None,
        *,
        row_limit: int = 4096,
        limit: int | None = None,
        null_type: ColumnMetadata | MinorType | str | None = None,
        error_context: ErrorContext | None = None,
        convert: TupleSchema | None = None,
        vector_size_limit: int = DEFAULT_VECTOR_SIZE_LIMIT,
    ) -> None:
        self.tracker = tracker
        self.row_limit = row_limit
        self.vector_size_limit = vector_size_limit
        self.limit = limit
        self.rows_out = 0
        self.readers_opened = 0
        self.context = error_context or tracker.error_context()
        self.convert = convert
        # A wildcard whose schema is fixed by the first reader: new columns are dropped, and the
        # caller hears about it.
        self.warn_drops = tracker.projection_type is ProjectionType.ALL and not (
            tracker.allow_schema_change
        )
        self.warnings: list[str] = []
        self._dropped: set[str] = set()
        #: turns a harvested loader batch into an output batch (a planned scan swaps in its
        #: :class:`FrozenScan`)
        # Loader batches are converted only to the columns of ``convert`` (a provided or planned
        # schema the scan promises), so that two readers that disagree on a type are a conflict
        # rather than a silent cast.
        self.file_scan: ArrowFileScan | FrozenScan = ArrowFileScan(
            tracker,
            implicit,
            null_type=null_type,
            error_context=self.context,
            convert=convert if convert is not None else TupleSchema(),
        )

    def at_limit(self) -> bool:
        """Has the scan delivered its ``LIMIT``? (A limit of 0 still opens the first reader, so
        that the scan knows its schema.)"""
        if self.limit is None:
            return False
        return self.rows_out >= self.limit and (self.readers_opened > 0 or self.limit > 0)

    def output_schema(self) -> TupleSchema | None:
        """The scan's output schema once resolved, else ``None`` (nothing known yet)."""
        return self.tracker.output_schema() if self.tracker.is_resolved() else None

    def converted(self, schema: Iterable[ColumnMetadata]) -> TupleSchema:
        """A reader's declared schema as the scan will see it after conversion."""
        if self.convert is None:
            return TupleSchema(schema)
        out = TupleSchema()
        for col in schema:
            target = self.convert.column(col.name)
            keep = target is None or target.is_map or target.is_dynamic
            out.add(col if keep else target.renamed(col.name))  # type: ignore[union-attr]
        return out

    def reader(
        self,
        file: FileDescrip,
        reader: FormatReader,
        *,
        split: Any = None,
        options: Mapping[str, Any] | None = None,
    ) -> ReaderLifecycle:
        """A step-by-step lifecycle for one reader (open / next / close)."""
        self.readers_opened += 1
        return ReaderLifecycle(self, file, reader, split=split, options=options)

    def read_file(
        self,
        file: FileDescrip,
        reader: FormatReader,
        *,
        split: Any = None,
        options: Mapping[str, Any] | None = None,
        keep_empty: bool = False,
    ) -> Iterator[pa.RecordBatch]:
        """Open, drain and close one reader, yielding its output batches.

        Args:
            keep_empty: also yield the 0-row batch of a reader that has a schema but no rows.
        """
        if self.at_limit():
            return
        rl = self.reader(file, reader, split=split, options=options)
        failed = False
        try:
            if not rl.open():
                return
            while (out := rl.next()) is not None:
                if out.num_rows or keep_empty:
                    yield out
        except BaseException:
            failed = True
            raise
        finally:
            rl.close(failed)

    def note_dropped(self, written: Iterable[str], out: pa.RecordBatch, ctx: ErrorContext) -> None:
        """Record (once per column) the reader columns a committed wildcard schema dropped:
        those the reader wrote that are not in the output batch."""
        if not self.warn_drops:
            return
        kept = {n.lower() for n in out.schema.names}
        self.drop_columns([n for n in written if n.lower() not in kept], ctx)

    def drop_columns(self, names: Iterable[str], ctx: ErrorContext) -> None:
        """Warn about columns left out because the schema was committed by the first batch."""
        for name in names:
            if name.lower() in self._dropped:
                continue
            self._dropped.add(name.lower())
            file = ctx.lines[0] if ctx.lines else ""
            text = (
                f"Column `{name}` is not in the scan schema fixed by the first batch; dropped"
                + (f" ({file})" if file else "")
            )
            log.warning(text)
            self.warnings.append(text)


def _guard(ctx: ErrorContext, step: str, fn: Callable[[], T]) -> T:
    """Call a reader method; any failure becomes a UserError with the file's context."""
    try:
        return fn()
    except UserError as e:
        ctx.add_context(e)
        raise
    except Exception as e:
        err = UserError(ErrorKind.DATA_READ, f"Reader {step} failed: {e}")
        raise ctx.add_context(err) from e
